// GRPO end to end on policies small enough to know the answer: sample groups, score them,
// compute group advantages, update with Adam through the guarded step. Seeded and deterministic.
import '@tensorflow/tfjs-backend-cpu';
import '@tensorflow/tfjs-core/dist/register_all_gradients';
import * as tf from '@tensorflow/tfjs-core';
import { beforeAll, describe, expect, it } from 'vitest';
import { tokenLogProbs } from '../../src/model/logProbs';
import { guardedUpdate } from '../../src/model/safeUpdate';
import { contiguousGroups, groupAdvantages } from '../../src/rl/advantages';
import type { LossType } from '../../src/rl/config';
import { grpoLoss, grpoLossMetrics } from '../../src/rl/grpoLoss';
import { Rng } from '../../src/tasks/random';

beforeAll(async () => {
  await tf.setBackend('cpu');
});

const K = 8;
const BEST_ACTION = 5;
// Graded rewards so the best action is not the only one with signal.
const banditReward = (action: number) => (action === BEST_ACTION ? 1 : action / 20);

/** Trains a softmax-over-K policy; returns its final probabilities and the KL seen. */
async function trainBandit(seed: number, lossType: LossType, numIterations: number) {
  const random = new Rng(seed);
  const groupSize = 8;
  const logits = tf.variable(tf.zeros([1, K]), true, `bandit_${seed}_${lossType}`);
  const optimizer = tf.train.adam(0.05);
  const refLogProbs = tf.fill([groupSize, 1], Math.log(1 / K)) as tf.Tensor2D;
  const mask = tf.ones([groupSize, 1]) as tf.Tensor2D;
  const options = { lossType, epsilonLow: 0.2, epsilonHigh: 0.2, beta: 0.04 };
  const policyLogProbs = (actions: tf.Tensor2D) =>
    tokenLogProbs(tf.reshape(tf.tile(logits, [groupSize, 1]), [groupSize, 1, K]), actions);
  let lastKl = 0;
  for (let step = 0; step < 100; step++) {
    const probs = await tf.tidy(() => tf.softmax(logits)).data();
    const sampled = Array.from({ length: groupSize }, () => random.weighted(probs));
    const rewards = sampled.map(banditReward);
    const { advantages } = groupAdvantages(rewards, contiguousGroups(groupSize, groupSize));
    const actions = tf.tensor2d(sampled, [groupSize, 1], 'int32');
    // μ > 1: the sampling policy's log-probs are frozen before the first update.
    const oldLogProbs =
      numIterations > 1 ? (tf.tidy(() => policyLogProbs(actions)) as tf.Tensor2D) : undefined;
    for (let iteration = 0; iteration < numIterations; iteration++) {
      const report = await guardedUpdate(
        optimizer,
        () =>
          grpoLoss(
            {
              logProbs: policyLogProbs(actions) as tf.Tensor2D,
              oldLogProbs,
              refLogProbs,
              advantages,
              mask,
            },
            options,
          ),
        { maxGradNorm: 1, variables: [logits] },
      );
      expect(report.applied).toBe(true);
    }
    const logProbs = policyLogProbs(actions) as tf.Tensor2D;
    lastKl = (await grpoLossMetrics({ logProbs, refLogProbs, advantages, mask }, options)).kl ?? 0;
    tf.dispose([actions, logProbs, ...(oldLogProbs ? [oldLogProbs] : [])]);
  }
  const finalProbs = Array.from(await tf.tidy(() => tf.softmax(logits)).data());
  tf.dispose([logits, refLogProbs, mask]);
  optimizer.dispose();
  return { finalProbs, lastKl };
}

