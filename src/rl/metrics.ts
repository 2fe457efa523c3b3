// Metric names (TRL GRPOTrainer's, prefixed by role) and the builder of one step's record,
// the plain object the engine sends to the UI's store.

import type { GroupAdvantages } from './advantages';
import type { Role } from './config';
import type { GrpoLossMetrics } from './grpoLossTypes';
import type { RewardParts } from './rewards';

/** Per-role metric names without the role prefix. */
export const ROLE_METRICS = {
  reward: 'reward',
  rewardStd: 'reward_std',
  fracRewardZeroStd: 'frac_reward_zero_std',
  passFraction: 'rewards/pass_fraction/mean',
  efficiency: 'rewards/efficiency/mean',
  formatPenalty: 'rewards/format_penalty/mean',
  loss: 'loss',
  kl: 'kl',
  entropy: 'entropy',
  clipRatioLow: 'clip_ratio/low_mean',
  clipRatioHigh: 'clip_ratio/high_mean',
  clipRatioRegion: 'clip_ratio/region_mean',
  meanLength: 'completions/mean_length',
  minLength: 'completions/min_length',
  maxLength: 'completions/max_length',
  /** Share of completions cut off by the token cap or the context (no end token): TRL's name. */
  clippedRatio: 'completions/clipped_ratio',
  gradNorm: 'grad_norm',
  /** 1 when the update was skipped for a NaN/Inf, else 0. */
  updateSkipped: 'update_skipped',
} as const;

export type RoleMetricKey = keyof typeof ROLE_METRICS;
export type RoleMetricName = `${Role}/${(typeof ROLE_METRICS)[RoleMetricKey]}`;

/** e.g. roleMetric('coder', 'clipRatioRegion') → 'coder/clip_ratio/region_mean'. */
export function roleMetric(role: Role, key: RoleMetricKey): RoleMetricName {
  return `${role}/${ROLE_METRICS[key]}`;
}

/** Wall time of a step and its parts, in seconds (TRL logs `step_time` in seconds). */
export const TIMING_METRICS = {
  step: 'step_time',
  rollout: 'step_time/rollout',
  sandbox: 'step_time/sandbox',
  update: 'step_time/update',
} as const;

/** The new agents' own measures beside TRL's (a step's and an evaluation's). */
export const AGENT_METRICS = {
  /** Share of the step's repaired programs that one of their D repairs made pass. */
  debuggerFixed: 'debugger/fixed',
  /** Failing programs the Debugger repaired this step. */
  debuggerPrograms: 'debugger/programs',
  /** Share of the Retriever's answers that named a candidate. */
  retrieverValid: 'retriever/choice_valid',
  /** Share of the Retriever's choices that were BM25's top-1. */
  retrieverTop1: 'retriever/choice_top1',
  /** Greedy pass@1 after one greedy repair round of the failing programs. */
  evalPassAt1Repair: 'eval/pass@1_repair',
  /** Share of the evaluation's failing programs that the repair round fixed. */
  evalRepairFixed: 'eval/repair/fixed',
} as const;

export const EVAL_METRICS = {
  passAt1: 'eval/pass@1',
  execCost: 'eval/exec_cost',
  peakMemory: 'eval/peak_memory',
  // The Collaboration Gain by intervention: the same Coder, greedy, on the same tasks, from
  // (a) the Planner's plan (eval/pass@1), (b) another task's plan of the same evaluation
  // (swapped), (c) the task's reference plan, (d) no plan.
  /** (b) pass@1 from another task's plan of the same suite (the next task's, cyclically). */
  passAt1SwappedPlan: 'eval/pass@1_swapped_plan',
  /** (c) pass@1 from the task's reference plan. */
  passAt1ReferencePlan: 'eval/pass@1_reference_plan',
  /** (d) pass@1 from an empty plan. */
  passAt1NoPlan: 'eval/pass@1_no_plan',
  /** (a) − (b): how much the Coder uses what this task's plan says. */
  collaborationGain: 'eval/collaboration_gain',
  /** (c) − (a): what a better Planner would add. */
  plannerGap: 'eval/planner_gap',
  /** (a) − (d): the plan against no plan at all. */
  planVsNone: 'eval/plan_vs_none',
} as const;

