// Which tasks a run trains and evaluates on (RunConfig.taskSet). procedural (the default): the
// generator's stream and the fixed suites public/tasks/suite-*.json. examples: the examples
// world's stream (tasks/examples/, drawn by engine/taskStream.ts) and its suites
// public/tasks/examples/suite-*.json, warm-started from checkpoints/<preset>-examples. mbxp: MBXP's JavaScript
// problems (public/tasks/mbxp/, tasks/mbxp/taskSet.ts), the stream drawn from its train split
// and the evaluation on its validation split (suite name `mbxp`: eval/pass@1/mbxp). The files
// are loaded by whoever starts the session (the CLI reads them, the page's Worker fetches them).
import { fitStatement, PROMPT_SPECIAL_TOKENS } from '../agents/format';
import { EXAMPLES_PLAN_DROPOUT } from '../rl/config';
import type { SuiteName, Task } from '../tasks';
import type { ExamplesSuiteName } from '../tasks/examples/suites';
import type { TaskSetSplits } from '../tasks/mbxp/taskSet';
import type { RunConfig, TaskSetName } from './types';

export type EvalSuiteName = SuiteName | ExamplesSuiteName | 'mbxp';
export type Suites = Partial<Record<EvalSuiteName, Task[]>>;

/** What the session may be given: the fixed suites and, for an mbxp run, MBXP's splits. */
export interface TaskSources {
  suites?: Suites | undefined;
  mbxp?: TaskSetSplits | undefined;
  /** The examples world's suites (examples, examples-length, examples-compose). */
  examples?: Suites | undefined;
}

/** The run's plan dropout: its own, else 0.1 on the examples world and 0 on the others. */
export function planDropoutOf(config: RunConfig): number {
  return config.grpo.planDropout ?? (taskSetOf(config) === 'examples' ? EXAMPLES_PLAN_DROPOUT : 0);
}

/**
 * The folder under public/ whose planner/ and coder/ a new run starts from. Self-plan mode's
 * one model was warm-started on its own format (plan <|code|> program): <folder>-self-plan/coder.
 */
export function warmStartFolder(config: RunConfig): string {
  const world =
    taskSetOf(config) === 'examples'
      ? `checkpoints/${config.preset}-examples`
      : `checkpoints/${config.preset}`;
  return config.grpo.mode === 'self-plan' ? `${world}-self-plan` : world;
}

/** The run's task set (runs saved before the setting existed are procedural). */
export function taskSetOf(config: RunConfig): TaskSetName {
  return config.taskSet ?? 'procedural';
}

export interface RunTasks {
  /** The training stream's list (null: the procedural generator). */
  train: Task[] | null;
  /** The evaluation's suites, by name. */
  suites: Suites;
}

/**
 * The run's training list and evaluation suites. External statements are cut to what the
 * models' context leaves after the longest plan and program (format.ts, fitStatement).
 */
export function runTasks(
  config: RunConfig,
  sources: TaskSources,
  models: { tokenizer: { encode(text: string): number[] }; contextTokens: number },
): RunTasks {
  if (taskSetOf(config) === 'procedural') return { train: null, suites: sources.suites ?? {} };
  if (taskSetOf(config) === 'examples') {
    if (!sources.examples) {
      throw new Error(
        'taskSet examples: its suites (public/tasks/examples/suite-*.json) were not loaded',
      );
    }
    return { train: null, suites: sources.examples };
  }
  const mbxp = sources.mbxp;
  if (!mbxp) {
    throw new Error(
      'taskSet mbxp: the MBXP task set (public/tasks/mbxp/train.json) was not loaded',
    );
  }
  const { maxPlanTokens, maxProgramTokens } = config.grpo;
  const budget = Math.max(
    0,
    models.contextTokens - maxPlanTokens - maxProgramTokens - PROMPT_SPECIAL_TOKENS,
  );
  const fit = (task: Task): Task => {
    const statement = fitStatement(models.tokenizer, task.statement, budget);
    return statement === task.statement ? task : { ...task, statement };
  };
  return { train: mbxp.train.map(fit), suites: { mbxp: mbxp.validation.map(fit) } };
}
