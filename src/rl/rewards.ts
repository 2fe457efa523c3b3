// Collaboration-aware rewards (DESIGN.md): the Coder is paid for passing tests, for speed
// once every test passes, and loses a little for output with no extractable function; a plan
// is worth the mean Coder reward of the programs written from it.
//
// Efficiency formula (the lab's choice):
//   eff = (baseline + s) / (cost + s), clamped to [0, 1]
// where cost is the program's deterministic QuickJS `work` count, baseline is the lowest cost
// among the task's all-passing programs (across all of its plans) and the reference cost when
// one is given, and s = `efficiencySmoothing` (work units) keeps tiny counts (0, 1, 2 polls)
// from producing large swings. The fastest passing program scores 1, one twice as slow about
// 0.5, an O(n²) program beside an O(n) one close to 0. A ratio is used rather than a rank
// because it is meaningful with a single passing program (compared with the reference) and
// explains itself in the UI ("2× the best cost → 0.5").

import type { RunResult } from '../sandbox/types';

export interface RewardWeights {
  /** Weight of the fraction of tests passed. */
  passFraction: number;
  /** λ: weight of the efficiency score (paid only when every test passes). */
  efficiency: number;
  /** Subtracted when the completion has no extractable function. */
  formatPenalty: number;
  /** s in eff = (baseline + s) / (cost + s), in work units. */
  efficiencySmoothing: number;
}

export const DEFAULT_REWARD_WEIGHTS: Readonly<RewardWeights> = Object.freeze({
  passFraction: 1,
  efficiency: 0.25,
  formatPenalty: 0.5,
  efficiencySmoothing: 1,
});

/** What the reward needs to know about one generated program. */
export interface ProgramOutcome {
  /** The completion held an extractable function (see extractFunction). */
  formatOk: boolean;
  passCount: number;
  total: number;
  /** Measured cost (the sandbox's deterministic `work` count); null when not measured. */
  cost: number | null;
}

/** One sample's reward with its parts, so a page can show where it came from. */
export interface RewardParts {
  /** Fraction of tests passed, in [0, 1] (unweighted). */
  passFraction: number;
  /** Efficiency score in [0, 1] (unweighted); 0 unless every test passed. */
  efficiency: number;
  /** The amount subtracted for bad format (weighted): 0 or `weights.formatPenalty`. */
  formatPenalty: number;
  /** passFraction·w.passFraction + efficiency·w.efficiency − formatPenalty. */
  total: number;
}

export function programOutcome(run: RunResult | null, formatOk: boolean): ProgramOutcome {
  if (!run || !formatOk) return { formatOk, passCount: 0, total: run?.total ?? 0, cost: null };
  return { formatOk, passCount: run.passCount, total: run.total, cost: run.cost.work };
}

export function passesAll(outcome: ProgramOutcome): boolean {
  return outcome.formatOk && outcome.total > 0 && outcome.passCount === outcome.total;
}

/**
 * Efficiency of each program of one task, compared with the task's other all-passing programs
 * (and `referenceCost` when given). 0 for programs that do not pass every test or were not
 * measured.
 */
export function efficiencyScores(
  outcomes: readonly ProgramOutcome[],
  smoothing: number = DEFAULT_REWARD_WEIGHTS.efficiencySmoothing,
  referenceCost?: number,
): number[] {
  let baseline = referenceCost ?? Number.POSITIVE_INFINITY;
  for (const outcome of outcomes) {
    if (passesAll(outcome) && outcome.cost !== null) baseline = Math.min(baseline, outcome.cost);
  }
  return outcomes.map((outcome) => {
    if (!passesAll(outcome) || outcome.cost === null) return 0;
    const ratio = (baseline + smoothing) / (outcome.cost + smoothing);
    return Math.min(1, Math.max(0, ratio));
  });
}

/**
 * Coder rewards for all programs of one task (every plan's programs together, so efficiency
 * compares across plans), in the order given.
 */
export function coderRewards(
  outcomes: readonly ProgramOutcome[],
  weights: RewardWeights = DEFAULT_REWARD_WEIGHTS,
  referenceCost?: number,
): RewardParts[] {
  const efficiencies = efficiencyScores(outcomes, weights.efficiencySmoothing, referenceCost);
  return outcomes.map((outcome, index) => {
    const passFraction =
      outcome.total > 0 && outcome.formatOk ? outcome.passCount / outcome.total : 0;
    const efficiency = efficiencies[index] ?? 0;
    const formatPenalty = outcome.formatOk ? 0 : weights.formatPenalty;
    const total =
      weights.passFraction * passFraction + weights.efficiency * efficiency - formatPenalty;
    return { passFraction, efficiency, formatPenalty, total };
  });
}

/**
 * How a plan is paid from the M programs written from it (the `plannerCredit` setting):
 * `mean` (the default): what the Coder achieves with it on average; `best`: the best of them
 * (a plan that lets the Coder succeed at all counts, however often it slips).
 */
export type PlannerCredit = 'mean' | 'best';
export const PLANNER_CREDITS: readonly PlannerCredit[] = ['mean', 'best'];

/**
 * r^P_n from the Coder rewards of the programs written from plan n: their mean (and each
 * part's mean), or with `best` the program with the highest total (its parts as they are).
 */
export function plannerReward(
  programRewards: readonly RewardParts[],
  credit: PlannerCredit = 'mean',
): RewardParts {
  if (programRewards.length === 0) {
    throw new Error('plannerReward needs at least one program reward');
  }
  if (credit === 'best') {
    // The first of equal totals, so the choice is deterministic.
    return programRewards.reduce((best, parts) => (parts.total > best.total ? parts : best));
  }
  const mean = (pick: (parts: RewardParts) => number) =>
    programRewards.reduce((sum, parts) => sum + pick(parts), 0) / programRewards.length;
  return {
    passFraction: mean((parts) => parts.passFraction),
    efficiency: mean((parts) => parts.efficiency),
    formatPenalty: mean((parts) => parts.formatPenalty),
    total: mean((parts) => parts.total),
  };
}

/**
 * Planner rewards from a flat list of Coder rewards laid out plan-major (programs of plan 0,
 * then of plan 1, …), `programsPerPlan` each.
 */
export function plannerRewards(
  programRewards: readonly RewardParts[],
  programsPerPlan: number,
  credit: PlannerCredit = 'mean',
): RewardParts[] {
  if (programsPerPlan < 1 || programRewards.length % programsPerPlan !== 0) {
    throw new Error(
      `plannerRewards: ${programRewards.length} program rewards do not split into groups of ${programsPerPlan}`,
    );
  }
  const plans: RewardParts[] = [];
  for (let start = 0; start < programRewards.length; start += programsPerPlan) {
    plans.push(plannerReward(programRewards.slice(start, start + programsPerPlan), credit));
  }
  return plans;
}

/**
 * Both roles' rewards for one task, from its N·M program outcomes laid out plan-major:
 * Coder rewards (efficiency compared across all of the task's programs) and Planner rewards
 * (the mean over each plan's M programs).
 */
export function taskRewards(
  outcomes: readonly ProgramOutcome[],
  programsPerPlan: number,
  weights: RewardWeights = DEFAULT_REWARD_WEIGHTS,
  referenceCost?: number,
  credit: PlannerCredit = 'mean',
): { coder: RewardParts[]; planner: RewardParts[] } {
  const coder = coderRewards(outcomes, weights, referenceCost);
  return { coder, planner: plannerRewards(coder, programsPerPlan, credit) };
}
