// The numbers the GRPO explainer shows for one group on screen, computed with the rl
// reference functions (groupAdvantages, plannerReward, clippedSurrogateLoss, k3) so the
// explainer and the trainer cannot disagree. Pure: no React, no store.
import type { GrpoConfig, MetricRecord, Role, SampleGroup } from '../../engine/api';
import {
  ADVANTAGE_STD_EPSILON,
  clippedSurrogateLoss,
  groupAdvantages,
  isClippedHigh,
  isClippedLow,
  k3,
  plannerReward,
  type RewardParts,
  sampleStd,
  trainedRoles,
  usesPlanner,
} from '../../engine/api';

export interface RoleGroupExplanation {
  role: Role;
  /** Whether this role's weights are updated in the run's mode. */
  trained: boolean;
  /** Reward of each member of the group (plans for the Planner, programs for the Coder). */
  rewards: number[];
  parts: RewardParts[];
  mean: number;
  /** Unbiased std of the group's rewards. */
  std: number;
  /** What the centred rewards are divided by: std + 1e-4, the batch std + 1e-4, or 1. */
  divisor: number;
  zeroStd: boolean;
  advantages: number[];
  /** The advantages the engine recorded, to show they agree. */
  recorded: number[];
  /** Index of the chosen member inside the group. */
  chosen: number;
}

export interface RatioExample {
  ratio: number;
  /** min(ρÂ, clip(ρ, 1−ε_low, 1+ε_high)Â): the objective (the loss is its negative). */
  objective: number;
  clipped: 'low' | 'high' | null;
}

export interface TokenExplanation {
  role: Role;
  advantage: number;
  /** Per-token log-probs are not in the group data: ρ is shown at its first-update value 1. */
  ratio: number;
  onPolicy: boolean;
  epsilonLow: number;
  epsilonHigh: number;
  objective: number;
  /** What the objective would be at other ratios, to show where clipping cuts in. */
  examples: RatioExample[];
  beta: number;
  /** k3 at Δ = 0 (π_θ = π_ref), and the step's measured mean k3 when the run logged it. */
  k3AtZero: number;
  measuredKl: number | null;
  measuredClipRegion: number | null;
}

export interface GroupExplanation {
  planner: RoleGroupExplanation | null;
  coder: RoleGroupExplanation;
  /** With the Debugger, on a program it repaired: its D repairs (reward = improvement). */
  debugger: RoleGroupExplanation | null;
  /** With a learned Retriever: its R = N choices for this task (reward = the plan's). */
  retriever: RoleGroupExplanation | null;
  tokens: { planner: TokenExplanation | null; coder: TokenExplanation };
  scale: GrpoConfig['scaleRewards'];
  numIterations: number;
  rewardWeights: GrpoConfig['rewardWeights'];
  /** How a plan's reward comes from its programs' (mean or best). */
  plannerCredit: GrpoConfig['plannerCredit'];
}

export interface ExplainInput {
  group: SampleGroup;
  planIndex: number;
  programIndex: number;
  grpo: GrpoConfig;
  /** All groups of the step (for `scaleRewards: 'batch'`); defaults to [group]. */
  stepGroups?: readonly SampleGroup[];
  /** The step's metrics (measured KL, clip ratio), when the run has them. */
  stepMetrics?: MetricRecord;
}

const EXAMPLE_RATIOS = [0.6, 0.9, 1, 1.1, 1.4];

/**
 * r^P_n from its programs' Coder rewards, by the run's Planner credit (their mean, or the best);
 * the plan's recorded reward when it has none.
 */
export function planRewardParts(
  plan: SampleGroup['plans'][number],
  credit: GrpoConfig['plannerCredit'] = 'mean',
): RewardParts {
  return plan.programs.length > 0
    ? plannerReward(
        plan.programs.map((program) => program.reward),
        credit,
      )
    : plan.reward;
}

/**
 * Advantages for the members `members[target]` of a role, computed over the whole step's
 * groups (so `batch` scaling sees every reward of the role) and cut back to one group.
 */
function roleGroup(
  role: Role,
  trained: boolean,
  members: RewardParts[][],
  recordedByGroup: number[][],
  target: number,
  chosen: number,
  scale: GrpoConfig['scaleRewards'],
): RoleGroupExplanation {
  const all = members.flat().map((parts) => parts.total);
  const groups: number[][] = [];
  let offset = 0;
  for (const group of members) {
    groups.push(group.map((_, i) => offset + i));
    offset += group.length;
  }
  const result = groupAdvantages(all, groups, scale);
  const indices = groups[target] ?? [];
  const rewards = indices.map((i) => all[i] as number);
  const std = result.groupStds[target] ?? 0;
  const divisor =
    scale === 'group'
      ? std + ADVANTAGE_STD_EPSILON
      : scale === 'batch'
        ? sampleStd(all) + ADVANTAGE_STD_EPSILON
        : 1;
  return {
    role,
    trained,
    rewards,
    parts: members[target] ?? [],
    mean: result.groupMeans[target] ?? 0,
    std,
    divisor,
    zeroStd: std <= 1e-8,
    advantages: indices.map((i) => result.advantages[i] as number),
    recorded: recordedByGroup[target] ?? [],
    chosen,
  };
}

