// What the Coder reads of a task (the `coderSees` setting): the statement, or with `plan` only
// the signature, so that everything else it knows about the task comes through the plan. One
// place, so the rollouts, the evaluation and the inspector show the Coder the same text.
import type { CoderSees } from '../rl/config';
import type { Task } from '../tasks';
import { taskSignature } from '../tasks/signature';

export function coderView<T extends Task>(task: T, sees: CoderSees | undefined): T {
  return sees === 'plan' ? { ...task, statement: taskSignature(task) } : task;
}
