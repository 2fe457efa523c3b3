// Shared prompts are prefilled once and their caches copied to the rows that continue them;
// finished rows leave the batch. None of it may change a sample: every row gets exactly the
// tokens (and the log-probs, to float32 rounding) that full recomputation gives it alone.
import * as tf from '@tensorflow/tfjs-core';
import { beforeAll, describe, expect, it } from 'vitest';
import { initBackend } from '../../src/gpu/backend';
import { createModel, makeConfig } from '../../src/model';
import { FullRecomputeSampler, KvCacheSampler, type SampleOptions } from '../../src/rollout';

const V = 19;
const STOP = 1;
const model = () =>
  createModel(makeConfig('tiny', V, 'coder', { nEmbd: 16, nLayer: 2, nHead: 2, nCtx: 32 }), 9);

// A rollout's layout: two statements, each with plans of different lengths, each plan's
// prompt repeated for its programs (rows of one prompt sit together, as the rollout asks).
const statementA = [3, 4, 5];
const statementB = [6, 7, 8, 9, 10];
const prompts = [
  ...Array.from({ length: 3 }, () => [...statementA, 11, 12]),
  ...Array.from({ length: 3 }, () => [...statementA, 13, 14, 15, 16]),
  ...Array.from({ length: 2 }, () => [...statementB, 2]),
  [...statementB, 17, 18, 2, 2, 4, 5],
  [2],
];

describe('shared-prompt sampling', () => {
  beforeAll(async () => {
    await initBackend('cpu');
  });

  for (const [name, options] of [
    ['temperature 1', { maxNewTokens: 14, temperature: 1, topK: 0, seed: 5, stopId: STOP }],
    [
      'temperature 0.7, top-k 4',
      { maxNewTokens: 14, temperature: 0.7, topK: 4, seed: 8, stopId: STOP },
    ],
    ['greedy', { maxNewTokens: 20, temperature: 0, topK: 0, seed: 1, stopId: STOP }],
  ] as [string, SampleOptions][]) {
    it(`gives exactly the tokens and log-probs of unshared sampling (${name})`, async () => {
      const m = model();
      const before = tf.memory().numTensors;
      const shared = await new KvCacheSampler(m).sample(prompts, options);
      expect(tf.memory().numTensors).toBe(before);
      const alone = await new FullRecomputeSampler(m).sample(prompts, options);
      expect(shared.tokens).toEqual(alone.tokens);
      expect(shared.finished).toEqual(alone.finished);
      shared.logProbs.forEach((row, r) => {
        row.forEach((value, t) => {
          expect(value).toBeCloseTo(alone.logProbs[r]![t]!, 5);
        });
      });
      // Rows of one prompt still draw from their own streams.
      if (options.temperature > 0)
        expect(new Set(shared.tokens.slice(0, 3).map(String)).size).toBeGreaterThan(1);
    });
  }

  it('rows that finish early stop costing work, and rows at the context end stop there', async () => {
    const m = model();
    const options: SampleOptions = {
      maxNewTokens: 40,
      temperature: 1,
      topK: 0,
      seed: 2,
      stopId: STOP,
    };
    const shared = await new KvCacheSampler(m).sample(prompts, options);
    const alone = await new FullRecomputeSampler(m).sample(prompts, options);
    expect(shared.tokens).toEqual(alone.tokens);
    shared.tokens.forEach((row, r) => {
      expect(row.length).toBeLessThanOrEqual(32 - prompts[r]!.length);
    });
  });
});
