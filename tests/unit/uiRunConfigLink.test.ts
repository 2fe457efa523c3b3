import { describe, expect, it } from 'vitest';
import {
  DEFAULT_RUN_CONFIG,
  decodeRunConfig,
  encodeRunConfig,
  runConfigProblems,
} from '../../src/engine/runConfig';

const decode = (query: string) => decodeRunConfig(new URLSearchParams(query));

describe('decodeRunConfig', () => {
  it('reads a good link whole, with no problems', () => {
    const { config, problems } = decode('tasks=1&n=2&m=3&lr=0.001&eval=0&seed=3&mem=256');
    expect(problems).toEqual([]);
    expect(config.grpo).toMatchObject({
      tasksPerStep: 1,
      plansPerTask: 2,
      programsPerPlan: 3,
      learningRate: 0.001,
      seed: 3,
    });
    expect(config.evalEvery).toBe(0);
    expect(config.memoryBudgetMiB).toBe(256);
  });

  it('ignores one bad value, names it, and keeps every other value of the link', () => {
    const { config, problems } = decode('tasks=2&lr=-1&m=3&seed=7');
    expect(config.grpo.learningRate).toBe(DEFAULT_RUN_CONFIG.grpo.learningRate);
    expect(config.grpo).toMatchObject({ tasksPerStep: 2, programsPerPlan: 3, seed: 7 });
    expect(problems).toHaveLength(1);
    expect(problems[0]).toMatch(/^lr=-1 \(learningRate must be a finite number > 0, got -1\)$/);
  });

  it('blames n, not the mode, for n = 1 in core mode', () => {
    const { config, problems } = decode('mode=core&n=1&m=2');
    expect(config.grpo.mode).toBe('core');
    expect(config.grpo.plansPerTask).toBe(DEFAULT_RUN_CONFIG.grpo.plansPerTask);
    expect(config.grpo.programsPerPlan).toBe(2);
    expect(problems).toEqual([
      'n=1 (plansPerTask must be at least 2 in core mode: the Planner needs a group)',
    ]);
    // The same n is fine where no Planner group is needed.
    expect(decode('mode=single&n=1').problems).toEqual([]);
  });

  it('names each of several bad values and keeps the good ones', () => {
    const { config, problems } = decode('n=2&m=abc&wpass=-2&eval=1.5&mem=0&topk=4&tiers=L1:1');
    expect(problems.map((p) => p.split(' ')[0])).toEqual([
      'm=abc',
      'wpass=-2',
      'eval=1.5',
      'mem=0',
    ]);
    expect(config.grpo.plansPerTask).toBe(2);
    expect(config.grpo.programsPerPlan).toBe(DEFAULT_RUN_CONFIG.grpo.programsPerPlan);
    expect(config.grpo.rewardWeights.passFraction).toBe(
      DEFAULT_RUN_CONFIG.grpo.rewardWeights.passFraction,
    );
    expect(config.evalEvery).toBe(DEFAULT_RUN_CONFIG.evalEvery);
    expect(config.memoryBudgetMiB).toBeUndefined();
    expect(config.topK).toBe(4);
    expect(config.tierMix).toEqual({ L1: 1 });
  });

  it('takes an empty number as no number', () => {
    const { config, problems } = decode('lr=&seed=5');
    expect(config.grpo.learningRate).toBe(DEFAULT_RUN_CONFIG.grpo.learningRate);
    expect(config.grpo.seed).toBe(5);
    expect(problems[0]).toMatch(/^lr= \(learningRate/);
  });

  it('leaves keys that are not settings alone', () => {
    expect(decode('test=1&tab=lab').problems).toEqual([]);
  });

  it('round-trips what encodeRunConfig writes, the memory budget included', () => {
    const { config } = decode('mode=single&beta=0.1&loss=dr_grpo&mem=128&tiers=L2:1,L4:2');
    const again = decodeRunConfig(encodeRunConfig(config));
    expect(again.problems).toEqual([]);
    expect(again.config).toEqual(config);
    expect(encodeRunConfig(DEFAULT_RUN_CONFIG).toString()).toBe('');
  });

  it('reads a task pool and the L5 tier, and refuses a pool that is not a whole number', () => {
    const { config, problems } = decode('pool=16&tiers=L5:1');
    expect(problems).toEqual([]);
    expect(config.taskPoolSize).toBe(16);
    expect(config.tierMix).toEqual({ L5: 1 });
    expect(decodeRunConfig(encodeRunConfig(config)).config).toEqual(config);
    const bad = decode('pool=2.5&lr=0.001');
    expect(bad.config.taskPoolSize).toBe(DEFAULT_RUN_CONFIG.taskPoolSize);
    expect(bad.config.grpo.learningRate).toBe(0.001);
    expect(bad.problems.join(' ')).toMatch(/pool|taskPoolSize/i);
  });
});

describe('runConfigProblems', () => {
  it('finds nothing wrong with the default run', () => {
    expect(runConfigProblems(DEFAULT_RUN_CONFIG)).toEqual([]);
  });

  it('maps the engine’s words to the field they concern', () => {
    const config = {
      ...DEFAULT_RUN_CONFIG,
      tierMix: { L1: 0 },
      grpo: {
        ...DEFAULT_RUN_CONFIG.grpo,
        plansPerTask: 1,
        learningRate: -1,
        rewardWeights: { ...DEFAULT_RUN_CONFIG.grpo.rewardWeights, efficiency: -1 },
      },
    };
    expect(runConfigProblems(config).map((p) => p.field)).toEqual([
      'plansPerTask',
      'learningRate',
      'rewardWeights.efficiency',
      'tierMix',
    ]);
  });
});