describe('GRPO on a K-armed bandit', () => {
  it('drives a softmax policy to the rewarded action (dapo, μ = 1)', async () => {
    const { finalProbs, lastKl } = await trainBandit(1, 'dapo', 1);
    expect(finalProbs[BEST_ACTION]).toBeGreaterThan(0.9);
    expect(lastKl).toBeGreaterThan(0); // moved away from the uniform reference
  });

  it('also learns with grpo aggregation and two iterations per batch (old ≠ current)', async () => {
    const { finalProbs } = await trainBandit(2, 'grpo', 2);
    expect(finalProbs[BEST_ACTION]).toBeGreaterThan(0.9);
  });

  it('is deterministic for a seed', async () => {
    const first = await trainBandit(3, 'dr_grpo', 1);
    const second = await trainBandit(3, 'dr_grpo', 1);
    expect(second.finalProbs).toEqual(first.finalProbs);
  });
});

describe('GRPO on a two-token sequence policy', () => {
  it('learns the rewarded pair, with variable lengths masked', async () => {
    const random = new Rng(5);
    const V = 4;
    const groupSize = 8;
    const firstLogits = tf.variable(tf.zeros([1, V]), true, 'seq_first');
    const secondLogits = tf.variable(tf.zeros([V, V]), true, 'seq_second'); // row = first token
    const optimizer = tf.train.adam(0.05);
    // Token 0 ends the sequence; reward 0.5 for first token 2, +0.5 if followed by 1.
    const reward = (first: number, second: number) =>
      first === 2 ? 0.5 + (second === 1 ? 0.5 : 0) : 0;
    const probabilityOfBest = async () => {
      const [p1, p2] = await Promise.all([
        tf.tidy(() => tf.softmax(firstLogits)).data(),
        tf.tidy(() => tf.softmax(secondLogits)).data(),
      ]);
      return (p1[2] ?? 0) * (p2[2 * V + 1] ?? 0);
    };
    const initial = await probabilityOfBest();
    for (let step = 0; step < 80; step++) {
      const [p1, p2] = await Promise.all([
        tf.tidy(() => tf.softmax(firstLogits)).data(),
        tf.tidy(() => tf.softmax(secondLogits)).data(),
      ]);
      const firsts = Array.from({ length: groupSize }, () => random.weighted(p1));
      const seconds = firsts.map((a) =>
        a === 0 ? 0 : random.weighted(p2.slice(a * V, (a + 1) * V)),
      );
      const rewards = firsts.map((a, i) => (a === 0 ? 0 : reward(a, seconds[i] ?? 0)));
      const { advantages } = groupAdvantages(rewards, contiguousGroups(groupSize, groupSize));
      const mask = tf.tensor2d(firsts.map((a) => [1, a === 0 ? 0 : 1]));
      const targets = tf.tensor2d(
        firsts.map((a, i) => [a, seconds[i] ?? 0]),
        [groupSize, 2],
        'int32',
      );
      const firstOneHot = tf.cast(tf.oneHot(tf.tensor1d(firsts, 'int32'), V), 'float32');
      const report = await guardedUpdate(
        optimizer,
        () => {
          const logits = tf.stack(
            [tf.tile(firstLogits, [groupSize, 1]), tf.matMul(firstOneHot, secondLogits)],
            1,
          );
          const logProbs = tokenLogProbs(logits, targets) as tf.Tensor2D;
          return grpoLoss(
            { logProbs, advantages, mask },
            { lossType: 'grpo', epsilonLow: 0.2, epsilonHigh: 0.2, beta: 0 },
          );
        },
        { maxGradNorm: 1, variables: [firstLogits, secondLogits] },
      );
      expect(report.applied).toBe(true);
      tf.dispose([mask, targets, firstOneHot]);
    }
    const final = await probabilityOfBest();
    expect(initial).toBeCloseTo(1 / 16, 6);
    expect(final).toBeGreaterThan(0.8);
    // The padded second token of sequences that ended never trained row 0 of the table.
    const row0 = Array.from(await tf.tidy(() => tf.slice(secondLogits, [0, 0], [1, V])).data());
    expect(row0).toEqual([0, 0, 0, 0]);
    tf.dispose([firstLogits, secondLogits]);
    optimizer.dispose();
  });
});
