// Task stream → role examples. Tasks with several strategies (L4: naive and efficient)
// contribute one of them at random, so the warm start sees both and RL has a choice.

import { type RoleExample, roleExample } from '../agents/format';
import { selfPlanExample } from '../agents/selfPlan';
import type { Role } from '../rl/config';
import type { Task } from '../tasks';
import { Rng } from '../tasks/random';
import { taskSignature } from '../tasks/signature';
import type { CharTokenizer } from '../tokenizer';

/**
 * Shares of the Coder's examples that carry an empty plan (plan dropout: so that "no plan" is a
 * prompt it knows when the evaluation asks it) and only the task's signature instead of the
 * statement (so that `coderSees` plan is one too). Absent: every example is the full prompt.
 */
export interface CoderViews {
  planDropout: number;
  signatureOnly: number;
}

/**
 * What a warm start's examples teach: each role its own prompt (`roles`), the single-agent
 * baseline's Coder statement → code with an empty plan (`coder-alone`, single mode's prompt),
 * or the self-plan baseline's one model statement → plan <|code|> program (`self-plan`,
 * agents/selfPlan.ts).
 */
export type ExampleFormat = 'roles' | 'coder-alone' | 'self-plan';

export function taskExampleSource(
  nextTasks: (n: number) => Task[],
  tok: CharTokenizer,
  roles: Role[],
  seed: number,
  options: {
    /** One model for both roles, told apart by a role token. */
    shared?: boolean;
    format?: ExampleFormat;
    /** Only with the `roles` format. */
    coderViews?: CoderViews | undefined;
  } = {},
): (n: number) => RoleExample[] {
  const { shared = false, format = 'roles', coderViews } = options;
  const prng = new Rng(seed);
  return (n) =>
    nextTasks(n).map((task) => {
      const strategy = task.strategies[prng.below(task.strategies.length)]!;
      if (format === 'self-plan')
        return selfPlanExample(tok, { ...task, plan: strategy.plan, code: strategy.code });
      const role = roles[prng.below(roles.length)]!;
      let statement = task.statement;
      let plan = format === 'coder-alone' ? '' : strategy.plan;
      // Drawn only with views, so the procedural warm start's stream is what it always was.
      if (coderViews && role === 'coder') {
        const r = prng.next();
        if (r < coderViews.planDropout) plan = '';
        else if (r < coderViews.planDropout + coderViews.signatureOnly) {
          statement = taskSignature(task);
        }
      }
      return roleExample(tok, role, { statement, plan, code: strategy.code }, shared);
    });
}
