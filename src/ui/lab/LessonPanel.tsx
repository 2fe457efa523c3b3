// The classroom lesson open on the page (URL `lesson`, engine/lessons.ts): its paragraph and
// one button per run; each starts a new run from the shipped warm start over the settings the
// lesson was opened with, and the earlier runs stay overlaid on the charts.
import { LESSONS, lessonById } from '../../engine/api';
import { lessonRunName } from '../engineClient';
import { useLabStore } from '../state/labStore';
import { openLesson, startLessonRun } from '../state/lessonActions';

/** The lesson chooser at the top of the settings (none open: the lab as it always is). */
export function LessonChooser() {
  const lessonId = useLabStore((s) => s.lesson?.id ?? '');
  return (
    <label className="field lesson-chooser">
      <span className="field-label">Lesson</span>
      <select
        aria-label="Lesson"
        value={lessonId}
        onChange={(event) => openLesson(event.target.value || null)}
      >
        <option value="">(none)</option>
        {LESSONS.map((lesson) => (
          <option key={lesson.id} value={lesson.id}>
            {lesson.title}
          </option>
        ))}
      </select>
    </label>
  );
}

export function LessonPanel() {
  const open = useLabStore((s) => s.lesson);
  const runs = useLabStore((s) => s.runs);
  const activeRunId = useLabStore((s) => s.activeRunId);
  const status = useLabStore((s) => s.status);
  const lesson = lessonById(open?.id ?? null);
  if (!open || !lesson) return null;
  const busy = status !== 'idle';
  const activeName = runs.find((run) => run.id === activeRunId)?.name;
  return (
    <section className="lesson" aria-labelledby="lesson-title" data-testid="lesson">
      <h2 id="lesson-title">Lesson: {lesson.title}</h2>
      <p>{lesson.text}</p>
      <ol className="lesson-runs">
        {lesson.runs.map((run, index) => {
          // Lesson runs never set the seed: the base's names them.
          const name = lessonRunName(run, open.base);
          const started = runs.some((r) => r.name === name);
          return (
            <li key={run.name} data-testid="lesson-run">
              <button
                type="button"
                onClick={() => void startLessonRun(index)}
                disabled={busy}
                title="A new run from the shipped warm start; the other runs stay on the charts"
              >
                {started ? 'Restart' : 'Start'} {index + 1}: {run.name}
              </button>{' '}
              <span className="hint">
                {run.summary}
                {activeName === name ? ' · active: Train / Step drive this one' : ''}
              </span>
            </li>
          );
        })}
      </ol>
      <button type="button" onClick={() => openLesson(null)}>
        Close the lesson
      </button>
    </section>
  );
}
