// The GRPO configuration as plain data, with defaults and validation.
// Defaults follow DESIGN.md ("GRPO, as the lab computes it") and, where it is silent, TRL's
// GRPOConfig.

import type { GrpoLossOptions, LossType } from './grpoLossTypes';
import {
  DEFAULT_REWARD_WEIGHTS,
  PLANNER_CREDITS,
  type PlannerCredit,
  type RewardWeights,
} from './rewards';

/** The loss aggregation is a setting of the run: its type is the loss's (grpoLossTypes.ts). */
export type { LossType, PlannerCredit };

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
 * - `frozen-planner`: the Planner writes plans but only the Coder learns (CoRe without Planner RL);
 * - `frozen-coder`: the Coder writes programs but only the Planner learns (CoRe without Coder RL);
 * - `self-plan`: one model writes a plan and then the program in one sequence, trained on the
 *   program's reward (the control for "two policies against one"; agents/selfPlan.ts).
 */
export type TrainingMode = 'core' | 'single' | 'frozen-planner' | 'frozen-coder' | 'self-plan';

/**
 * How core mode's two roles take turns: `simultaneous` (both update every step) or
 * `alternating` (stages of `stageSteps` steps: the Planner trains with the Coder frozen,
 * then the Coder with the Planner frozen, and so on; see schedule.ts).
 */
export type Schedule = 'simultaneous' | 'alternating';

export type Role = 'planner' | 'coder' | 'debugger' | 'retriever';

/**
 * Which agents a step runs (the topology), in the order they act. `planner,coder` is the
 * product's default; the Debugger repairs failing programs after the Coder, the Retriever
 * picks a worked example for the Planner's prompt before it. See src/agents/topology.ts.
 */
export type Topology =
  | 'planner,coder'
  | 'planner,coder,debugger'
  | 'retriever,planner,coder'
  | 'retriever,planner,coder,debugger';

/** The Retriever's policy: `learned` samples among the candidates and trains; `bm25` takes BM25's top-1 (no learning). */
export type RetrievalPolicy = 'learned' | 'bm25';

/** Whether the Coder and Planner are paid for the program as written (`original`) or after the Debugger's repairs (`repaired`). */
export type RepairCredit = 'original' | 'repaired';

/**
 * What the Coder reads: the task's `statement` and the plan, or only its signature and the
 * `plan` (so the plan must carry the task: a referential game).
 */
export type CoderSees = 'statement' | 'plan';
export const CODER_SEES: readonly CoderSees[] = ['statement', 'plan'];

/** The share of plans whose Coder group writes from an empty plan when a run leaves it out: engine/taskSets.ts planDropoutOf. */
export const EXAMPLES_PLAN_DROPOUT = 0.1;

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
  /** The agents of a step (src/agents/topology.ts); `single` / `frozen-planner` modes apply on top. */
  agents: Topology;
  /** D: repairs the Debugger samples per failing program (its group size). */
  repairsPerProgram: number;
  /** At most this many failing programs are repaired per step (a seeded draw among them). */
  repairedProgramsPerStep: number;
  /** Whether the Coder / Planner rewards count the post-repair outcome (off: as written). */
  repairCredit: RepairCredit;
  /** K: candidates BM25 proposes to the Retriever. Its group is the N plans' R = N choices. */
  retrievalCandidates: number;
  retrievalPolicy: RetrievalPolicy;
  /** How a plan's reward comes from its M programs' rewards (rewards.ts, PlannerCredit). */
  plannerCredit: PlannerCredit;
  /** Core mode: both roles every step, or in alternating stages of `stageSteps` steps. */
  schedule: Schedule;
  /** K: steps per stage of the alternating schedule. */
  stageSteps: number;
  /** What the Coder reads besides the plan: the statement, or only the signature. */
  coderSees: CoderSees;
  /**
   * Plan dropout: the share of sampled plans whose M programs are written from an empty plan
   * (that plan then has no Planner advantage), so that "no plan" is a prompt the Coder knows.
   * Absent: the task set's default (engine/taskSets.ts planDropoutOf).
   */
  planDropout?: number;
}

