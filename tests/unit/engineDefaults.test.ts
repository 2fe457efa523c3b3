// The configuration a newcomer gets: the shipped tiny checkpoints, DEFAULT_RUN_CONFIG with
// nothing overridden, on wasm (what the page runs on a CPU). Once, the default step ran the
// whole Coder batch (64 sequences × ~400 tokens) through one pass and the wasm heap ran out;
// small test configs hid it. This runs the default step and evaluation and bounds their peak.
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import * as tf from '@tensorflow/tfjs-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { DEFAULT_RUN_CONFIG } from '../../src/engine/runConfig';
import { type Suites, TrainingSession } from '../../src/engine/session';
import { initBackend } from '../../src/gpu/backend';
import { defaultMemoryBudgetBytes, peakTensorBytes } from '../../src/model';
import { loadCheckpointDir } from '../../src/model/checkpointNode';
import type { Sandbox } from '../../src/sandbox';
import { createSandbox } from '../../src/sandbox/nodeSandbox';
import { loadSuite, SUITES } from '../../src/tasks';

const GIB = 1024 ** 3;
/** What the default step may hold at its peak: one micro-batch's budget plus the models,
 * Adam state, references and accumulated gradients (a few MiB at the tiny preset). */
const PEAK_LIMIT_BYTES = 1.25 * GIB;

let sandbox: Sandbox;
let session: TrainingSession;

beforeAll(async () => {
  const backend = await initBackend('wasm');
  expect(backend.backend).toBe('wasm');
  expect(defaultMemoryBudgetBytes('wasm')).toBeLessThan(PEAK_LIMIT_BYTES);
  sandbox = await createSandbox({ size: 1 });
  const suites: Suites = {};
  for (const spec of SUITES) {
    const text = readFileSync(join('public/tasks', spec.file), 'utf8');
    suites[spec.name as keyof Suites] = loadSuite(text).tasks;
  }
  session = await TrainingSession.create(DEFAULT_RUN_CONFIG, {
    planner: await loadCheckpointDir('public/checkpoints/tiny/planner'),
    coder: await loadCheckpointDir('public/checkpoints/tiny/coder'),
    sandbox,
    suites,
  });
});

afterAll(async () => {
  session?.dispose();
  await sandbox?.close();
});

describe('the default run on wasm', () => {
  it('takes a whole GRPO step within its memory limit', async () => {
    const base = tf.memory().numBytes;
    const { result: report, peakBytes: peak } = await peakTensorBytes(() => session.trainStep());
    console.log(`default step: peak ${(peak / 2 ** 20).toFixed(0)} MiB of tensors`);
    expect(peak).toBeLessThan(PEAK_LIMIT_BYTES);
    expect(report?.step).toBe(1);
    expect(report?.skippedUpdates).toEqual([]);
    const { grpo } = DEFAULT_RUN_CONFIG;
    // Every program of the default batch was sampled, judged and learned from.
    expect(report?.groups.length).toBe(grpo.tasksPerStep);
    for (const group of report?.groups ?? []) {
      expect(group.plans.length).toBe(grpo.plansPerTask);
      for (const plan of group.plans) expect(plan.programs.length).toBe(grpo.programsPerPlan);
    }
    for (const name of ['planner/loss', 'coder/loss', 'coder/entropy', 'planner/grad_norm']) {
      expect(Number.isFinite(report?.metrics[name]), name).toBe(true);
    }
    // Nothing left behind but what the session owns.
    expect(tf.memory().numBytes).toBeLessThan(base + 16 * 2 ** 20);
  });

  it('evaluates on every suite within the same limit', async () => {
    const { result, peakBytes } = await peakTensorBytes(() => session.evaluate());
    const metrics = result.metrics;
    expect(peakBytes).toBeLessThan(PEAK_LIMIT_BYTES);
    expect(Number.isFinite(metrics['eval/pass@1'])).toBe(true);
  });
});
