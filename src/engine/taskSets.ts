// Which tasks a run trains and evaluates on (RunConfig.taskSet). procedural (the default): the
// generator's stream and the fixed suites public/tasks/suite-*.json. mbxp: MBXP's JavaScript
// problems (public/tasks/mbxp/, tasks/mbxp/taskSet.ts), the stream drawn from its train split
// and the evaluation on its validation split (suite name `mbxp`: eval/pass@1/mbxp). The files
// are loaded by whoever starts the session (the CLI reads them, the page's Worker fetches them).
import { fitStatement, PROMPT_SPECIAL_TOKENS } from '../agents/format';
import type { SuiteName, Task } from '../tasks';
import type { TaskSetSplits } from '../tasks/mbxp/taskSet';
import type { RunConfig, TaskSetName } from './types';

export type EvalSuiteName = SuiteName | 'mbxp';
export type Suites = Partial<Record<EvalSuiteName, Task[]>>;

/** What the session may be given: the fixed suites and, for an mbxp run, MBXP's splits. */
export interface TaskSources {
  suites?: Suites | undefined;
  mbxp?: TaskSetSplits | undefined;
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