export const DEFAULT_GRPO_CONFIG: Readonly<GrpoConfig> = Object.freeze({
  mode: 'core',
  // 8 tasks × 4 plans × 2 programs, not 4 × 4 × 4 (the same 64 programs a step). The warm-start
  // Coder is nearly deterministic given a plan (entropy ≈ 0.02 per token; ~90% of its groups
  // have no reward spread), so learning comes through the Planner: two programs per plan are
  // enough, and eight tasks a step halve the step-to-step noise of the task draw, which is
  // what hid a real rise (EXPERIMENTS.md, "what we tried").
  tasksPerStep: 8,
  plansPerTask: 4,
  programsPerPlan: 2,
  temperature: 1.0,
  // In the shipped BPE tokenizer's tokens: the task world's longest reference plan is 49
  // tokens with <|endoftext|>, its longest program 62 (4,000 tasks per split); the caps leave
  // room and stop runaway samples early. The character checkpoint needs 176 / 192.
  maxPlanTokens: 64,
  maxProgramTokens: 96,
  epsilonLow: 0.2,
  epsilonHigh: 0.2,
  // TRL's default since 0.19 (DESIGN.md's 0.04 was its original): in 120 steps the policies'
  // KL to the warm start stays ~1e-3, so the penalty changes little, while skipping the
  // frozen reference's forward pass buys more steps in a minute. β > 0 brings back KL.
  beta: 0,
  // TRL's current default loss_type.
  lossType: 'dapo',
  numIterations: 1,
  maxGradNorm: 1.0,
  // TRL's 1e-6 is tuned for billion-parameter models; the lab's ~0.1M-parameter models need a
  // far larger step. Measured on L5 (120 steps, seed 1): 5e-5 learns slowly (z 2.1 in 131
  // steps), 1.5e-4 learns (z 2.5–3.4), 3e-4 stalls (z 0.8, evaluation flat).
  learningRate: 1.5e-4,
  scaleRewards: 'group',
  rewardWeights: DEFAULT_REWARD_WEIGHTS,
  seed: 0,
  agents: 'planner,coder',
  repairsPerProgram: 4,
  repairedProgramsPerStep: 8,
  repairCredit: 'original',
  retrievalCandidates: 4,
  retrievalPolicy: 'learned',
  plannerCredit: 'mean',
  schedule: 'simultaneous',
  stageSteps: 10,
  coderSees: 'statement',
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
const MODES: readonly TrainingMode[] = [
  'core',
  'single',
  'frozen-planner',
  'frozen-coder',
  'self-plan',
];
const SCHEDULES: readonly Schedule[] = ['simultaneous', 'alternating'];
export const TOPOLOGIES: readonly Topology[] = [
  'planner,coder',
  'planner,coder,debugger',
  'retriever,planner,coder',
  'retriever,planner,coder,debugger',
];

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
  if ((config.mode === 'core' || config.mode === 'frozen-coder') && config.plansPerTask < 2) {
    problems.push(
      `plansPerTask must be at least 2 in ${config.mode} mode: the Planner needs a group`,
    );
  }
  problems.push(...validateSchedule(config));
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
  problems.push(...validateAgents(config));
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

/** The schedule's and the Planner credit's problems (what can take turns, and with what). */
function validateSchedule(config: GrpoConfig): string[] {
  const problems: string[] = [];
  if (!SCHEDULES.includes(config.schedule)) {
    problems.push(
      `schedule must be one of ${SCHEDULES.join(', ')}, got ${String(config.schedule)}`,
    );
  } else if (config.schedule === 'alternating') {
    if (config.mode !== 'core') {
      problems.push(
        `schedule alternating needs mode core (both roles training): in ${config.mode} mode only one of them trains`,
      );
    }
    if (!Number.isInteger(config.stageSteps) || config.stageSteps < 1) {
      problems.push(`stageSteps must be a positive integer, got ${config.stageSteps}`);
    }
  }
  if (!CODER_SEES.includes(config.coderSees)) {
    problems.push(
      `coderSees must be one of ${CODER_SEES.join(', ')}, got ${String(config.coderSees)}`,
    );
  } else if (config.coderSees === 'plan' && !usesPlanner(config.mode)) {
    problems.push(
      `coderSees plan needs a Planner: in ${config.mode} mode the Coder would see only the signature`,
    );
  }
  if (config.planDropout !== undefined && !(config.planDropout >= 0 && config.planDropout < 1)) {
    problems.push(`planDropout must be at least 0 and below 1, got ${config.planDropout}`);
  }
  if (!PLANNER_CREDITS.includes(config.plannerCredit)) {
    problems.push(
      `plannerCredit must be one of ${PLANNER_CREDITS.join(', ')}, got ${String(config.plannerCredit)}`,
    );
  }
  return problems;
}

/** The agent settings' problems (topology, D, K, the Retriever's and the repair credit's choices). */
function validateAgents(config: GrpoConfig): string[] {
  const problems: string[] = [];
  if (!TOPOLOGIES.includes(config.agents)) {
    problems.push(`agents must be one of ${TOPOLOGIES.join(' | ')}, got ${String(config.agents)}`);
    return problems;
  }
  if (hasAgent(config.agents, 'debugger')) {
    if (!Number.isInteger(config.repairsPerProgram) || config.repairsPerProgram < 2) {
      problems.push(
        `repairsPerProgram must be an integer >= 2 (a Debugger group of one has no advantage), got ${config.repairsPerProgram}`,
      );
    }
    if (!Number.isInteger(config.repairedProgramsPerStep) || config.repairedProgramsPerStep < 1) {
      problems.push(
        `repairedProgramsPerStep must be a positive integer, got ${config.repairedProgramsPerStep}`,
      );
    }
    if (config.repairCredit !== 'original' && config.repairCredit !== 'repaired') {
      problems.push(
        `repairCredit must be original or repaired, got ${String(config.repairCredit)}`,
      );
    }
  }
  if (hasAgent(config.agents, 'retriever')) {
    if (!usesPlanner(config.mode)) {
      problems.push(`agents with a retriever need a Planner: not in ${config.mode} mode`);
    }
    if (!Number.isInteger(config.retrievalCandidates) || config.retrievalCandidates < 2) {
      problems.push(
        `retrievalCandidates must be an integer >= 2, got ${config.retrievalCandidates}`,
      );
    }
    if (config.retrievalCandidates > 9) {
      problems.push(
        `retrievalCandidates must be at most 9 (the Retriever answers with one digit), got ${config.retrievalCandidates}`,
      );
    }
    if (config.retrievalPolicy !== 'learned' && config.retrievalPolicy !== 'bm25') {
      problems.push(
        `retrievalPolicy must be learned or bm25, got ${String(config.retrievalPolicy)}`,
      );
    }
  }
  return problems;
}

/** Whether a topology includes the role. */
export function hasAgent(agents: Topology, role: Role): boolean {
  return agents.split(',').includes(role);
}

/**
 * The roles whose weights a run updates: the mode's (core: Planner and Coder; single,
 * self-plan (its one model sits in the Coder's place) and frozen-planner: the Coder; frozen-coder: the Planner), then the topology's Debugger, and its
 * Retriever unless it is BM25's top-1. Without `config`: the default topology. In core mode
 * with the alternating schedule, a step updates only its stage's role (schedule.ts).
 */
export function trainedRoles(
  mode: TrainingMode,
  config?: Pick<GrpoConfig, 'agents' | 'retrievalPolicy'>,
): Role[] {
  const roles: Role[] =
    mode === 'core' ? ['planner', 'coder'] : mode === 'frozen-coder' ? ['planner'] : ['coder'];
  if (!config) return roles;
  if (hasAgent(config.agents, 'debugger')) roles.push('debugger');
  if (
    hasAgent(config.agents, 'retriever') &&
    config.retrievalPolicy === 'learned' &&
    usesPlanner(mode)
  ) {
    roles.push('retriever');
  }
  return roles;
}

/** The Retriever writes one digit and the end token. */
export const RETRIEVER_ANSWER_TOKENS = 2;

/** Whether the mode has a Planner model (single-agent GRPO and self-plan's one model do not). */
export function usesPlanner(mode: TrainingMode): boolean {
  return mode !== 'single' && mode !== 'self-plan';
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
      maxLength:
        role === 'planner'
          ? config.maxPlanTokens
          : role === 'retriever'
            ? RETRIEVER_ANSWER_TOKENS
            : config.maxProgramTokens,
    },
  };
}
