import { describe, expect, it } from 'vitest';
import type { PlanSample, ProgramSample, SampleGroup } from '../../src/engine/types';
import { groupAdvantages, sampleStd } from '../../src/rl/advantages';
import { DEFAULT_GRPO_CONFIG, type GrpoConfig } from '../../src/rl/config';
import { grpoLossReference } from '../../src/rl/grpoLossReference';
import { coderRewards, type ProgramOutcome, plannerRewards } from '../../src/rl/rewards';
import { explainGroup } from '../../src/ui/explainer/explain';

// Two tasks × 2 plans × 3 programs, rewards from the rl reward functions.
function makeGroup(step: number, outcomes: ProgramOutcome[][]): SampleGroup {
  const flat = coderRewards(outcomes.flat());
  const perPlan = outcomes[0]?.length ?? 0;
  const planParts = plannerRewards(flat, perPlan);
  const plans: PlanSample[] = outcomes.map((programs, p) => ({
    plan: `plan ${p}`,
    reward: planParts[p]!,
    advantage: Number.NaN,
    tokens: 10,
    programs: programs.map(
      (outcome, m): ProgramSample => ({
        completion: '',
        code: outcome.formatOk ? 'function f() {}' : '',
        reward: flat[p * perPlan + m]!,
        advantage: Number.NaN,
        passCount: outcome.passCount,
        total: outcome.total,
        errorKind: null,
        work: outcome.cost,
        peakBytes: null,
        tokens: 20,
      }),
    ),
  }));
  return {
    step,
    taskId: `t${step}`,
    tier: 'L4',
    family: 'dedupe',
    statement: 'Remove duplicates.',
    entryPoint: 'f',
    tests: [],
    reference: [],
    plans,
  };
}

const ok = (passCount: number, cost: number): ProgramOutcome => ({
  formatOk: true,
  passCount,
  total: 4,
  cost,
});
const bad: ProgramOutcome = { formatOk: false, passCount: 0, total: 4, cost: null };

const groupA = makeGroup(3, [
  [ok(4, 10), ok(4, 40), ok(2, 5)],
  [bad, ok(1, 3), ok(4, 12)],
]);
const groupB = makeGroup(3, [
  [ok(4, 10), ok(4, 10), ok(4, 10)],
  [ok(0, 1), ok(3, 1), bad],
]);
const grpo: GrpoConfig = { ...DEFAULT_GRPO_CONFIG };

describe('explainer numbers', () => {
  it('Coder group: the M programs of the selected plan, advantages as groupAdvantages', () => {
    const e = explainGroup({ group: groupA, planIndex: 1, programIndex: 2, grpo });
    const rewards = groupA.plans[1]!.programs.map((p) => p.reward.total);
    const reference = groupAdvantages(rewards, [[0, 1, 2]], 'group');
    expect(e.coder.rewards).toEqual(rewards);
    expect(e.coder.mean).toBeCloseTo(reference.groupMeans[0]!, 12);
    expect(e.coder.std).toBeCloseTo(reference.groupStds[0]!, 12);
    expect(e.coder.advantages).toEqual(reference.advantages);
    expect(e.coder.divisor).toBeCloseTo(reference.groupStds[0]! + 1e-4, 12);
    expect(e.coder.chosen).toBe(2);
    // The format penalty shows as a part of the reward.
    expect(e.coder.parts[0]!.formatPenalty).toBe(grpo.rewardWeights.formatPenalty);
  });

  it('Planner group: r^P_n is the mean of its programs’ Coder rewards', () => {
    const e = explainGroup({ group: groupA, planIndex: 0, programIndex: 0, grpo });
    const planRewards = groupA.plans.map(
      (plan) => plan.programs.reduce((s, p) => s + p.reward.total, 0) / plan.programs.length,
    );
    expect(e.planner!.rewards).toEqual(planRewards.map((r) => expect.closeTo(r, 12)));
    expect(e.planner!.advantages).toEqual(
      groupAdvantages(planRewards, [[0, 1]], 'group').advantages.map((a) => expect.closeTo(a, 12)),
    );
    expect(e.planner!.trained).toBe(true);
  });

  it('flat groups carry no signal; batch scaling divides by the std of the whole step', () => {
    const flat = explainGroup({ group: groupB, planIndex: 0, programIndex: 0, grpo });
    expect(flat.coder.zeroStd).toBe(true);
    expect(flat.coder.advantages).toEqual([0, 0, 0]);

    const batch = explainGroup({
      group: groupB,
      stepGroups: [groupA, groupB],
      planIndex: 1,
      programIndex: 0,
      grpo: { ...grpo, scaleRewards: 'batch' },
    });
    const allPrograms = [groupA, groupB].flatMap((g) =>
      g.plans.flatMap((p) => p.programs.map((q) => q.reward.total)),
    );
    expect(batch.coder.divisor).toBeCloseTo(sampleStd(allPrograms) + 1e-4, 12);
    const mine = groupB.plans[1]!.programs.map((p) => p.reward.total);
    const mean = mine.reduce((a, b) => a + b, 0) / mine.length;
    expect(batch.coder.advantages[0]).toBeCloseTo((mine[0]! - mean) / batch.coder.divisor, 12);
  });

  it('per-token objective at ρ = 1 matches the GRPO loss reference; clipping shows off-policy', () => {
    const e = explainGroup({
      group: groupA,
      planIndex: 1,
      programIndex: 2,
      grpo,
      stepMetrics: { 'coder/kl': 0.012, 'coder/clip_ratio/region_mean': 0.05 },
    });
    const token = e.tokens.coder;
    const advantage = e.coder.advantages[2]!;
    expect(token.advantage).toBe(advantage);
    expect(advantage).toBeGreaterThan(0);
    const reference = grpoLossReference(
      { logProbs: [[-1.5, -0.3]], advantages: [advantage], mask: [[1, 1]] },
      { lossType: 'grpo', epsilonLow: 0.2, epsilonHigh: 0.2, beta: 0 },
    );
    expect(token.objective).toBeCloseTo(-reference.perTokenLoss[0]![0]!, 12);
    expect(token.onPolicy).toBe(true);
    const high = token.examples.find((x) => x.ratio === 1.4)!;
    expect(high.clipped).toBe('high');
    expect(high.objective).toBeCloseTo(1.2 * advantage, 12);
    expect(token.examples.find((x) => x.ratio === 0.6)!.clipped).toBeNull();
    expect(token.k3AtZero).toBe(0);
    expect(token.measuredKl).toBe(0.012);
    expect(token.measuredClipRegion).toBe(0.05);
    expect(e.tokens.planner!.measuredKl).toBeNull();
  });

  it('negative advantages clip below 1 − ε_low', () => {
    const e = explainGroup({ group: groupA, planIndex: 1, programIndex: 0, grpo });
    const token = e.tokens.coder;
    expect(token.advantage).toBeLessThan(0);
    const low = token.examples.find((x) => x.ratio === 0.6)!;
    expect(low.clipped).toBe('low');
    expect(low.objective).toBeCloseTo(0.8 * token.advantage, 12);
  });

  it('single-agent mode has no Planner group; frozen-planner does not train it', () => {
    expect(
      explainGroup({
        group: groupA,
        planIndex: 0,
        programIndex: 0,
        grpo: { ...grpo, mode: 'single' },
      }).planner,
    ).toBeNull();
    const frozen = explainGroup({
      group: groupA,
      planIndex: 0,
      programIndex: 0,
      grpo: { ...grpo, mode: 'frozen-planner' },
    });
    expect(frozen.planner!.trained).toBe(false);
  });
});
