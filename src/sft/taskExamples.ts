// Task stream → role examples. Tasks with several strategies (L4: naive and efficient)
// contribute one of them at random, so the warm start sees both and RL has a choice.

import { type RoleExample, roleExample } from '../agents/format';
import type { Role } from '../rl/config';
import type { Task } from '../tasks';
import { Rng } from '../tasks/random';
import type { CharTokenizer } from '../tokenizer';

export function taskExampleSource(
  nextTasks: (n: number) => Task[],
  tok: CharTokenizer,
  roles: Role[],
  seed: number,
  shared = false,
  /** The single-agent baseline's Coder: statement → code with an empty plan (single mode's prompt). */
  withoutPlans = false,
): (n: number) => RoleExample[] {
  const prng = new Rng(seed);
  return (n) =>
    nextTasks(n).map((task) => {
      const strategy = task.strategies[prng.below(task.strategies.length)]!;
      const role = roles[prng.below(roles.length)]!;
      return roleExample(
        tok,
        role,
        { statement: task.statement, plan: withoutPlans ? '' : strategy.plan, code: strategy.code },
        shared,
      );
    });
}
