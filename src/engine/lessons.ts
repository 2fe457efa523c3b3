// Classroom lessons as plain data: a lesson is a short text and a few runs, each a change of
// settings over those the lesson was opened with (so a teacher's seed, tasks per step or
// backend carry over to every run).
// The page opens one with `?lesson=<id>` (ui/lab/LessonPanel.tsx) and starts its first run;
// the others start from the lesson's buttons and overlay on the same charts.
import { decodeRunConfig, encodeRunConfig } from './runConfig';
import type { RunConfig } from './types';

export interface LessonRun {
  /** The run's name in the runs table and on the charts. */
  name: string;
  /** What the run is, in a line under its button. */
  summary: string;
  /** The URL settings this run sets over the lesson's base config (read for its sizes). */
  settings(base: RunConfig): Record<string, string>;
}

export interface Lesson {
  id: string;
  title: string;
  /** One paragraph: what to run, what to look at, what the lab measured. */
  text: string;
  runs: readonly LessonRun[];
}

/** CoRe's settings: two models, N plans × M programs per task. */
const core = (taskSet: string) => () => ({ taskset: taskSet, mode: 'core' });

/**
 * Self-plan with CoRe's programs per task: one model samples N·M plan-then-program sequences
 * per task where the pair samples N plans × M programs, so both judge as many programs.
 */
const selfPlan = (taskSet: string) => (base: RunConfig) => ({
  taskset: taskSet,
  mode: 'self-plan',
  n: '1',
  m: String(base.grpo.plansPerTask * base.grpo.programsPerPlan),
});

export const LESSONS: readonly Lesson[] = [
  {
    id: 'plan-help',
    title: 'When does a plan help?',
    text: 'Two models or one? On the examples task set a task is only a signature and a few input/output examples: the steps are hidden, and someone has to work them out. Run 1 trains CoRe: the Planner reads the examples and writes the steps, the Coder writes the program from them, and both learn. Run 2 is the fair control, self-plan: one model writes its own plan and then the program in one sequence, from the same examples, with as many programs per task and the same reward. Train each for about two minutes (Train, then Pause) and compare them on the overlaid charts: the evaluation dots of “Is it learning?”, and in “Does the Planner help?” the same program-writer from its own plan, another task’s plan, the reference plan and no plan. Runs 3 and 4 are the same pair on the procedural world, whose statements spell the steps out, so a plan can only repeat them. What the lab measured over three seeds (docs/EXPERIMENTS.md §7): on the examples world the plan decides everything — a program from the right plan passes, from any other it fails — yet one self-planning model found the right steps a little more often than the Planner, and no model reaches the held-out suites; on the procedural world both one-model runs beat the pair on held-out compositions. Two models are not better by default: watch where writing a plan, not the number of models, makes the difference.',
    runs: [
      {
        name: 'CoRe · examples',
        summary: 'Planner + Coder, the steps hidden behind examples',
        settings: core('examples'),
      },
      {
        name: 'self-plan · examples',
        summary: 'one model: its own plan, then the program (as many programs per task)',
        settings: selfPlan('examples'),
      },
      {
        name: 'CoRe · procedural',
        summary: 'Planner + Coder, statements that spell out the steps',
        settings: core('procedural'),
      },
      {
        name: 'self-plan · procedural',
        summary: 'one model on the same statements',
        settings: selfPlan('procedural'),
      },
    ],
  },
];

export function lessonById(id: string | null): Lesson | null {
  return LESSONS.find((lesson) => lesson.id === id) ?? null;
}

/**
 * The config of a lesson's run: its settings over `base`'s (the settings the lesson was opened
 * with), read as a link is (a value that cannot run is named in `problems`, the rest applies).
 */
export function lessonRunConfig(
  base: RunConfig,
  run: LessonRun,
): { config: RunConfig; problems: string[] } {
  const params = encodeRunConfig(base);
  for (const [key, value] of Object.entries(run.settings(base))) params.set(key, value);
  return decodeRunConfig(params);
}

/**
 * A lesson's link read back (`?lesson=<id>&…`). A link whose task set and mode are one of the
 * lesson's runs is that run already (the page writes the active run's settings beside
 * `lesson`, so a reload stays on it), and the lesson's base is the link without that run's
 * settings; any other link is the base, and the lesson opens on its first run.
 */
export function readLessonLink(
  lesson: Lesson,
  params: URLSearchParams,
): { base: RunConfig; config: RunConfig; problems: string[] } {
  const named = decodeRunConfig(params);
  const run = lesson.runs.find((r) => {
    const set = r.settings(named.config);
    return set.taskset === params.get('taskset') && set.mode === params.get('mode');
  });
  const base = new URLSearchParams(params);
  for (const key of Object.keys((run ?? lesson.runs[0]!).settings(named.config))) {
    base.delete(key);
  }
  const baseConfig = decodeRunConfig(base).config;
  // The link's own problems are the caller's (it decoded the same link).
  if (run) return { base: baseConfig, config: named.config, problems: [] };
  return { base: baseConfig, ...lessonRunConfig(baseConfig, lesson.runs[0]!) };
}