/** Pass@1 of one tier, e.g. evalPassAt1Metric('L1') → 'eval/pass@1/L1'. */
export function evalPassAt1Metric(tier: string): `eval/pass@1/${string}` {
  return `eval/pass@1/${tier}`;
}

/** What one role produced in a step. */
export interface RoleStepStats {
  rewards: readonly RewardParts[];
  advantages: GroupAdvantages;
  /** Absent when the role did not train this step (e.g. a frozen Planner). */
  loss?: GrpoLossMetrics;
  gradNorm?: number;
  updateSkipped?: boolean;
}

export interface StepTimings {
  stepSeconds: number;
  rolloutSeconds?: number;
  sandboxSeconds?: number;
  updateSeconds?: number;
}

export interface StepMetricsInput {
  step: number;
  planner?: RoleStepStats;
  coder?: RoleStepStats;
  /** The Debugger's and the Retriever's, in topologies that have them. */
  debugger?: RoleStepStats;
  retriever?: RoleStepStats;
  timings?: StepTimings;
  /** Already-named evaluation metrics (EVAL_METRICS, evalPassAt1Metric). */
  evaluation?: Readonly<Record<string, number>>;
}

export type StepMetrics = { step: number } & Record<string, number>;

/** One role's metrics, prefixed; values that do not exist (no KL, no entropy) are left out. */
export function roleMetrics(role: Role, stats: RoleStepStats): Record<string, number> {
  const record: Record<string, number> = {};
  const put = (key: RoleMetricKey, value: number | null | undefined) => {
    if (value !== null && value !== undefined) record[roleMetric(role, key)] = value;
  };
  const meanOf = (pick: (parts: RewardParts) => number) =>
    stats.rewards.length === 0
      ? undefined
      : stats.rewards.reduce((sum, parts) => sum + pick(parts), 0) / stats.rewards.length;
  put('reward', stats.advantages.rewardMean);
  put('rewardStd', stats.advantages.rewardStd);
  put('fracRewardZeroStd', stats.advantages.fracZeroStd);
  put(
    'passFraction',
    meanOf((parts) => parts.passFraction),
  );
  put(
    'efficiency',
    meanOf((parts) => parts.efficiency),
  );
  put(
    'formatPenalty',
    meanOf((parts) => parts.formatPenalty),
  );
  if (stats.loss) {
    put('loss', stats.loss.loss);
    put('kl', stats.loss.kl);
    put('entropy', stats.loss.entropy);
    put('clipRatioLow', stats.loss.clipRatioLow);
    put('clipRatioHigh', stats.loss.clipRatioHigh);
    put('clipRatioRegion', stats.loss.clipRatioRegion);
    put('meanLength', stats.loss.meanLength);
    put('minLength', stats.loss.minLength);
    put('maxLength', stats.loss.maxLength);
  }
  put('gradNorm', stats.gradNorm);
  if (stats.updateSkipped !== undefined) put('updateSkipped', stats.updateSkipped ? 1 : 0);
  return record;
}

export function buildStepMetrics(input: StepMetricsInput): StepMetrics {
  const record: StepMetrics = { step: input.step };
  if (input.planner) Object.assign(record, roleMetrics('planner', input.planner));
  if (input.coder) Object.assign(record, roleMetrics('coder', input.coder));
  if (input.debugger) Object.assign(record, roleMetrics('debugger', input.debugger));
  if (input.retriever) Object.assign(record, roleMetrics('retriever', input.retriever));
  const timings = input.timings;
  if (timings) {
    record[TIMING_METRICS.step] = timings.stepSeconds;
    if (timings.rolloutSeconds !== undefined)
      record[TIMING_METRICS.rollout] = timings.rolloutSeconds;
    if (timings.sandboxSeconds !== undefined)
      record[TIMING_METRICS.sandbox] = timings.sandboxSeconds;
    if (timings.updateSeconds !== undefined) record[TIMING_METRICS.update] = timings.updateSeconds;
  }
  if (input.evaluation) Object.assign(record, input.evaluation);
  return record;
}
