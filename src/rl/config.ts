// The GRPO configuration as plain data, with defaults and validation.
// Defaults follow DESIGN.md ("GRPO, as the lab computes it") and, where it is silent, TRL's
// GRPOConfig.

import type { GrpoLossOptions, LossType } from './grpoLossTypes';
import { DEFAULT_REWARD_WEIGHTS, type RewardWeights } from './rewards';

/** The loss aggregation is a setting of the run: its type is the loss's (grpoLossTypes.ts). */
export type { LossType };

/**
 * Advantage scaling (TRL's `scale_rewards`): `group` divides by each group's std (GRPO),
 * `batch` by the std of all rewards of the role in the step, `none` only centres
 * (Dr. GRPO).
 */
export type ScaleRewards = 'group' | 'batch' | 'none';

/**
 * Which roles train:
 * - `core`: Planner and Coder, collaborative credit;
 * - `single`: the Coder alone, without a plan (single-agent GRPO baseline);
 * - `frozen-planner`: the Planner writes plans but only the Coder learns.
 */
export type TrainingMode = 'core' | 'single' | 'frozen-planner';

export type Role = 'planner' | 'coder';

export interface GrpoConfig {
  mode: TrainingMode;
  /** Tasks per GRPO step. */
  tasksPerStep: number;
  /** N: plans sampled per task (the Planner's group size). Ignored in `single` mode. */
  plansPerTask: number;
  /** M: programs sampled per plan (the Coder's group size). */
  programsPerPlan: number;
  /** Sampling temperature for both roles. */
  temperature: number;
  /** Longest plan / program in tokens; also `dr_grpo`'s max length. */
  maxPlanTokens: number;
  maxProgramTokens: number;
  /** Clip range of the ratio: [1 − epsilonLow, 1 + epsilonHigh]. */
  epsilonLow: number;
  epsilonHigh: number;
  /** Weight of the k3 KL term to the frozen reference; 0 skips the reference model. */
  beta: number;
  lossType: LossType;
  /** Gradient steps per batch of rollouts (TRL's μ, `num_iterations`). */
  numIterations: number;
  /** Global gradient-norm clip; 0 or Infinity disables clipping. */
  maxGradNorm: number;
  learningRate: number;
  scaleRewards: ScaleRewards;
  rewardWeights: RewardWeights;
  seed: number;
}

export const DEFAULT_GRPO_CONFIG: Readonly<GrpoConfig> = Object.freeze({
  mode: 'core',
  tasksPerStep: 4,
  plansPerTask: 4,
  programsPerPlan: 4,
  temperature: 1.0,
  // In the shipped BPE tokenizer's tokens: the task world's longest reference plan is 49
  // tokens with <|endoftext|>, its longest program 62 (4,000 tasks per split); the caps leave
  // room and stop runaway samples early. The character checkpoint needs 176 / 192.
  maxPlanTokens: 64,
  maxProgramTokens: 96,
  epsilonLow: 0.2,
  epsilonHigh: 0.2,
  // DESIGN.md's 0.04 (TRL's original default; newer TRL defaults to 0).
  beta: 0.04,
  // TRL's current default loss_type.
  lossType: 'dapo',
  numIterations: 1,
  maxGradNorm: 1.0,
  // TRL's 1e-6 is tuned for billion-parameter models; the lab's ~0.1M-parameter models,
  // trained from scratch, need a far larger step.
  learningRate: 5e-5,
  scaleRewards: 'group',
  rewardWeights: DEFAULT_REWARD_WEIGHTS,
  seed: 0,
});

export class GrpoConfigError extends Error {
  constructor(readonly problems: string[]) {
    super(`Invalid GRPO config:\n- ${problems.join('\n- ')}`);
    this.name = 'GrpoConfigError';
  }
}

export type GrpoConfigInput = Partial<Omit<GrpoConfig, 'rewardWeights'>> & {
  rewardWeights?: Partial<RewardWeights>;
};

/** Merges `input` over the defaults and validates; throws GrpoConfigError listing every problem. */
export function resolveGrpoConfig(input: GrpoConfigInput = {}): GrpoConfig {
  const config: GrpoConfig = {
    ...DEFAULT_GRPO_CONFIG,
    ...input,
    rewardWeights: { ...DEFAULT_GRPO_CONFIG.rewardWeights, ...input.rewardWeights },
  };
  const problems = validateGrpoConfig(config);
  if (problems.length > 0) throw new GrpoConfigError(problems);
  return config;
}

