import { describe, expect, it } from 'vitest';
import {
  coderGroups,
  contiguousGroups,
  groupAdvantages,
  plannerGroups,
  sampleStd,
} from '../../src/rl/advantages';
import { Rng } from '../../src/tasks/random';

// Hand-written references, independent of the module's helpers.
function handMean(values: number[]): number {
  let sum = 0;
  for (const v of values) sum += v;
  return sum / values.length;
}
function handUnbiasedStd(values: number[]): number {
  const m = handMean(values);
  let ss = 0;
  for (const v of values) ss += (v - m) * (v - m);
  return Math.sqrt(ss / (values.length - 1));
}

describe('group advantages', () => {
  it('std-normalizes each group with the unbiased std (as torch .std(), TRL)', () => {
    expect(sampleStd([1, 2, 3, 4])).toBeCloseTo(Math.sqrt(5 / 3), 14);
    const random = new Rng(1);
    const rewards = Array.from({ length: 12 }, () => Math.round(random.next() * 4) / 4);
    const result = groupAdvantages(rewards, contiguousGroups(12, 4), 'group');
    for (let g = 0; g < 3; g++) {
      const group = rewards.slice(4 * g, 4 * g + 4);
      const m = handMean(group);
      const s = handUnbiasedStd(group);
      for (let k = 0; k < 4; k++) {
        const expected = ((group[k] ?? 0) - m) / (s + 1e-4);
        expect(result.advantages[4 * g + k]).toBeCloseTo(expected, 10);
      }
      expect(result.groupStds[g]).toBeCloseTo(s, 12);
    }
    expect(result.rewardMean).toBeCloseTo(handMean(rewards), 12);
  });

  it('only centres without scaling (Dr. GRPO), and scales by the batch std on request', () => {
    const random = new Rng(2);
    const rewards = Array.from({ length: 8 }, () => random.normal());
    const groups = contiguousGroups(8, 4);
    const centred = groupAdvantages(rewards, groups, 'none');
    const batch = groupAdvantages(rewards, groups, 'batch');
    const batchStd = handUnbiasedStd(rewards);
    for (let i = 0; i < 8; i++) {
      const groupMean = handMean(rewards.slice(i < 4 ? 0 : 4, i < 4 ? 4 : 8));
      expect(centred.advantages[i]).toBeCloseTo((rewards[i] ?? 0) - groupMean, 12);
      expect(batch.advantages[i]).toBeCloseTo(
        ((rewards[i] ?? 0) - groupMean) / (batchStd + 1e-4),
        10,
      );
    }
    // Centred advantages sum to zero in every group.
    expect(centred.advantages.slice(0, 4).reduce((a, b) => a + b, 0)).toBeCloseTo(0, 12);
  });

  it('counts zero-variance groups and gives them zero advantage', () => {
    const rewards = [1, 1, 1, 0.5, 0, 0.25, 0.7, 0.7, 0.7];
    const result = groupAdvantages(rewards, contiguousGroups(9, 3), 'group');
    expect(result.zeroStdGroups).toBe(2);
    expect(result.fracZeroStd).toBeCloseTo(2 / 3, 14);
    expect(result.advantages.slice(0, 3)).toEqual([0, 0, 0]);
    expect(result.advantages.slice(6)).toEqual([0, 0, 0]);
    // TRL's reward_std: the mean over samples of their group's std.
    expect(result.rewardStd).toBeCloseTo(handUnbiasedStd([0.5, 0, 0.25]) / 3, 12);
  });

  it('takes arbitrary index groups and rejects overlaps and gaps', () => {
    const result = groupAdvantages(
      [0, 10, 1, 20],
      [
        [0, 2],
        [1, 3],
      ],
      'none',
    );
    expect(result.advantages).toEqual([-0.5, -5, 0.5, 5]);
    expect(() => groupAdvantages([1, 2], [[0, 1], [1]])).toThrow(/more than one group/);
    expect(() => groupAdvantages([1, 2], [[0]])).toThrow(/in no group/);
  });
});

describe('role groups', () => {
  it('groups the N plans of a task and the M programs of a plan', () => {
    expect(plannerGroups(2, 3)).toEqual([
      [0, 1, 2],
      [3, 4, 5],
    ]);
    const coder = coderGroups(2, 2, 3);
    expect(coder).toHaveLength(4);
    // Program (task 1, plan 0, program 2) = (1·2 + 0)·3 + 2 = 8 sits in plan group 2.
    expect(coder[2]).toEqual([6, 7, 8]);
    expect(() => contiguousGroups(7, 2)).toThrow();
  });
});
