// Sampling on the kernels' one model (gpu/engine/modelSampling.ts: batched KV-cache decode with
// the device's draw, shaders/decode.wgsl `pick`: temperature / top-k / the row's seeded stream)
// against the host's KvCacheSampler (tfjs cpu) on the same GPT-2 weights, prompts and seed.
import { beforeAll, describe, expect, it } from 'vitest';
import { initBackend } from '../../src/gpu/backend';
import { float32Tensors } from '../../src/gpu/engine/deviceCheckpoint';
import { rowStreamState } from '../../src/gpu/engine/deviceDraw';
import { DeviceTransformer } from '../../src/gpu/engine/deviceTransformer';
import { sampledCounts, sampleOnModel } from '../../src/gpu/engine/modelSampling';
import { gptTransformerConfig, makeConfig } from '../../src/model/config';
import type { GPT } from '../../src/model/gpt';
import { initialValues, makeVariables, parameterSpecs } from '../../src/model/params';
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

  for (const [label, temperature, topK, threads] of [
    ['greedy', 0, 0, 64],
    ['T = 1', 1, 0, 64],
    ['T = 1, 16 invocations per row', 1, 0, 16],
    ['T = 0.7, top-k 5', 0.7, 5, 16],
    ['T = 1, 18 rows: two batches of rows', 1, 0, 16],
    ['T = 1, rows sharing prompts (each prefilled once)', 1, 0, 16],
    ['T = 1, a trainable model: each layer one dispatch (decode_layer.wgsl)', 1, 0, 16],
    ['T = 0.7, top-k 5, a trainable model, 64 invocations', 0.7, 5, 64],
  ] as [string, number, number, number][]) {
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
      const lengths = label.includes('18 rows')
        ? [3, 1, 7, 7, 12, 2, 5, 4, 6]
        : [3, 1, 7, 7, 12, 2];
      let prompts = [...lengths, ...(label.includes('18 rows') ? lengths : [])].map((n) =>
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
      const shapes = new Map(parameterSpecs(config).map((p) => [p.name, p.shape]));
      const device = new DeviceTransformer(
        rt,
        gptTransformerConfig(config),
        float32Tensors(values, (name) => shapes.get(name)),
        {
          contextLength: config.nCtx,
          trainable: label.includes('trainable'),
          decodeThreads: threads,
        },
      );
      const prefilled = sampledCounts.prefilledTokens;
      const gpu = await sampleOnModel(device, prompts, options, threads);
      // A decode step after the pick: the feed, the token's embedding and its position's, then
      // each layer in one dispatch (a trainable model) or eight, the final norm and the head.
      const perLayer = label.includes('trainable') ? 1 : 8;
      const step = device.fedDecodeSpecs(2, rt.buffer(64));
      expect(step.length).toBe(3 + perLayer * config.nLayer + 2);
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
      const distinct = new Set(prompts.map((p) => p.join(',')));
      const distinctTokens = [...distinct].reduce((n, p) => n + p.split(',').length, 0);
      expect(sampledCounts.prefilledTokens - prefilled).toBe(distinctTokens);
      if (sharing) expect(distinct.size).toBe(3);
      for (const v of model.params.values()) v.dispose();
    });
  }
});
