// Issue 24's settings as formulas: the Planner credit (mean or best of a plan's programs) on
// hand-computed values and against a plain reference on random rewards, the alternating
// schedule's stage boundaries, frozen-coder's roles, and the combinations refused in words.
import { describe, expect, it } from 'vitest';
import { assignCredit } from '../../src/agents/credit';
import { runConfigProblems } from '../../src/engine/runConfig';
import { defaultRunConfig } from '../../src/engine/session';
import {
  type GrpoConfig,
  resolveGrpoConfig,
  trainedRoles,
  validateGrpoConfig,
} from '../../src/rl/config';
import { type ProgramOutcome, plannerRewards, type RewardParts } from '../../src/rl/rewards';
import { roleTrainsAt, stageRole } from '../../src/rl/schedule';
import { Rng } from '../../src/tasks/random';

const WEIGHTS = { passFraction: 1, efficiency: 0, formatPenalty: 0.5, efficiencySmoothing: 1 };
const outcome = (passCount: number, total: number, formatOk = true): ProgramOutcome => ({
  formatOk,
  passCount,
  total,
  cost: 10,
});

describe('Planner credit', () => {
  // One task, N = 2 plans × M = 2 programs. Plan 0: passes 2/4 (0.5), then no function
  // (−0.5); plan 1: 1/4 and 1/4 (0.25 each).
  const outcomes = [[outcome(2, 4), outcome(0, 4, false), outcome(1, 4), outcome(1, 4)]];
  const shape = { plansPerTask: 2, programsPerPlan: 2, withPlans: true };

  it('mean: a plan is paid its programs’ mean reward (0 and 0.25 → Â −0.125, +0.125)', () => {
    const credit = assignCredit(outcomes, shape, WEIGHTS, 'none', 'mean');
    expect(credit.planner!.rewards.map((r) => r.total)).toEqual([0, 0.25]);
    expect(credit.planner!.advantages.advantages).toEqual([-0.125, 0.125]);
  });

  it('best: a plan is paid its best program’s reward (0.5 and 0.25 → Â +0.125, −0.125)', () => {
    const credit = assignCredit(outcomes, shape, WEIGHTS, 'none', 'best');
    expect(credit.planner!.rewards.map((r) => r.total)).toEqual([0.5, 0.25]);
    expect(credit.planner!.advantages.advantages).toEqual([0.125, -0.125]);
    // The parts are the best program's own (its pass fraction, no format penalty).
    expect(credit.planner!.rewards[0]).toEqual({
      passFraction: 0.5,
      efficiency: 0,
      formatPenalty: 0,
      total: 0.5,
    });
    // The Coder's credit does not depend on how the Planner is paid.
    const mean = assignCredit(outcomes, shape, WEIGHTS, 'none', 'mean');
    expect(credit.coder).toEqual(mean.coder);
  });

  it('matches a plain reference on random rewards (mean and max of each plan’s totals)', () => {
    const rng = new Rng(24);
    for (let trial = 0; trial < 50; trial++) {
      const M = 1 + rng.below(5);
      const N = 1 + rng.below(5);
      const rewards: RewardParts[] = Array.from({ length: N * M }, () => {
        const passFraction = rng.next();
        const efficiency = rng.next();
        const formatPenalty = rng.next() < 0.2 ? 0.5 : 0;
        return {
          passFraction,
          efficiency,
          formatPenalty,
          total: passFraction + 0.25 * efficiency - formatPenalty,
        };
      });
      const best = plannerRewards(rewards, M, 'best');
      const mean = plannerRewards(rewards, M, 'mean');
      for (let n = 0; n < N; n++) {
        const totals = rewards.slice(n * M, (n + 1) * M).map((r) => r.total);
        expect(best[n]!.total).toBe(Math.max(...totals));
        expect(mean[n]!.total).toBeCloseTo(totals.reduce((a, b) => a + b, 0) / M, 12);
      }
      // The default is the mean.
      expect(plannerRewards(rewards, M)).toEqual(mean);
    }
  });
});

describe('training schedule', () => {
  it('alternating: steps 1–K train the Planner, K+1–2K the Coder, and so on', () => {
    const K = 3;
    // 0-based step indices 0..8: stages 0 (Planner), 1 (Coder), 2 (Planner).
    expect(Array.from({ length: 9 }, (_, i) => stageRole(i, K))).toEqual([
      'planner',
      'planner',
      'planner',
      'coder',
      'coder',
      'coder',
      'planner',
      'planner',
      'planner',
    ]);
    const config = { mode: 'core' as const, schedule: 'alternating' as const, stageSteps: K };
    expect(roleTrainsAt(config, 'planner', 2)).toBe(true);
    expect(roleTrainsAt(config, 'coder', 2)).toBe(false);
    expect(roleTrainsAt(config, 'planner', 3)).toBe(false);
    expect(roleTrainsAt(config, 'coder', 3)).toBe(true);
    // Agents outside the turns train every step.
    expect(roleTrainsAt(config, 'debugger', 3)).toBe(true);
    expect(roleTrainsAt(config, 'retriever', 0)).toBe(true);
    // K = 1 alternates every step.
    expect([0, 1, 2, 3].map((i) => stageRole(i, 1))).toEqual([
      'planner',
      'coder',
      'planner',
      'coder',
    ]);
  });

  it('simultaneous (the default) trains both roles every step', () => {
    const config = resolveGrpoConfig();
    expect(config.schedule).toBe('simultaneous');
    for (let i = 0; i < 25; i++) {
      expect(roleTrainsAt(config, 'planner', i)).toBe(true);
      expect(roleTrainsAt(config, 'coder', i)).toBe(true);
    }
  });
});

describe('modes and what cannot run', () => {
  it('frozen-coder trains the Planner alone; the defaults are unchanged', () => {
    expect(trainedRoles('frozen-coder')).toEqual(['planner']);
    const config = resolveGrpoConfig();
    expect(config.mode).toBe('core');
    expect(config.plannerCredit).toBe('mean');
    expect(config.stageSteps).toBe(10);
  });

  it('refuses combinations that cannot run, in words', () => {
    const problems = (grpo: Partial<Omit<GrpoConfig, 'rewardWeights'>>) =>
      validateGrpoConfig({ ...resolveGrpoConfig(), ...grpo });
    expect(problems({ mode: 'frozen-coder', plansPerTask: 1 })).toContain(
      'plansPerTask must be at least 2 in frozen-coder mode: the Planner needs a group',
    );
    expect(problems({ mode: 'single', schedule: 'alternating' })).toContain(
      'schedule alternating needs mode core (both roles training): in single mode only one of them trains',
    );
    expect(problems({ mode: 'frozen-planner', schedule: 'alternating' })[0]).toMatch(
      /^schedule alternating needs mode core/,
    );
    expect(problems({ schedule: 'alternating', stageSteps: 0 })).toEqual([
      'stageSteps must be a positive integer, got 0',
    ]);
    expect(problems({ schedule: 'sometimes' as never })).toEqual([
      'schedule must be one of simultaneous, alternating, got sometimes',
    ]);
    expect(problems({ plannerCredit: 'worst' as never })).toEqual([
      'plannerCredit must be one of mean, best, got worst',
    ]);
    expect(problems({ schedule: 'alternating', stageSteps: 5 })).toEqual([]);
    // The run's validation names the field, so the page shows it beside its control.
    const base = defaultRunConfig();
    const run = {
      ...base,
      grpo: { ...base.grpo, mode: 'single' as const, schedule: 'alternating' as const },
    };
    expect(runConfigProblems(run).map((p) => p.field)).toEqual(['schedule']);
  });
});
