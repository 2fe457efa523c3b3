// GRPO learns: from a quick supervised Coder that passes some tasks of two families, a
// seeded run of single-agent GRPO (real sandbox, real tfjs on wasm) raises the Coder's mean
// reward within a fixed number of steps. Deterministic: same seed → same curve.
import { afterAll, beforeAll, expect, it } from 'vitest';
import { defaultRunConfig, TrainingSession } from '../../src/engine/session';
import { initBackend } from '../../src/gpu/backend';
import { createSandbox, type Sandbox } from '../../src/sandbox';
import { cachedQuickCoder, FAMILIES, freshPlanner, loadCheckpoint } from './engine-fixtures';

const STEPS = 12;
let sandbox: Sandbox;

beforeAll(async () => {
  await initBackend('wasm');
  sandbox = await createSandbox({ size: 1 });
});

afterAll(async () => {
  await sandbox?.close();
});

it('raises the Coder reward on a small fixed task world', { timeout: 600_000 }, async () => {
  const config = defaultRunConfig({
    tierMix: { L1: 1 },
    taskFamilies: FAMILIES,
    evalEvery: 0,
    grpo: {
      mode: 'single',
      tasksPerStep: 4,
      programsPerPlan: 4,
      maxProgramTokens: 56,
      beta: 0,
      learningRate: 3e-4,
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
  const mean = (xs: number[]) => xs.reduce((a, b) => a + b, 0) / xs.length;
  const early = mean(rewards.slice(0, 4));
  const late = mean(rewards.slice(-4));
  console.log(`coder/reward per step: ${rewards.map((r) => r.toFixed(3)).join(' ')}`);
  expect(late).toBeGreaterThan(early + 0.1);
});