function tokenExplanation(
  role: Role,
  advantage: number,
  grpo: GrpoConfig,
  metrics: MetricRecord | undefined,
): TokenExplanation {
  const { epsilonLow, epsilonHigh, beta } = grpo;
  const objectiveAt = (ratio: number) =>
    -clippedSurrogateLoss(ratio, advantage, epsilonLow, epsilonHigh);
  const measured = (name: string) => {
    const value = metrics?.[`${role}/${name}`];
    return value !== undefined && Number.isFinite(value) ? value : null;
  };
  return {
    role,
    advantage,
    ratio: 1,
    onPolicy: grpo.numIterations === 1,
    epsilonLow,
    epsilonHigh,
    objective: objectiveAt(1),
    examples: EXAMPLE_RATIOS.map((ratio) => ({
      ratio,
      objective: objectiveAt(ratio),
      clipped: isClippedLow(ratio, advantage, epsilonLow)
        ? 'low'
        : isClippedHigh(ratio, advantage, epsilonHigh)
          ? 'high'
          : null,
    })),
    beta,
    k3AtZero: k3(0),
    measuredKl: measured('kl'),
    measuredClipRegion: measured('clip_ratio/region_mean'),
  };
}

export function explainGroup(input: ExplainInput): GroupExplanation {
  const { group, grpo } = input;
  const stepGroups = input.stepGroups?.includes(group) ? input.stepGroups : [group];
  const target = stepGroups.indexOf(group);
  const planIndex = clampIndex(input.planIndex, group.plans.length);
  const plan = group.plans[planIndex];
  const programIndex = clampIndex(input.programIndex, plan?.programs.length ?? 0);
  const trained = trainedRoles(grpo.mode, grpo);
  const scale = grpo.scaleRewards;

  // Coder groups: the M programs of each plan, over the whole step.
  const coderMembers: RewardParts[][] = [];
  const coderRecorded: number[][] = [];
  let coderTarget = 0;
  stepGroups.forEach((g, gi) => {
    g.plans.forEach((p, pi) => {
      if (gi === target && pi === planIndex) coderTarget = coderMembers.length;
      coderMembers.push(p.programs.map((program) => program.reward));
      coderRecorded.push(p.programs.map((program) => program.advantage));
    });
  });
  const coder = roleGroup(
    'coder',
    trained.includes('coder'),
    coderMembers,
    coderRecorded,
    coderTarget,
    programIndex,
    scale,
  );

  const planner = usesPlanner(grpo.mode)
    ? roleGroup(
        'planner',
        trained.includes('planner'),
        stepGroups.map((g) => g.plans.map((p) => planRewardParts(p, grpo.plannerCredit))),
        stepGroups.map((g) => g.plans.map((p) => p.advantage)),
        target,
        planIndex,
        scale,
      )
    : null;

  // Debugger groups: the D repairs of each repaired program of the step.
  const program = plan?.programs[programIndex];
  let debuggerGroup: RoleGroupExplanation | null = null;
  if (program?.repairs) {
    const members: RewardParts[][] = [];
    const recorded: number[][] = [];
    let debuggerTarget = 0;
    stepGroups.forEach((g, gi) => {
      g.plans.forEach((p, pi) => {
        p.programs.forEach((q, qi) => {
          if (!q.repairs) return;
          if (gi === target && pi === planIndex && qi === programIndex) {
            debuggerTarget = members.length;
          }
          members.push(q.repairs.map((repair) => repair.reward));
          recorded.push(q.repairs.map((repair) => repair.advantage));
        });
      });
    });
    debuggerGroup = roleGroup(
      'debugger',
      trained.includes('debugger'),
      members,
      recorded,
      debuggerTarget,
      0,
      scale,
    );
  }
  // Retriever groups: the choices of each task (one per plan), where the Retriever learns.
  const hasChoices = (g: SampleGroup) => g.plans.every((p) => p.retrieval?.reward);
  const retrieverGroup =
    hasChoices(group) && stepGroups.every(hasChoices)
      ? roleGroup(
          'retriever',
          trained.includes('retriever'),
          stepGroups.map((g) => g.plans.map((p) => p.retrieval!.reward!)),
          stepGroups.map((g) => g.plans.map((p) => p.retrieval!.advantage ?? 0)),
          target,
          planIndex,
          scale,
        )
      : null;

  return {
    planner,
    coder,
    debugger: debuggerGroup,
    retriever: retrieverGroup,
    tokens: {
      planner: planner
        ? tokenExplanation('planner', planner.advantages[planIndex] ?? 0, grpo, input.stepMetrics)
        : null,
      coder: tokenExplanation(
        'coder',
        coder.advantages[programIndex] ?? 0,
        grpo,
        input.stepMetrics,
      ),
    },
    scale,
    numIterations: grpo.numIterations,
    rewardWeights: grpo.rewardWeights,
    plannerCredit: grpo.plannerCredit ?? 'mean',
  };
}

function clampIndex(index: number, length: number): number {
  return Math.min(Math.max(0, Math.floor(index)), Math.max(0, length - 1));
}
