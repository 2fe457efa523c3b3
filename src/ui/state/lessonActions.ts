// The classroom lesson's actions: open or close one (URL `lesson`), and start one of its runs
// as a new run over the settings it was opened with (engine/lessons.ts).
import { lessonById, lessonRunConfig } from '../../engine/api';
import { lessonRunName, newRun, reportError, writeLessonToUrl } from '../engineClient';
import { useLabStore } from './labStore';

/** Opens the lesson over the page's current settings (null: closes it). */
export function openLesson(id: string | null): void {
  const lesson = lessonById(id);
  useLabStore.setState((state) => ({
    lesson: lesson ? { id: lesson.id, base: state.config } : null,
  }));
  writeLessonToUrl(lesson ? lesson.id : null);
}

/** Starts the lesson's run `index` from the shipped warm start; the others stay on the charts. */
export async function startLessonRun(index: number): Promise<void> {
  const open = useLabStore.getState().lesson;
  const run = lessonById(open?.id ?? null)?.runs[index];
  if (!open || !run) return;
  const { config, problems } = lessonRunConfig(open.base, run);
  for (const problem of problems) reportError(`Lesson setting ignored: ${problem}`, true);
  useLabStore.setState({ config, configProblems: problems });
  await newRun(config, lessonRunName(run, config));
}
