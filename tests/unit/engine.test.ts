// The training session on real tiny models, the real QuickJS sandbox and real tfjs (wasm):
// one full step's metrics and groups, determinism, resume = straight run, the NaN guard.
import * as tf from '@tensorflow/tfjs-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { defaultRunConfig, TrainingSession } from '../../src/engine/session';
import type { RunConfig, StepReport } from '../../src/engine/types';
import { initBackend } from '../../src/gpu/backend';
import { type CheckpointFiles, createModel, makeConfig, readValues } from '../../src/model';
import { grpoLossOptions, resolveGrpoConfig } from '../../src/rl/config';
import { RoleTrainer } from '../../src/rl/trainer';
import type { Sandbox } from '../../src/sandbox';
import { createSandbox } from '../../src/sandbox/nodeSandbox';
import { CharTokenizer } from '../../src/tokenizer';
import {
  cachedQuickCoder,
  cachedQuickPlanner,
  FAMILIES,
  familyTasks,
  loadCheckpoint,
  SHAPE,
} from './engine-fixtures';

let sandbox: Sandbox;
let coderFiles: CheckpointFiles;
let plannerFiles: CheckpointFiles;
const suites = { L1: familyTasks(8, 9, 'validation') };

function testConfig(overrides: Partial<RunConfig['grpo']> = {}, evalEvery = 0): RunConfig {
  return defaultRunConfig({
    tierMix: { L1: 1 },
    taskFamilies: FAMILIES,
    evalEvery,
    evalTasksPerTier: 8,
    grpo: {
      mode: 'core',
      tasksPerStep: 2,
      plansPerTask: 2,
      programsPerPlan: 4,
      maxPlanTokens: 40,
      maxProgramTokens: 56,
      beta: 0.04,
      learningRate: 3e-4,
      seed: 7,
      ...overrides,
    },
  });
}

function newSession(config: RunConfig) {
  return TrainingSession.create(config, {
    planner: loadCheckpoint(plannerFiles),
    coder: loadCheckpoint(coderFiles),
    sandbox,
    suites,
  });
}

/** Everything but wall times. */
function withoutTimings(metrics: Record<string, number>): Record<string, number> {
  return Object.fromEntries(
    Object.entries(metrics).filter(([key]) => !key.startsWith('step_time')),
  );
}

beforeAll(async () => {
  await initBackend('wasm');
  sandbox = await createSandbox({ size: 1 });
  coderFiles = await cachedQuickCoder(300);
  plannerFiles = await cachedQuickPlanner(150);
}, 600_000); // the first run trains the quick Coder (~1–3 min on 2 shared cores), later runs read it

afterAll(async () => {
  await sandbox?.close();
});

