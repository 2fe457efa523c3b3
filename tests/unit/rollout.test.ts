import * as tf from '@tensorflow/tfjs-core';
import { beforeAll, describe, expect, it } from 'vitest';
import { initBackend } from '../../src/gpu/backend';
import { createModel, makeConfig, sequenceLogProbs } from '../../src/model';
import { FullRecomputeSampler, KvCacheSampler, type SampleOptions } from '../../src/rollout';
import { fromTargetLayout, packCompletions, toTargetLayout } from '../fixtures/completions';

const V = 17;
const STOP = 1;
const model = () =>
  createModel(makeConfig('tiny', V, 'coder', { nEmbd: 16, nLayer: 2, nHead: 2, nCtx: 24 }), 5);
const prompts = [
  [3, 4, 5, 6, 7],
  [8, 9],
  [10, 11, 12],
  [2, 3, 4, 5, 6, 7, 8, 9, 10],
];

describe('sampling', () => {
  beforeAll(async () => {
    await initBackend('cpu');
  });

  for (const [name, options] of [
    ['temperature 1', { maxNewTokens: 12, temperature: 1, topK: 0, seed: 3, stopId: STOP }],
    [
      'temperature 0.7, top-k 5',
      { maxNewTokens: 12, temperature: 0.7, topK: 5, seed: 9, stopId: STOP },
    ],
    ['greedy', { maxNewTokens: 20, temperature: 0, topK: 0, seed: 1, stopId: STOP }],
  ] as [string, SampleOptions][]) {
    it(`KV cache gives the tokens and log-probs of full recomputation (${name})`, async () => {
      const m = model();
      const fast = await new KvCacheSampler(m).sample(prompts, options);
      const slow = await new FullRecomputeSampler(m).sample(prompts, options);
      expect(fast.tokens).toEqual(slow.tokens);
      expect(fast.finished).toEqual(slow.finished);
      fast.logProbs.forEach((row, r) => {
        for (const [t, lp] of row.entries()) expect(lp).toBeCloseTo(slow.logProbs[r]![t]!, 5);
      });
      // Lengths respect the cap and the context.
      fast.tokens.forEach((row, r) => {
        expect(row.length).toBeLessThanOrEqual(
          Math.min(options.maxNewTokens, 24 - prompts[r]!.length),
        );
      });
    });
  }

  it('is seeded: same seed same samples, a row does not depend on its batch', async () => {
    const m = model();
    const options: SampleOptions = {
      maxNewTokens: 10,
      temperature: 1,
      topK: 0,
      seed: 42,
      stopId: STOP,
    };
    const before = tf.memory().numTensors;
    const a = await new KvCacheSampler(m).sample(prompts, options);
    expect(tf.memory().numTensors).toBe(before); // the cache and logits are all freed
    const b = await new KvCacheSampler(m).sample(prompts, options);
    expect(a).toEqual(b);
    const c = await new KvCacheSampler(m).sample(prompts, { ...options, seed: 43 });
    expect(c.tokens).not.toEqual(a.tokens);
    // Row streams are seeded by (seed, row): a batch of prompts[0..1] gives rows 0..1 unchanged.
    const d = await new KvCacheSampler(m).sample(prompts.slice(0, 2), options);
    expect(d.tokens).toEqual(a.tokens.slice(0, 2));
  });

  it('returned log-probs equal tokenLogProbs of the completed sequence (the GRPO path)', async () => {
    const m = model();
    const options: SampleOptions = {
      maxNewTokens: 8,
      temperature: 0.8,
      topK: 0,
      seed: 7,
      stopId: STOP,
    };
    const out = await new KvCacheSampler(m).sample([prompts[0]!], options);
    const seq = [...prompts[0]!, ...out.tokens[0]!];
    const lp = sequenceLogProbs(m, tf.tensor2d([seq], [1, seq.length], 'int32'), 0.8);
    const all = Array.from(await lp.data());
    const completion = all.slice(prompts[0]!.length - 1);
    for (const [t, v] of completion.entries()) expect(v).toBeCloseTo(out.logProbs[0]![t]!, 5);
  });

  it('packCompletions + tokenLogProbs give the sampler log-probs of a whole batch, with gradient', async () => {
    const m = model();
    const options: SampleOptions = {
      maxNewTokens: 8,
      temperature: 1,
      topK: 0,
      seed: 11,
      stopId: STOP,
    };
    const out = await new KvCacheSampler(m).sample(prompts, options);
    const batch = packCompletions(prompts, out.tokens, 0);
    const logp = sequenceLogProbs(m, batch.ids);
    const rows = fromTargetLayout(batch, await logp.data());
    rows.forEach((row, b) => {
      row.forEach((v, j) => {
        expect(v).toBeCloseTo(out.logProbs[b]![j]!, 5);
      });
    });
    // Sum of masked log-probs equals the sum of the sampler's, and the layout helpers agree.
    const total = tf.sum(tf.mul(logp, batch.mask));
    const expected = out.logProbs.flat().reduce((a, b) => a + b, 0);
    expect((await total.data())[0]).toBeCloseTo(expected, 3);
    const back = fromTargetLayout(batch, await toTargetLayout(batch, out.logProbs).data());
    back.forEach((row, b) => {
      row.forEach((v, j) => {
        expect(v).toBeCloseTo(out.logProbs[b]![j]!, 5);
      });
    });
    const { grads } = tf.variableGrads(
      () => tf.neg(tf.sum(tf.mul(sequenceLogProbs(m, batch.ids), batch.mask))) as tf.Scalar,
      [...m.params.values()],
    );
    expect(Object.keys(grads)).toHaveLength(m.params.size);
  });
});
