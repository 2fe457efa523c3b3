import '@tensorflow/tfjs-backend-cpu';
import '@tensorflow/tfjs-core/dist/register_all_gradients';
import * as tf from '@tensorflow/tfjs-core';
import { beforeAll, describe, expect, it } from 'vitest';
import { clipByGlobalNorm, guardedUpdate, inspectGradients } from '../../src/model/safeUpdate';
import { Rng } from '../../src/tasks/random';

beforeAll(async () => {
  await tf.setBackend('cpu');
});

describe('gradient clipping by global norm', () => {
  it('measures the global norm and scales like torch clip_grad_norm_', async () => {
    const random = new Rng(31);
    const a = Array.from({ length: 5 }, () => random.normal());
    const b = Array.from({ length: 3 }, () => random.normal());
    const grads = { a: tf.tensor1d(a), b: tf.tensor1d(b) };
    const norm = Math.hypot(...a, ...b);
    const check = await inspectGradients(grads);
    expect(check.globalNorm).toBeCloseTo(norm, 5);
    expect(check.nonFiniteVariables).toEqual([]);

    const clipped = clipByGlobalNorm(grads, 0.5, check.globalNorm);
    expect(clipped.clipped).toBe(true);
    const scale = 0.5 / (check.globalNorm + 1e-6);
    const clippedA = await (clipped.grads.a as tf.Tensor).data();
    a.forEach((v, i) => {
      expect(clippedA[i]).toBeCloseTo(v * scale, 5);
    });
    const untouched = clipByGlobalNorm(grads, 100, check.globalNorm);
    expect(untouched.clipped).toBe(false);
    expect(Array.from(await (untouched.grads.b as tf.Tensor).data())).toEqual(
      Array.from(Float32Array.from(b)),
    );
    tf.dispose([
      ...Object.values(grads),
      ...Object.values(clipped.grads),
      ...Object.values(untouched.grads),
    ]);
  });

  it('does not overflow on large finite gradients', async () => {
    const grads = { big: tf.tensor1d([3e30, 4e30]) };
    const check = await inspectGradients(grads);
    expect(check.globalNorm / 5e30).toBeCloseTo(1, 5);
    expect(check.nonFiniteVariables).toEqual([]);
    tf.dispose(grads.big);
  });
});

describe('NaN / Inf guard', () => {
  it('skips a NaN loss or gradient, reports it, and leaves weights and Adam state untouched', async () => {
    const initial = [0.5, -1, 2];
    const target = tf.tensor1d([1, 2, 3]);
    const weights = tf.variable(tf.tensor1d(initial), true, 'guard_w');
    const other = tf.variable(tf.tensor1d([1, 1]), true, 'guard_other');
    const optimizer = tf.train.adam(0.1);
    const goodLoss = () => tf.sum(tf.square(tf.sub(weights, target))) as tf.Scalar;

    const nanLoss = await guardedUpdate(
      optimizer,
      () => tf.add(tf.sum(tf.mul(weights, Number.NaN)), tf.sum(other)) as tf.Scalar,
      { maxGradNorm: 1 },
    );
    expect(nanLoss).toMatchObject({ applied: false, skipReason: 'non_finite_loss' });
    expect(nanLoss.nonFiniteVariables).toEqual(['guard_w']);

    // Finite loss, NaN gradient: d/dw sqrt(Σ(w − w)²) at 0 is Inf·0 = NaN.
    const nanGradient = await guardedUpdate(
      optimizer,
      () =>
        tf.add(tf.sqrt(tf.sum(tf.square(tf.sub(weights, weights)))), tf.sum(other)) as tf.Scalar,
      { maxGradNorm: 1 },
    );
    expect(nanGradient).toMatchObject({
      applied: false,
      skipReason: 'non_finite_gradient',
      loss: 2,
    });
    expect(nanGradient.nonFiniteVariables).toEqual(['guard_w']);
    expect(Array.from(await weights.data())).toEqual(initial);
    expect(Array.from(await other.data())).toEqual([1, 1]);

    // A good step afterwards equals a good step of a fresh optimizer: no state leaked in.
    const applied = await guardedUpdate(optimizer, goodLoss, {
      maxGradNorm: 1,
      variables: [weights],
    });
    expect(applied).toMatchObject({ applied: true, skipReason: null, clipped: true });
    const fresh = tf.variable(tf.tensor1d(initial), true, 'guard_fresh');
    const freshOptimizer = tf.train.adam(0.1);
    await guardedUpdate(
      freshOptimizer,
      () => tf.sum(tf.square(tf.sub(fresh, target))) as tf.Scalar,
      { maxGradNorm: 1, variables: [fresh] },
    );
    expect(Array.from(await weights.data())).toEqual(Array.from(await fresh.data()));
    expect(Array.from(await weights.data())).not.toEqual(initial);
    tf.dispose([target, weights, other, fresh]);
    optimizer.dispose();
    freshOptimizer.dispose();
  });

  it('does not leak tensors', async () => {
    const weights = tf.variable(tf.tensor1d([1, 2]), true, 'leak_w');
    const optimizer = tf.train.sgd(0.1);
    await guardedUpdate(optimizer, () => tf.sum(tf.square(weights)) as tf.Scalar, {
      maxGradNorm: 1,
    });
    const before = tf.memory().numTensors;
    for (let i = 0; i < 3; i++) {
      await guardedUpdate(optimizer, () => tf.sum(tf.square(weights)) as tf.Scalar, {
        maxGradNorm: 1,
      });
      await guardedUpdate(optimizer, () => tf.sum(tf.mul(weights, Number.NaN)) as tf.Scalar, {
        maxGradNorm: 1,
      });
    }
    expect(tf.memory().numTensors).toBe(before);
    weights.dispose();
    optimizer.dispose();
  });
});
