// shaders/decode.wgsl through src/gpu/engine/deviceSampler.ts: the device's batched KV-cache
// decode (fused layers, on-device temperature / top-k / seeded draw) against the host's
// KvCacheSampler (tfjs cpu) on the same weights, prompts and seed.
import { beforeAll, describe, expect, it } from 'vitest';
import { initBackend } from '../../src/gpu/backend';
import { DeviceModel } from '../../src/gpu/engine/deviceModel';
import { DeviceSampler, rowStreamState } from '../../src/gpu/engine/deviceSampler';
import { makeConfig } from '../../src/model/config';
import type { GPT } from '../../src/model/gpt';
import { initialValues, makeVariables } from '../../src/model/params';
import { KvCacheSampler } from '../../src/rollout/kvSampler';
import { rowPrng } from '../../src/rollout/pick';
import { Rng } from '../../src/tasks/random';
import { kernelRuntime, needRuntime } from './kernels-harness';

const h = kernelRuntime();
beforeAll(async () => {
  await initBackend('cpu');
});

describe('device decode vs the host KV-cache sampler', () => {
  it("the device's row streams start where rowPrng's do", () => {
    for (const [seed, row] of [
      [0, 0],
      [7, 3],
      [0xffffffff, 100],
    ] as [number, number][]) {
      const host = rowPrng(seed, row);
      const state = rowStreamState(seed, row);
      expect(new Rng(state).next()).toBe(host.next());
    }
  });

  for (const [label, temperature, topK, rowThreads, rowsPerGroup] of [
    ['greedy', 0, 0, 64, 1],
    ['T = 1', 1, 0, 64, 1],
    ['T = 1, 16 invocations per row', 1, 0, 16, 1],
    ['T = 0.7, top-k 5', 0.7, 5, 16, 1],
    ['T = 1, rows in chunks of 4', 1, 0, 16, 1],
    ['T = 1, rows sharing prompts (each prefilled once)', 1, 0, 16, 1],
    ['greedy, 4 rows per workgroup', 0, 0, 16, 4],
    ['T = 0.7, top-k 5, 4 rows per workgroup (6 rows: one group half empty)', 0.7, 5, 16, 4],
    ['T = 1, 3 rows per workgroup, 64 invocations', 1, 0, 64, 3],
  ] as [string, number, number, number, number][]) {
    it(`${label}: the same tokens and log-probs for every row`, async (ctx) => {
      const rt = needRuntime(h, ctx);
      // The tiny preset's width and depth, a small vocabulary, a short context.
      const config = makeConfig('tiny', 23, 'shared', { nCtx: 40 });
      const values = initialValues(config, 5);
      // Larger embeddings make the distributions peaked enough to be interesting.
      for (const v of values.get('transformer.wte.weight')!.entries())
        values.get('transformer.wte.weight')![v[0]] = v[1] * 40;
      const model: GPT = { config, params: makeVariables(config, values) };
      const prng = new Rng(11);
      let prompts = [3, 1, 7, 7, 12, 2].map((n) =>
        Array.from({ length: n }, () => 1 + prng.below(22)),
      );
      // As GRPO's groups: rows 0, 2, 4 share one prompt, 1 and 5 another; row 3 alone.
      const sharing = label.includes('sharing');
      if (sharing) prompts = [0, 1, 0, 3, 0, 1].map((i) => [...prompts[i]!]);
      // A stop token that row 1 meets at its 5th token at the latest: rows finish at different steps.
      const free = { maxNewTokens: 20, temperature, topK, seed: 99, stopId: 0xffff };
      const stopId = (await new KvCacheSampler(model).sample(prompts, free)).tokens[1]![4]!;
      const options = { ...free, stopId };
      const host = await new KvCacheSampler(model).sample(prompts, options);
      expect(host.finished[1]).toBe(true);
      const sampler = new DeviceSampler(new DeviceModel(rt, config, values), {
        rowThreads,
        rowsPerGroup,
      });
      expect(sampler.rowsPerGroup).toBe(rowsPerGroup);
      sampler.tokensPerRead = 6;
      // Four rows' caches per chunk: the six rows run as two chunks, each row on its own stream.
      if (label.includes('chunks'))
        sampler.maxCacheBytes = 4 * config.nLayer * 40 * config.nEmbd * 4;
      const gpu = await sampler.sample(prompts, options);
      expect(gpu.tokens).toEqual(host.tokens);
      expect(gpu.tokens.flat().length).toBeGreaterThan(20); // rows do generate
      if (temperature > 0 && !sharing) expect(new Set(gpu.tokens.flat()).size).toBeGreaterThan(3);
      expect(gpu.finished).toEqual(host.finished);
      gpu.logProbs.forEach((row, b) => {
        row.forEach((lp, i) => {
          expect(Math.abs(lp - (host.logProbs[b]![i] ?? 0)), `row ${b} token ${i}`).toBeLessThan(
            1e-3,
          );
        });
      });
      // Shared prompts are prefilled once; the log-probs above show each row read its own.
      expect(sampler.last.prefillRows).toBe(sharing ? 3 : 6);
      // L layers + 1 sampler per token; one submission per 6 tokens (and the prefill).
      expect(sampler.last.dispatchesPerToken).toBe(config.nLayer + 1);
      const chunks = label.includes('chunks') ? 2 : 1;
      expect(sampler.last.submissions).toBeLessThanOrEqual(
        3 * chunks + 2 * Math.ceil(sampler.last.steps / 6),
      );
      for (const v of model.params.values()) v.dispose();
    });
  }
});
