// Group-relative advantages (DESIGN.md): Â_i = (r_i − mean(r)) / (std(r) + 1e-4), or
// Â_i = r_i − mean(r) without scaling (Dr. GRPO). Every token of output i gets Â_i.
//
// std is the UNBIASED sample std (divides by G − 1), as TRL computes it with torch's `.std()`;
// a group of one has no spread and gets std 0. A group counts as zero-variance when its std
// is within 1e-8 of 0 (torch.isclose's default atol, as TRL tests it); its advantages are 0.

import type { ScaleRewards } from './config';

export const ADVANTAGE_STD_EPSILON = 1e-4;
export const ZERO_STD_TOLERANCE = 1e-8;

export interface GroupAdvantages {
  /** One advantage per reward, in the order of the rewards. */
  advantages: number[];
  groupMeans: number[];
  /** Unbiased std of each group's rewards. */
  groupStds: number[];
  /** Groups whose rewards are all equal: they carry no learning signal. */
  zeroStdGroups: number;
  /** zeroStdGroups / number of groups (TRL's `frac_reward_zero_std`). */
  fracZeroStd: number;
  /** Mean reward over all samples (TRL's `reward`). */
  rewardMean: number;
  /** Mean over samples of their group's std (TRL's `reward_std`). */
  rewardStd: number;
}

export function mean(values: readonly number[]): number {
  if (values.length === 0) return 0;
  let sum = 0;
  for (const value of values) sum += value;
  return sum / values.length;
}

/** Unbiased sample standard deviation (divides by n − 1); 0 for fewer than two values. */
export function sampleStd(values: readonly number[]): number {
  if (values.length < 2) return 0;
  const centre = mean(values);
  let squares = 0;
  for (const value of values) squares += (value - centre) ** 2;
  return Math.sqrt(squares / (values.length - 1));
}

/**
 * Advantages for `rewards` split into `groups` (lists of indices into `rewards`; every index
 * in exactly one group). `scale`: `group` divides by each group's std, `batch` by the std of
 * all rewards, `none` only subtracts the group mean.
 */
export function groupAdvantages(
  rewards: readonly number[],
  groups: readonly (readonly number[])[],
  scale: ScaleRewards = 'group',
): GroupAdvantages {
  const advantages = new Array<number>(rewards.length).fill(Number.NaN);
  const groupMeans: number[] = [];
  const groupStds: number[] = [];
  const batchStd = sampleStd(rewards);
  let zeroStdGroups = 0;
  let stdSampleSum = 0;
  for (const group of groups) {
    const groupRewards = group.map((index) => rewardAt(rewards, index));
    const groupMean = mean(groupRewards);
    const groupStd = sampleStd(groupRewards);
    groupMeans.push(groupMean);
    groupStds.push(groupStd);
    const zeroStd = groupStd <= ZERO_STD_TOLERANCE;
    if (zeroStd) zeroStdGroups++;
    stdSampleSum += groupStd * group.length;
    const divisor =
      scale === 'group'
        ? groupStd + ADVANTAGE_STD_EPSILON
        : scale === 'batch'
          ? batchStd + ADVANTAGE_STD_EPSILON
          : 1;
    for (const index of group) {
      if (!Number.isNaN(advantages[index] ?? Number.NaN)) {
        throw new Error(`groupAdvantages: reward ${index} is in more than one group`);
      }
      // Exactly 0 for a flat group (float round-off in the mean would otherwise leave ~1e-12).
      advantages[index] = zeroStd ? 0 : (rewardAt(rewards, index) - groupMean) / divisor;
    }
  }
  const missing = advantages.findIndex((value) => Number.isNaN(value));
  if (missing >= 0) throw new Error(`groupAdvantages: reward ${missing} is in no group`);
  return {
    advantages,
    groupMeans,
    groupStds,
    zeroStdGroups,
    fracZeroStd: groups.length === 0 ? 0 : zeroStdGroups / groups.length,
    rewardMean: mean(rewards),
    rewardStd: rewards.length === 0 ? 0 : stdSampleSum / rewards.length,
  };
}

function rewardAt(rewards: readonly number[], index: number): number {
  const reward = rewards[index];
  if (reward === undefined) throw new Error(`groupAdvantages: no reward at index ${index}`);
  if (!Number.isFinite(reward)) throw new Error(`groupAdvantages: reward ${index} is ${reward}`);
  return reward;
}

/** Consecutive groups of `groupSize`: [0..G−1], [G..2G−1], … */
export function contiguousGroups(count: number, groupSize: number): number[][] {
  if (!Number.isInteger(groupSize) || groupSize < 1 || count % groupSize !== 0) {
    throw new Error(`contiguousGroups: ${count} items do not split into groups of ${groupSize}`);
  }
  const groups: number[][] = [];
  for (let start = 0; start < count; start += groupSize) {
    groups.push(Array.from({ length: groupSize }, (_, offset) => start + offset));
  }
  return groups;
}

/**
 * Planner groups: the N plans of one task. Plans are laid out task-major:
 * plan index = task · N + n.
 */
export function plannerGroups(numTasks: number, plansPerTask: number): number[][] {
  return contiguousGroups(numTasks * plansPerTask, plansPerTask);
}

/**
 * Coder groups: the M programs of one plan (so plan quality is not credited to the Coder).
 * Programs are laid out plan-major: program index = (task · N + n) · M + m. In single-agent
 * mode (no plans) pass plansPerTask = 1: a group is the M programs of one task.
 */
export function coderGroups(
  numTasks: number,
  plansPerTask: number,
  programsPerPlan: number,
): number[][] {
  return contiguousGroups(numTasks * plansPerTask * programsPerPlan, programsPerPlan);
}