const LOSS_TYPES: readonly LossType[] = ['grpo', 'dapo', 'dr_grpo'];
const SCALE_REWARDS: readonly ScaleRewards[] = ['group', 'batch', 'none'];
const MODES: readonly TrainingMode[] = ['core', 'single', 'frozen-planner'];

/** Every problem with `config`, in words; empty when it is valid. */
export function validateGrpoConfig(config: GrpoConfig): string[] {
  const problems: string[] = [];
  const positiveInteger = (name: keyof GrpoConfig, value: number) => {
    if (!Number.isInteger(value) || value < 1) {
      problems.push(`${name} must be a positive integer, got ${value}`);
    }
  };
  if (!MODES.includes(config.mode)) {
    problems.push(`mode must be one of ${MODES.join(', ')}, got ${String(config.mode)}`);
  }
  positiveInteger('tasksPerStep', config.tasksPerStep);
  positiveInteger('plansPerTask', config.plansPerTask);
  positiveInteger('programsPerPlan', config.programsPerPlan);
  positiveInteger('maxPlanTokens', config.maxPlanTokens);
  positiveInteger('maxProgramTokens', config.maxProgramTokens);
  positiveInteger('numIterations', config.numIterations);
  if (config.programsPerPlan < 2) {
    problems.push('programsPerPlan must be at least 2: a group of one has no advantage');
  }
  if (config.mode === 'core' && config.plansPerTask < 2) {
    problems.push('plansPerTask must be at least 2 in core mode: the Planner needs a group');
  }
  if (!(config.temperature > 0) || !Number.isFinite(config.temperature)) {
    problems.push(`temperature must be a finite number > 0, got ${config.temperature}`);
  }
  if (!(config.epsilonLow >= 0 && config.epsilonLow < 1)) {
    problems.push(`epsilonLow must be in [0, 1), got ${config.epsilonLow}`);
  }
  if (!(config.epsilonHigh >= 0) || !Number.isFinite(config.epsilonHigh)) {
    problems.push(`epsilonHigh must be a finite number >= 0, got ${config.epsilonHigh}`);
  }
  if (!(config.beta >= 0) || !Number.isFinite(config.beta)) {
    problems.push(`beta must be a finite number >= 0, got ${config.beta}`);
  }
  if (!LOSS_TYPES.includes(config.lossType)) {
    problems.push(`lossType must be one of ${LOSS_TYPES.join(', ')}, got ${config.lossType}`);
  }
  if (!SCALE_REWARDS.includes(config.scaleRewards)) {
    problems.push(
      `scaleRewards must be one of ${SCALE_REWARDS.join(', ')}, got ${config.scaleRewards}`,
    );
  }
  if (!(config.maxGradNorm >= 0)) {
    problems.push(`maxGradNorm must be >= 0 (0 or Infinity disables), got ${config.maxGradNorm}`);
  }
  if (!(config.learningRate > 0) || !Number.isFinite(config.learningRate)) {
    problems.push(`learningRate must be a finite number > 0, got ${config.learningRate}`);
  }
  if (!Number.isInteger(config.seed)) problems.push(`seed must be an integer, got ${config.seed}`);
  const weights = config.rewardWeights;
  for (const key of [
    'passFraction',
    'efficiency',
    'formatPenalty',
    'efficiencySmoothing',
  ] as const) {
    const value = weights[key];
    if (!(value >= 0) || !Number.isFinite(value)) {
      problems.push(`rewardWeights.${key} must be a finite number >= 0, got ${value}`);
    }
  }
  return problems;
}

/** The roles whose weights a mode updates. */
export function trainedRoles(mode: TrainingMode): Role[] {
  return mode === 'core' ? ['planner', 'coder'] : ['coder'];
}

/** Whether the mode samples plans at all (single-agent GRPO does not). */
export function usesPlanner(mode: TrainingMode): boolean {
  return mode !== 'single';
}

/**
 * The loss options for one role. dr_grpo divides by the role's max tokens, as TRL divides by
 * `max_completion_length`; pass `normalizer.tokens` / `outputs` yourself when accumulating
 * gradients over micro-batches.
 */
export function grpoLossOptions(config: GrpoConfig, role: Role): GrpoLossOptions {
  return {
    lossType: config.lossType,
    epsilonLow: config.epsilonLow,
    epsilonHigh: config.epsilonHigh,
    beta: config.beta,
    normalizer: {
      maxLength: role === 'planner' ? config.maxPlanTokens : config.maxProgramTokens,
    },
  };
}
