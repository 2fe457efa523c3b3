// The training path on the wasm backend (the CPU fallback in the page): loss, metrics,
// gradients through tokenLogProbs, and the guarded update give the cpu backend's numbers.
import '@tensorflow/tfjs-backend-cpu';
import '@tensorflow/tfjs-core/dist/register_all_gradients';
import { createRequire } from 'node:module';
import { setThreadsCount, setWasmPaths } from '@tensorflow/tfjs-backend-wasm';
import * as tf from '@tensorflow/tfjs-core';
import { afterAll, describe, expect, it } from 'vitest';
import { tokenEntropies, tokenLogProbs } from '../../src/model/logProbs';
import { guardedUpdate } from '../../src/model/safeUpdate';
import type { LossType } from '../../src/rl/config';
import { grpoLoss, grpoLossMetrics } from '../../src/rl/grpoLoss';
import type { GrpoLossOptions } from '../../src/rl/grpoLossTypes';
import { Rng } from '../../src/tasks/random';

const [G, L, D, V] = [6, 5, 4, 7];

function randomProblem(seed: number) {
  const random = new Rng(seed);
  const f32 = Math.fround;
  return {
    features: Array.from({ length: G * L }, () =>
      Array.from({ length: D }, () => f32(random.normal())),
    ),
    weights: Array.from({ length: D }, () => Array.from({ length: V }, () => f32(random.normal()))),
    targets: Array.from({ length: G * L }, () => Math.floor(random.next() * V)),
    oldShift: Array.from({ length: G * L }, () => f32(0.8 * (random.next() - 0.5))),
    refShift: Array.from({ length: G * L }, () => f32(0.4 * (random.next() - 0.5))),
    advantages: Array.from({ length: G }, (_, i) => f32((i % 2 ? -1 : 1) * (0.2 + random.next()))),
    mask: Array.from({ length: G }, (_, i) =>
      Array.from({ length: L }, (_, t) => (t < 1 + ((i * 3) % L) ? 1 : 0)),
    ),
  };
}

/** Loss, metrics, gradient w.r.t. the weights, and one guarded Adam step, on the active backend. */
async function runOnActiveBackend(seed: number, lossType: LossType) {
  const problem = randomProblem(seed);
  const options: GrpoLossOptions = { lossType, epsilonLow: 0.2, epsilonHigh: 0.2, beta: 0.04 };
  const features = tf.tensor2d(problem.features);
  const targets = tf.tensor2d(problem.targets, [G, L], 'int32');
  const mask = tf.tensor2d(problem.mask);
  const weights = tf.variable(
    tf.tensor2d(problem.weights),
    true,
    `w_${tf.getBackend()}_${lossType}`,
  );
  const policy = () => {
    const logits = tf.reshape(tf.matMul(features, weights), [G, L, V]);
    return { logits, logProbs: tokenLogProbs(logits, targets) as tf.Tensor2D };
  };
  const { logits, logProbs } = policy();
  const oldLogProbs = tf.add(logProbs, tf.tensor2d(problem.oldShift, [G, L])) as tf.Tensor2D;
  const refLogProbs = tf.add(logProbs, tf.tensor2d(problem.refShift, [G, L])) as tf.Tensor2D;
  const entropies = tokenEntropies(logits) as tf.Tensor2D;
  const inputs = { oldLogProbs, refLogProbs, advantages: problem.advantages, mask };
  const metrics = await grpoLossMetrics({ ...inputs, logProbs, entropies }, options);
  const gradient = tf.grad((w: tf.Tensor) => {
    const lp = tokenLogProbs(tf.reshape(tf.matMul(features, w), [G, L, V]), targets);
    return grpoLoss({ ...inputs, logProbs: lp as tf.Tensor2D }, options);
  })(weights);
  const gradientValues = Array.from(await gradient.data());
  const optimizer = tf.train.adam(0.01);
  const report = await guardedUpdate(
    optimizer,
    () => grpoLoss({ ...inputs, logProbs: policy().logProbs }, options),
    {
      maxGradNorm: 0.1,
      variables: [weights],
    },
  );
  const nanReport = await guardedUpdate(
    optimizer,
    () => tf.sum(tf.mul(weights, Number.NaN)) as tf.Scalar,
    {
      maxGradNorm: 0.1,
      variables: [weights],
    },
  );
  const updated = Array.from(await weights.data());
  tf.dispose([
    features,
    targets,
    mask,
    weights,
    logits,
    logProbs,
    oldLogProbs,
    refLogProbs,
    entropies,
    gradient,
  ]);
  optimizer.dispose();
  return { metrics, gradientValues, report, nanReport, updated };
}

afterAll(async () => {
  await tf.setBackend('cpu');
});

describe('GRPO on the wasm backend', () => {
  for (const lossType of ['grpo', 'dapo', 'dr_grpo'] as LossType[]) {
    it(`${lossType}: matches the cpu backend`, async () => {
      await tf.setBackend('cpu');
      const onCpu = await runOnActiveBackend(41, lossType);

      const dir = createRequire(import.meta.url)
        .resolve('@tensorflow/tfjs-backend-wasm/package.json')
        .replace(/package\.json$/, 'dist/');
      setWasmPaths(dir);
      setThreadsCount(1);
      expect(await tf.setBackend('wasm')).toBe(true);
      const onWasm = await runOnActiveBackend(41, lossType);
      await tf.setBackend('cpu');

      expect(onCpu.metrics.clipRatioRegion).toBeGreaterThan(0);
      for (const key of [
        'loss',
        'kl',
        'entropy',
        'clipRatioLow',
        'clipRatioHigh',
        'clipRatioRegion',
        'meanLength',
      ] as const) {
        expect(onWasm.metrics[key]).toBeCloseTo(onCpu.metrics[key] ?? Number.NaN, 4);
      }
      const scale = Math.max(...onCpu.gradientValues.map(Math.abs));
      expect(scale).toBeGreaterThan(1e-3);
      onWasm.gradientValues.forEach((value, i) => {
        expect(Math.abs(value - (onCpu.gradientValues[i] ?? Number.NaN))).toBeLessThan(
          1e-4 * scale,
        );
      });
      expect(onWasm.report).toMatchObject({ applied: true, clipped: true });
      expect(onWasm.report.gradNorm).toBeCloseTo(onCpu.report.gradNorm, 4);
      expect(onWasm.nanReport).toMatchObject({ applied: false, skipReason: 'non_finite_loss' });
      onWasm.updated.forEach((value, i) => {
        expect(value).toBeCloseTo(onCpu.updated[i] ?? Number.NaN, 4);
      });
    });
  }
});
