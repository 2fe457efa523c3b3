// The whole path a trainer uses — logits → tokenLogProbs → grpoLoss → gradient — through a
// tiny linear-softmax policy, checked against central differences computed in float64.
import '@tensorflow/tfjs-backend-cpu';
import '@tensorflow/tfjs-core/dist/register_all_gradients';
import * as tf from '@tensorflow/tfjs-core';
import { beforeAll, describe, expect, it } from 'vitest';
import { stopGradient, tokenEntropies, tokenLogProbs } from '../../src/model/logProbs';
import type { LossType } from '../../src/rl/config';
import { grpoLoss } from '../../src/rl/grpoLoss';
import { grpoLossReference } from '../../src/rl/grpoLossReference';
import type { GrpoLossOptions } from '../../src/rl/grpoLossTypes';
import { Rng } from '../../src/tasks/random';

beforeAll(async () => {
  await tf.setBackend('cpu');
});

function logSoftmax64(row: number[]): number[] {
  const top = Math.max(...row);
  const logSum = Math.log(row.reduce((sum, v) => sum + Math.exp(v - top), 0)) + top;
  return row.map((v) => v - logSum);
}

describe('tokenLogProbs and tokenEntropies', () => {
  it('pick log-softmax entries (with temperature) and compute −Σ p log p', async () => {
    const random = new Rng(21);
    const [B, T, V] = [3, 4, 5];
    const logits = Array.from({ length: B * T }, () =>
      Array.from({ length: V }, () => Math.fround(3 * random.normal())),
    );
    const targets = Array.from({ length: B * T }, () => Math.floor(random.next() * V));
    const logitsTensor = tf.tensor3d(logits.flat(), [B, T, V]);
    const targetsTensor = tf.tensor2d(targets, [B, T], 'int32');
    for (const temperature of [1, 0.7]) {
      const picked = await tokenLogProbs(logitsTensor, targetsTensor, temperature).data();
      const entropies = await tokenEntropies(logitsTensor, temperature).data();
      logits.forEach((row, n) => {
        const logProbs = logSoftmax64(row.map((v) => v / temperature));
        expect(picked[n]).toBeCloseTo(logProbs[targets[n] ?? 0] ?? Number.NaN, 5);
        const entropy = -logProbs.reduce((sum, lp) => sum + Math.exp(lp) * lp, 0);
        expect(entropies[n]).toBeCloseTo(entropy, 5);
      });
    }
    expect(() => tokenLogProbs(logitsTensor, tf.zeros([B, T + 1], 'int32'))).toThrow(/match/);
    tf.dispose([logitsTensor, targetsTensor]);
  });

  it('stopGradient passes values and blocks gradients', () => {
    const x = tf.tensor1d([1, 2, 3]);
    const gradient = tf.grad((v: tf.Tensor) => tf.sum(tf.mul(v, stopGradient(v))))(x);
    // d/dx Σ x·sg(x) = sg(x) = x.
    expect(Array.from(gradient.dataSync())).toEqual([1, 2, 3]);
    tf.dispose([x, gradient]);
  });
});

describe('GRPO gradient through a linear-softmax policy', () => {
  const [G, L, D, V] = [5, 4, 3, 6];
  for (const lossType of ['grpo', 'dapo', 'dr_grpo'] as LossType[]) {
    it(`${lossType}: ∂loss/∂W from tfjs = central differences (float64)`, () => {
      const random = new Rng(300 + lossType.length);
      const f32 = Math.fround;
      const features = Array.from({ length: G * L }, () =>
        Array.from({ length: D }, () => f32(random.normal())),
      );
      const weights = Array.from({ length: D }, () =>
        Array.from({ length: V }, () => f32(0.5 * random.normal())),
      );
      const targets = Array.from({ length: G * L }, () => Math.floor(random.next() * V));
      const lengths = [4, 1, 3, 2, 4];
      const mask = lengths.map((n) => Array.from({ length: L }, (_, t) => (t < n ? 1 : 0)));
      const advantages = [0.9, -1.3, 0.4, -0.2, 1.1];
      const temperature = 0.8;

      // float64 policy: log-probs of the targets for given weights.
      const policyLogProbs = (w: number[][]): number[][] => {
        const flat = features.map((x, n) => {
          const logits = Array.from(
            { length: V },
            (_, v) => x.reduce((sum, xd, d) => sum + xd * (w[d]?.[v] ?? 0), 0) / temperature,
          );
          return logSoftmax64(logits)[targets[n] ?? 0] ?? Number.NaN;
        });
        return Array.from({ length: G }, (_, i) => flat.slice(i * L, (i + 1) * L));
      };
      const current = policyLogProbs(weights);
      // Old and ref policies differ enough that some tokens are clipped.
      const oldLogProbs = current.map((row) => row.map((v) => f32(v + 0.6 * random.normal())));
      const refLogProbs = current.map((row) => row.map((v) => f32(v + 0.3 * random.normal())));
      const options: GrpoLossOptions = { lossType, epsilonLow: 0.2, epsilonHigh: 0.2, beta: 0.04 };
      const lossAt = (w: number[][]) =>
        grpoLossReference(
          { logProbs: policyLogProbs(w), oldLogProbs, refLogProbs, advantages, mask },
          options,
        ).loss;

      const eps = 1e-6;
      const numeric = weights.map((row, d) =>
        row.map((_, v) => {
          const shifted = (delta: number) =>
            lossAt(
              weights.map((r, dd) => r.map((x, vv) => (dd === d && vv === v ? x + delta : x))),
            );
          return (shifted(eps) - shifted(-eps)) / (2 * eps);
        }),
      );

      const featuresTensor = tf.tensor2d(features);
      const targetsTensor = tf.tensor2d(targets, [G, L], 'int32');
      const oldTensor = tf.tensor2d(oldLogProbs);
      const refTensor = tf.tensor2d(refLogProbs);
      const maskTensor = tf.tensor2d(mask);
      const gradient = tf.grad((w: tf.Tensor) => {
        const logits = tf.reshape(tf.matMul(featuresTensor, w as tf.Tensor2D), [G, L, V]);
        const logProbs = tokenLogProbs(logits, targetsTensor, temperature) as tf.Tensor2D;
        return grpoLoss(
          {
            logProbs,
            oldLogProbs: oldTensor,
            refLogProbs: refTensor,
            advantages,
            mask: maskTensor,
          },
          options,
        );
      })(tf.tensor2d(weights));
      const analytic = gradient.arraySync() as number[][];
      const scale = Math.max(...numeric.flat().map(Math.abs));
      expect(scale).toBeGreaterThan(1e-3);
      analytic.forEach((row, d) => {
        row.forEach((value, v) => {
          expect(Math.abs(value - (numeric[d]?.[v] ?? Number.NaN))).toBeLessThan(
            1e-4 * scale + 1e-6,
          );
        });
      });
      tf.dispose([featuresTensor, targetsTensor, oldTensor, refTensor, maskTensor, gradient]);
    });
  }
});
