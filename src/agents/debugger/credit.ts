// The Debugger's credit. A repair is judged like any program; its reward is the Coder's
// formula (pass fraction + λ·efficiency − format penalty), with efficiency compared against
// the task's other all-passing programs and repairs; the Debugger is paid the improvement,
// the repair's reward minus the original program's, so it earns for what it fixes and
// nothing for copying. A Debugger group is the D repairs of one program.
import { coderGroups, contiguousGroups, groupAdvantages, plannerGroups } from '../../rl/advantages';
import type { ScaleRewards } from '../../rl/config';
import {
  coderRewards,
  type PlannerCredit,
  type ProgramOutcome,
  plannerRewards,
  type RewardParts,
  type RewardWeights,
} from '../../rl/rewards';
import type { RoleCredit, StepCredit } from '../credit';

/**
 * Rewards of the repairs of one task: coderRewards over the task's original programs and its
 * repairs together (so efficiency has one baseline), the repairs' part.
 */
export function repairRewards(
  taskOriginals: readonly ProgramOutcome[],
  repairs: readonly ProgramOutcome[],
  weights: RewardWeights,
): RewardParts[] {
  return coderRewards([...taskOriginals, ...repairs], weights).slice(taskOriginals.length);
}

/** parts(repair) − parts(original), part by part. */
export function improvement(repair: RewardParts, original: RewardParts): RewardParts {
  return {
    passFraction: repair.passFraction - original.passFraction,
    efficiency: repair.efficiency - original.efficiency,
    formatPenalty: repair.formatPenalty - original.formatPenalty,
    total: repair.total - original.total,
  };
}

/**
 * `originals[p]`: the reward of the p-th repaired program; `repairs`: D rewards per program,
 * program-major. Rewards are the improvements; groups the D repairs of each program.
 */
export function debuggerCredit(
  originals: readonly RewardParts[],
  repairs: readonly RewardParts[],
  repairsPerProgram: number,
  scale: ScaleRewards,
): RoleCredit {
  if (repairs.length !== originals.length * repairsPerProgram) {
    throw new Error(
      `debuggerCredit: ${repairs.length} repairs for ${originals.length} programs × D ${repairsPerProgram}`,
    );
  }
  const rewards = repairs.map((parts, i) =>
    improvement(parts, originals[Math.floor(i / repairsPerProgram)]!),
  );
  return {
    rewards,
    advantages: groupAdvantages(
      rewards.map((parts) => parts.total),
      contiguousGroups(rewards.length, repairsPerProgram),
      scale,
    ),
  };
}

/**
 * The step's Coder and Planner credit counting the post-repair outcome (repairCredit
 * `repaired`): the chain keeps the best program the sandbox has judged, so a repaired
 * program's reward becomes the best of its own and its D repairs' rewards; then the Coder's
 * group advantages and the Planner's rewards (means over each plan's M programs) and
 * advantages are computed again.
 */
export function postRepairCredit(
  credit: StepCredit,
  repaired: readonly { programIndex: number; repairs: readonly RewardParts[] }[],
  shape: { tasks: number; plansPerTask: number; programsPerPlan: number },
  scale: ScaleRewards,
  plannerCredit: PlannerCredit = 'mean',
): StepCredit {
  const coderRewardsAfter = [...credit.coder.rewards];
  for (const { programIndex, repairs } of repaired) {
    for (const repair of repairs) {
      const current = coderRewardsAfter[programIndex]!;
      if (repair.total > current.total) coderRewardsAfter[programIndex] = repair;
    }
  }
  const coder: RoleCredit = {
    rewards: coderRewardsAfter,
    advantages: groupAdvantages(
      coderRewardsAfter.map((p) => p.total),
      coderGroups(shape.tasks, shape.plansPerTask, shape.programsPerPlan),
      scale,
    ),
  };
  if (!credit.planner) return { coder, planner: null };
  const planRewards = plannerRewards(coderRewardsAfter, shape.programsPerPlan, plannerCredit);
  return {
    coder,
    planner: {
      rewards: planRewards,
      advantages: groupAdvantages(
        planRewards.map((p) => p.total),
        plannerGroups(shape.tasks, shape.plansPerTask),
        scale,
      ),
    },
  };
}
