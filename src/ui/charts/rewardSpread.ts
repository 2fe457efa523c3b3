// What the Planner and Coder reward charts show beyond the mean. A plan's reward is the mean
// of its programs' rewards, so the two roles' mean rewards are equal by construction; what
// differs is where the spread lies that each role's advantages come from: between the plans
// of one task (the Planner's group) and between the programs of one plan (the Coder's).
// Derived on the page from the step report's sample groups and kept with the step's metrics.
import type { MetricRecord, SampleGroup } from '../../engine/api';

/** Best − worst plan reward of a task, averaged over the step's tasks (N ≥ 2 plans). */
export const PLAN_SPREAD_METRIC = 'page/planner/plan_spread';
/** Best − worst program reward of a plan, averaged over the step's plans (M ≥ 2). */
export const PROGRAM_SPREAD_METRIC = 'page/coder/program_spread';

function range(values: readonly number[]): number {
  return Math.max(...values) - Math.min(...values);
}

function mean(values: readonly number[]): number | null {
  return values.length === 0 ? null : values.reduce((sum, v) => sum + v, 0) / values.length;
}

/** The two spreads of one step (a metric is left out where no group has two members). */
export function rewardSpreads(groups: readonly SampleGroup[]): MetricRecord {
  const planRanges: number[] = [];
  const programRanges: number[] = [];
  for (const group of groups) {
    const planRewards = group.plans.map((plan) => plan.reward.total).filter(Number.isFinite);
    if (planRewards.length >= 2) planRanges.push(range(planRewards));
    for (const plan of group.plans) {
      const rewards = plan.programs.map((p) => p.reward.total).filter(Number.isFinite);
      if (rewards.length >= 2) programRanges.push(range(rewards));
    }
  }
  const out: MetricRecord = {};
  const planSpread = mean(planRanges);
  const programSpread = mean(programRanges);
  if (planSpread !== null) out[PLAN_SPREAD_METRIC] = planSpread;
  if (programSpread !== null) out[PROGRAM_SPREAD_METRIC] = programSpread;
  return out;
}