describe('TrainingSession', () => {
  it('runs one full core step: every DESIGN.md metric and well-formed N×M groups', async () => {
    const session = await newSession(testConfig({}, 1));
    const report = await session.trainStep();
    session.dispose();
    const names = Object.keys(report.metrics);
    for (const role of ['planner', 'coder']) {
      for (const metric of [
        'reward',
        'reward_std',
        'frac_reward_zero_std',
        'kl',
        'entropy',
        'clip_ratio/region_mean',
        'completions/mean_length',
        'loss',
        'grad_norm',
      ]) {
        expect(names).toContain(`${role}/${metric}`);
      }
    }
    for (const metric of [
      'eval/pass@1',
      'eval/pass@1/L1',
      'step_time',
      'step_time/rollout',
      'step_time/sandbox',
      'step_time/update',
    ]) {
      expect(names).toContain(metric);
    }
    // Cost and memory are reported only for passing programs; the quick Coder passes some.
    expect(report.metrics['eval/pass@1']).toBeGreaterThan(0);
    expect(names).toContain('eval/exec_cost');
    expect(names).toContain('eval/peak_memory');
    expect(report.step).toBe(1);
    expect(report.skippedUpdates).toEqual([]);

    expect(report.groups).toHaveLength(2);
    let nonDegenerateCoderGroups = 0;
    for (const group of report.groups) {
      expect(FAMILIES).toContain(group.family);
      expect(group.plans).toHaveLength(2);
      const planAdvantages = group.plans.map((plan) => plan.advantage);
      expect(Math.abs(planAdvantages.reduce((a, b) => a + b, 0))).toBeLessThan(1e-6);
      for (const plan of group.plans) {
        expect(plan.programs).toHaveLength(4);
        const programs = plan.programs;
        const meanReward = programs.reduce((s, p) => s + p.reward.total, 0) / programs.length;
        // r^P_n is the mean Coder reward of its M programs.
        expect(plan.reward.total).toBeCloseTo(meanReward, 10);
        const advantageSum = programs.reduce((s, p) => s + p.advantage, 0);
        expect(Math.abs(advantageSum)).toBeLessThan(1e-6);
        if (programs.some((p) => p.advantage !== 0)) nonDegenerateCoderGroups++;
        for (const program of programs) {
          const { passFraction, efficiency, formatPenalty, total } = program.reward;
          expect(total).toBeCloseTo(passFraction + 0.25 * efficiency - formatPenalty, 10);
          if (program.code === '') expect(formatPenalty).toBe(0.5);
          if (program.passCount < program.total) expect(efficiency).toBe(0);
        }
      }
    }
    expect(nonDegenerateCoderGroups).toBeGreaterThan(0);
  });

  it('is deterministic, and a restored snapshot continues exactly like the straight run', async () => {
    const config = testConfig({ beta: 0.04, numIterations: 2 });
    const straight = await newSession(config);
    const straightReports: StepReport[] = [];
    // Two steps each way hold it: the restored run's step reads the snapshot's weights,
    // optimizer moments, RNG and step counter; a longer run repeats the same checks.
    for (let i = 0; i < 2; i++) straightReports.push(await straight.trainStep());
    straight.dispose();

    const first = await newSession(config);
    const firstReports = [await first.trainStep()];
    const snapshot = await first.snapshot();
    first.dispose();
    const resumed = await TrainingSession.restore(snapshot, { sandbox, suites });
    expect(resumed.step).toBe(1);
    const resumedReports = [await resumed.trainStep()];
    resumed.dispose();

    const split = [...firstReports, ...resumedReports];
    split.forEach((report, i) => {
      const reference = straightReports[i] as StepReport;
      expect(withoutTimings(report.metrics)).toEqual(withoutTimings(reference.metrics));
      expect(report.groups).toEqual(reference.groups);
    });
    // The weights moved: later steps are not copies of the first.
    expect(straightReports[1]?.metrics['coder/kl']).toBeGreaterThan(0);
  });

  it('skips an update whose loss or gradients are NaN/Inf and leaves the weights untouched', async () => {
    const tensorsBefore = tf.memory().numTensors;
    const tok = new CharTokenizer();
    const model = createModel(makeConfig('tiny', tok.vocabSize, 'coder', SHAPE), 1);
    const grpo = resolveGrpoConfig({ beta: 0.04 });
    const trainer = new RoleTrainer(model, {
      learningRate: 1e-2,
      temperature: 1,
      numIterations: 1,
      maxGradNorm: 1,
      loss: grpoLossOptions(grpo, 'coder'),
      padId: tok.padId,
    });
    const before = await readValues(model.params);
    const sequence = { prompt: [3, 10, 11], completion: [12, 13, 1], advantage: 1 };
    const nanOld = await trainer.update([{ ...sequence, oldLogProbs: [-1, Number.NaN, -1] }]);
    const infAdvantage = await trainer.update([
      { ...sequence, oldLogProbs: [-1, -1, -1], advantage: Number.POSITIVE_INFINITY },
    ]);
    expect(nanOld.skipped).toEqual(['non_finite_loss']);
    expect(infAdvantage.skipped.length).toBe(1);
    const after = await readValues(model.params);
    for (const [name, values] of before) expect(after.get(name)).toEqual(values);
    // A finite update does move them.
    const ok = await trainer.update([{ ...sequence, oldLogProbs: [-1, -1, -1] }]);
    expect(ok.skipped).toEqual([]);
    const moved = await readValues(model.params);
    expect(moved.get('transformer.wte.weight')).not.toEqual(before.get('transformer.wte.weight'));
    trainer.dispose();
    for (const variable of model.params.values()) variable.dispose();
    // Skipped and applied updates, the trainer and the model leave no tensor behind.
    expect(tf.memory().numTensors).toBe(tensorsBefore);
  });
});
