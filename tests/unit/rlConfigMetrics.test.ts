import { describe, expect, it } from 'vitest';
import { groupAdvantages, plannerGroups } from '../../src/rl/advantages';
import {
  DEFAULT_GRPO_CONFIG,
  GrpoConfigError,
  grpoLossOptions,
  resolveGrpoConfig,
  trainedRoles,
  usesPlanner,
  validateGrpoConfig,
} from '../../src/rl/config';
import {
  buildStepMetrics,
  EVAL_METRICS,
  evalPassAt1Metric,
  roleMetric,
  TIMING_METRICS,
} from '../../src/rl/metrics';
import { coderRewards } from '../../src/rl/rewards';

describe('GRPO config', () => {
  it('has valid defaults: TRL’s (β 0, dapo) and the measured ones (EXPERIMENTS.md)', () => {
    expect(validateGrpoConfig({ ...DEFAULT_GRPO_CONFIG })).toEqual([]);
    const config = resolveGrpoConfig();
    expect(config).toMatchObject({
      tasksPerStep: 8,
      plansPerTask: 4,
      programsPerPlan: 2,
      learningRate: 1.5e-4,
      epsilonLow: 0.2,
      epsilonHigh: 0.2,
      beta: 0,
      temperature: 1,
      lossType: 'dapo',
      numIterations: 1,
      maxGradNorm: 1,
      scaleRewards: 'group',
      mode: 'core',
    });
  });

  it('merges partial reward weights and lists every problem', () => {
    const config = resolveGrpoConfig({ rewardWeights: { efficiency: 0.5 }, mode: 'single' });
    expect(config.rewardWeights.efficiency).toBe(0.5);
    expect(config.rewardWeights.passFraction).toBe(1);
    let error: unknown;
    try {
      resolveGrpoConfig({
        programsPerPlan: 1,
        epsilonLow: 1.5,
        beta: -1,
        lossType: 'bnpo' as never,
        rewardWeights: { formatPenalty: Number.NaN },
      });
    } catch (caught) {
      error = caught;
    }
    expect(error).toBeInstanceOf(GrpoConfigError);
    const problems = (error as GrpoConfigError).problems.join('\n');
    expect(problems).toMatch(/programsPerPlan must be at least 2/);
    expect(problems).toMatch(/epsilonLow/);
    expect(problems).toMatch(/beta/);
    expect(problems).toMatch(/lossType must be one of grpo, dapo, dr_grpo/);
    expect(problems).toMatch(/rewardWeights.formatPenalty/);
  });

  it('says which roles train in each mode', () => {
    expect(trainedRoles('core')).toEqual(['planner', 'coder']);
    expect(trainedRoles('single')).toEqual(['coder']);
    expect(trainedRoles('frozen-planner')).toEqual(['coder']);
    expect(usesPlanner('single')).toBe(false);
    expect(usesPlanner('frozen-planner')).toBe(true);
  });

  it('gives each role its loss options, dr_grpo length from the role’s max tokens', () => {
    const config = resolveGrpoConfig({ lossType: 'dr_grpo', epsilonHigh: 0.28, beta: 0.04 });
    expect(grpoLossOptions(config, 'planner')).toEqual({
      lossType: 'dr_grpo',
      epsilonLow: 0.2,
      epsilonHigh: 0.28,
      beta: 0.04,
      normalizer: { maxLength: config.maxPlanTokens },
    });
    expect(grpoLossOptions(config, 'coder').normalizer?.maxLength).toBe(config.maxProgramTokens);
  });
});

describe('step metrics', () => {
  it('names metrics like TRL, prefixed by role', () => {
    expect(roleMetric('planner', 'reward')).toBe('planner/reward');
    expect(roleMetric('coder', 'rewardStd')).toBe('coder/reward_std');
    expect(roleMetric('coder', 'fracRewardZeroStd')).toBe('coder/frac_reward_zero_std');
    expect(roleMetric('coder', 'clipRatioRegion')).toBe('coder/clip_ratio/region_mean');
    expect(roleMetric('coder', 'meanLength')).toBe('coder/completions/mean_length');
    expect(evalPassAt1Metric('L1')).toBe('eval/pass@1/L1');
    expect(TIMING_METRICS.sandbox).toBe('step_time/sandbox');
  });

  it('builds one step’s record from role stats, timings and evaluation', () => {
    const rewards = coderRewards([
      { formatOk: true, passCount: 2, total: 2, cost: 10 },
      { formatOk: true, passCount: 1, total: 2, cost: 10 },
    ]);
    const advantages = groupAdvantages(
      rewards.map((r) => r.total),
      plannerGroups(1, 2),
    );
    const record = buildStepMetrics({
      step: 3,
      coder: {
        rewards,
        advantages,
        loss: {
          loss: 0.1,
          kl: null,
          clipRatioLow: 0,
          clipRatioHigh: 0.25,
          clipRatioRegion: 0.25,
          entropy: 1.5,
          meanLength: 12,
          minLength: 10,
          maxLength: 14,
        },
        gradNorm: 0.7,
        updateSkipped: false,
      },
      timings: { stepSeconds: 2, sandboxSeconds: 0.5 },
      evaluation: { [EVAL_METRICS.passAt1]: 0.3, [evalPassAt1Metric('L2')]: 0.2 },
    });
    expect(record).toMatchObject({
      step: 3,
      'coder/reward': (1.25 + 0.5) / 2,
      'coder/frac_reward_zero_std': 0,
      'coder/rewards/efficiency/mean': 0.5,
      'coder/entropy': 1.5,
      'coder/clip_ratio/high_mean': 0.25,
      'coder/completions/mean_length': 12,
      'coder/grad_norm': 0.7,
      'coder/update_skipped': 0,
      step_time: 2,
      'step_time/sandbox': 0.5,
      'eval/pass@1': 0.3,
      'eval/pass@1/L2': 0.2,
    });
    expect(record).not.toHaveProperty('coder/kl');
    expect(record).not.toHaveProperty('step_time/rollout');
    expect(Object.keys(record).some((key) => key.startsWith('planner/'))).toBe(false);
  });
});
