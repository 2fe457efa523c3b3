// GRPO learns: from a quick supervised Coder that passes some tasks of two families, seeded
// single-agent GRPO on a fixed pool of tasks (real sandbox, real tfjs on wasm) earns more
// reward than the same run with updates switched off (learning rate ~0). Both runs draw the
// same tasks with the same sampling seeds, so the comparison is paired: the difference is
// what the updates did. Deterministic: same seed → same curves.
import { afterAll, beforeAll, expect, it } from 'vitest';
import { defaultRunConfig, TrainingSession } from '../../src/engine/session';
import { initBackend } from '../../src/gpu/backend';
import type { Sandbox } from '../../src/sandbox';
import { createSandbox } from '../../src/sandbox/nodeSandbox';
import { cachedQuickCoder, FAMILIES, freshPlanner, loadCheckpoint } from './engine-fixtures';

const STEPS = 12;
/** Steps before this are the warm-up of the comparison (the policies have barely moved). */
const COMPARE_FROM = 3;
let sandbox: Sandbox;

beforeAll(async () => {
  await initBackend('wasm');
  sandbox = await createSandbox({ size: 1 });
});

afterAll(async () => {
  await sandbox?.close();
});

/**
 * The run's Coder reward per step. The control (`updates` false) moves no weight (learning
 * rate ~0), so one gradient pass per batch gives it the same weights, samples and rewards as
 * μ = 2 would, at half the update's cost.
 */
async function rewardCurve(learningRate: number, updates = true): Promise<number[]> {
  const config = defaultRunConfig({
    tierMix: { L1: 1 },
    taskFamilies: FAMILIES,
    taskPoolSize: 2,
    evalEvery: 0,
    grpo: {
      mode: 'single',
      tasksPerStep: 2,
      programsPerPlan: 16,
      maxProgramTokens: 56,
      beta: 0,
      numIterations: updates ? 2 : 1,
      learningRate,
      seed: 11,
    },
  });
  const session = await TrainingSession.create(config, {
    planner: freshPlanner(),
    coder: loadCheckpoint(await cachedQuickCoder(300)),
    sandbox,
  });
  const rewards: number[] = [];
  for (let i = 0; i < STEPS; i++) {
    const report = await session.trainStep();
    expect(report.skippedUpdates).toEqual([]);
    rewards.push(report.metrics['coder/reward'] ?? Number.NaN);
  }
  session.dispose();
  return rewards;
}

it('earns more Coder reward than the same run without updates', { timeout: 600_000 }, async () => {
  const control = await rewardCurve(1e-12, false);
  const trained = await rewardCurve(1e-4);
  const mean = (xs: number[]) => xs.reduce((a, b) => a + b, 0) / xs.length;
  const show = (xs: number[]) => xs.map((r) => r.toFixed(3)).join(' ');
  console.log(
    `coder/reward, no updates: ${show(control)}\ncoder/reward, GRPO:       ${show(trained)}`,
  );
  expect(trained[0]).toBe(control[0]); // same first batch: the runs differ only by the updates
  expect(mean(trained.slice(COMPARE_FROM))).toBeGreaterThan(
    mean(control.slice(COMPARE_FROM)) + 0.03,
  );
});
