import { describe, expect, it } from 'vitest';
import { assignCredit } from '../../src/agents/credit';
import type { JudgedProgram } from '../../src/agents/judge';
import type { Completion, TaskRollout } from '../../src/agents/rollout';
import { sampleGroups } from '../../src/engine/stepSamples';
import type { SampleGroup } from '../../src/engine/types';
import { groupAdvantages, sampleStd } from '../../src/rl/advantages';
import { DEFAULT_GRPO_CONFIG, type GrpoConfig, type ScaleRewards } from '../../src/rl/config';
import { grpoLossReference } from '../../src/rl/grpoLossReference';
import type { ProgramOutcome } from '../../src/rl/rewards';
import type { Task } from '../../src/tasks';
import { explainGroup } from '../../src/ui/explainer/explain';

const completion = (text: string, length: number): Completion => ({
  prompt: [1],
  tokens: Array.from({ length }, () => 2),
  logProbs: Array.from({ length }, () => -1),
  finished: true,
  text,
});

/**
 * One step's sample groups as the engine records them: the tasks' outcomes (outcomes[t][n]
 * are the programs of plan n) go through the trainer's credit (assignCredit) and into the
 * StepReport's groups (sampleGroups), so each sample carries the advantage it trained with.
 */
function makeStep(
  step: number,
  outcomes: ProgramOutcome[][][],
  scale: ScaleRewards = 'group',
  plannerCredit: GrpoConfig['plannerCredit'] = 'mean',
): SampleGroup[] {
  const plansPerTask = outcomes[0]?.length ?? 0;
  const programsPerPlan = outcomes[0]?.[0]?.length ?? 0;
  const rollouts: TaskRollout[] = outcomes.map((plans, t) => ({
    task: {
      id: `t${step}-${t}`,
      family: 'dedupe',
      tier: 'L4',
      statement: 'Remove duplicates.',
      entryPoint: 'f',
      arity: 1,
      tests: [],
      strategies: [],
      efficiencyTests: [],
      steps: [],
    } satisfies Task,
    plans: plans.map((_, n) => completion(`plan ${n}`, 10)),
    programs: plans.map((programs) => programs.map(() => completion('', 20))),
  }));
  const judged: JudgedProgram[] = outcomes.flat(2).map((outcome, i) => ({
    code: outcome.formatOk ? 'function f() {}' : '',
    outcome,
    run: outcome.formatOk
      ? {
          id: `p${i}`,
          passed: outcome.passCount === outcome.total,
          passCount: outcome.passCount,
          total: outcome.total,
          errorKind: null,
          tests: [],
          cost: { wallMs: 1, work: outcome.cost ?? 0, peakBytes: 0 },
        }
      : null,
  }));
  const credit = assignCredit(
    outcomes.map((plans) => plans.flat()),
    { plansPerTask, programsPerPlan, withPlans: true },
    DEFAULT_GRPO_CONFIG.rewardWeights,
    scale,
    plannerCredit,
  );
  return sampleGroups(step, rollouts, judged, credit, programsPerPlan);
}

const ok = (passCount: number, cost: number): ProgramOutcome => ({
  formatOk: true,
  passCount,
  total: 4,
  cost,
});
const bad: ProgramOutcome = { formatOk: false, passCount: 0, total: 4, cost: null };

// Two tasks × 2 plans × 3 programs.
const outcomesA = [
  [ok(4, 10), ok(4, 40), ok(2, 5)],
  [bad, ok(1, 3), ok(4, 12)],
];
const outcomesB = [
  [ok(4, 10), ok(4, 10), ok(4, 10)],
  [ok(0, 1), ok(3, 1), bad],
];
const [groupA, groupB] = makeStep(3, [outcomesA, outcomesB]) as [SampleGroup, SampleGroup];
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
    // What it shows is what the trainer trained with.
    expect(e.coder.recorded).toHaveLength(3);
    expect(e.coder.recorded.every(Number.isFinite)).toBe(true);
    expect(e.coder.advantages).toEqual(e.coder.recorded.map((a) => expect.closeTo(a, 12)));
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
    expect(e.planner!.recorded).toEqual(groupA.plans.map((p) => p.advantage));
    expect(e.planner!.recorded.every(Number.isFinite)).toBe(true);
    expect(e.planner!.advantages).toEqual(e.planner!.recorded.map((a) => expect.closeTo(a, 12)));
  });

  it('Planner credit best: r^P_n is its best program’s reward, as the trainer paid it', () => {
    const [best] = makeStep(3, [outcomesA], 'group', 'best') as [SampleGroup];
    const e = explainGroup({
      group: best,
      planIndex: 1,
      programIndex: 0,
      grpo: { ...grpo, plannerCredit: 'best' },
    });
    const planRewards = best.plans.map((plan) =>
      Math.max(...plan.programs.map((p) => p.reward.total)),
    );
    expect(e.planner!.rewards).toEqual(planRewards);
    expect(e.plannerCredit).toBe('best');
    expect(e.planner!.advantages).toEqual(e.planner!.recorded.map((a) => expect.closeTo(a, 12)));
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
    // The same step trained with batch scaling records the advantages the explainer shows.
    const [batchA, batchB] = makeStep(3, [outcomesA, outcomesB], 'batch') as [
      SampleGroup,
      SampleGroup,
    ];
    for (const [group, planIndex] of [
      [batchA, 0],
      [batchB, 1],
    ] as const) {
      const shown = explainGroup({
        group,
        stepGroups: [batchA, batchB],
        planIndex,
        programIndex: 0,
        grpo: { ...grpo, scaleRewards: 'batch' },
      });
      expect(shown.coder.recorded.every(Number.isFinite)).toBe(true);
      expect(shown.coder.advantages).toEqual(
        shown.coder.recorded.map((a) => expect.closeTo(a, 12)),
      );
      expect(shown.planner!.advantages).toEqual(
        shown.planner!.recorded.map((a) => expect.closeTo(a, 12)),
      );
    }
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
