// Collaboration-aware credit for one step (DESIGN.md): Coder rewards per program (pass
// fraction, efficiency compared across all of the task's programs, format penalty), Planner
// rewards from each plan's M programs (their mean, or the best: `plannerCredit`), then group advantages per
// role: a Planner group is the N plans of one task, a Coder group the M programs of one plan.
import {
  coderGroups,
  type GroupAdvantages,
  groupAdvantages,
  plannerGroups,
} from '../rl/advantages';
import type { ScaleRewards } from '../rl/config';
import {
  type PlannerCredit,
  type ProgramOutcome,
  type RewardParts,
  type RewardWeights,
  taskRewards,
} from '../rl/rewards';

export interface RoleCredit {
  /** One reward (with parts) per sample, in the rollout layout. */
  rewards: RewardParts[];
  advantages: GroupAdvantages;
}

export interface StepCredit {
  coder: RoleCredit;
  /** null when there are no plans (single mode). */
  planner: RoleCredit | null;
}

/**
 * `outcomes[t]` holds task t's N·M program outcomes, plan-major. `withPlans` false: single
 * mode (N = 1, no Planner credit). `droppedPlans` (task-major): plans whose programs were
 * written from an empty plan (plan dropout) leave their task's Planner group, each alone in
 * a group of its own, so their advantage is 0: the Coder's work without them is not theirs.
 */
export function assignCredit(
  outcomes: readonly (readonly ProgramOutcome[])[],
  shape: {
    plansPerTask: number;
    programsPerPlan: number;
    withPlans: boolean;
    droppedPlans?: readonly boolean[];
  },
  weights: RewardWeights,
  scale: ScaleRewards,
  plannerCredit: PlannerCredit = 'mean',
): StepCredit {
  const { plansPerTask, programsPerPlan, withPlans } = shape;
  const perTask = outcomes.map((taskOutcomes) =>
    taskRewards(taskOutcomes, programsPerPlan, weights, undefined, plannerCredit),
  );
  const coderRewards = perTask.flatMap((task) => task.coder);
  const coder: RoleCredit = {
    rewards: coderRewards,
    advantages: groupAdvantages(
      coderRewards.map((parts) => parts.total),
      coderGroups(outcomes.length, plansPerTask, programsPerPlan),
      scale,
    ),
  };
  if (!withPlans) return { coder, planner: null };
  const plannerRewards = perTask.flatMap((task) => task.planner);
  return {
    coder,
    planner: {
      rewards: plannerRewards,
      advantages: groupAdvantages(
        plannerRewards.map((parts) => parts.total),
        withoutDropped(plannerGroups(outcomes.length, plansPerTask), shape.droppedPlans),
        scale,
      ),
    },
  };
}

/** The groups with every dropped plan moved to a group of its own. */
function withoutDropped(groups: number[][], dropped: readonly boolean[] | undefined): number[][] {
  if (!dropped?.some(Boolean)) return groups;
  return groups.flatMap((group) => {
    const kept = group.filter((i) => !dropped[i]);
    const alone = group.filter((i) => dropped[i]).map((i) => [i]);
    return kept.length > 0 ? [kept, ...alone] : alone;
  });
}
