// The Llama family's device forward (gpu/engine/deviceTransformer.ts) against a float64 forward of
// Hugging Face's semantics (llama-device-fixtures.ts) on random checkpoints: Qwen2-like (BF16,
// q/k/v bias, tied, GQA), Llama-like (F16, untied, GQA 4:1), Qwen3-like (F32, q/k norms,
// head_dim ≠ hidden/heads); the prefill's last logits and KV-cache decode steps after it; the
// head and embedding split over several bindings; bad checkpoints refused in words.

import { describe, expect, it } from 'vitest';
import type { WeightTensor } from '../../src/gpu/engine/deviceCheckpoint';
import { DeviceTransformer } from '../../src/gpu/engine/deviceTransformer';
import { sampleOnModel } from '../../src/gpu/engine/modelSampling';
import type { WeightDtype } from '../../src/gpu/engine/ops';
import type { LlamaConfig } from '../../src/model/families/llamaConfig';
import { llamaTransformerConfig } from '../../src/model/families/llamaConfig';
import { pickToken, rowPrng } from '../../src/rollout/pick';
import { Rng } from '../../src/tasks/random';
import { kernelRuntime, needRuntime } from './kernels-harness';
import {
  llamaConfig,
  llamaReferenceLogits,
  randomLlama,
  relativeToLargest,
} from './llama-device-fixtures';

const h = kernelRuntime();

const CASES: [string, Partial<LlamaConfig>, WeightDtype][] = [
  [
    'Qwen2-like: BF16, q/k/v bias, tied, GQA 2:1',
    { modelType: 'qwen2', attentionBias: true, ropeTheta: 1000000 },
    'BF16',
  ],
  [
    'Llama-like: F16, untied, GQA 4:1',
    { numHeads: 8, numKvHeads: 2, headDim: 4, tieWordEmbeddings: false, vocabSize: 97 },
    'F16',
  ],
  [
    'Qwen3-like: F32, q/k norms, head_dim 12 ≠ hidden/heads',
    { modelType: 'qwen3', qkNorm: true, headDim: 12, numHeads: 6, numKvHeads: 3, numLayers: 3 },
    'F32',
  ],
  [
    "Qwen3-0.6B's head: BF16, q/k norms, head_dim 128, 2 heads over 1 kv head",
    { modelType: 'qwen3', qkNorm: true, headDim: 128, numHeads: 2, numKvHeads: 1, numLayers: 2 },
    'BF16',
  ],
];

describe('device Llama forward', () => {
  for (const [name, over, dtype] of CASES)
    it(`${name}: prefill and decode logits match the float64 reference`, async (ctx) => {
      const rt = needRuntime(h, ctx);
      const config = llamaConfig(over);
      const weights = randomLlama(config, dtype, 5);
      const ids = [3, 17, 0, config.vocabSize - 1, 42, 8, 8];
      const model = new DeviceTransformer(rt, llamaTransformerConfig(config), weights, {
        contextLength: 16,
      });
      const prompt = ids.slice(0, 5);
      const got = await model.prefill(prompt);
      const [want] = llamaReferenceLogits(config, weights, prompt);
      expect(got.length).toBe(config.vocabSize);
      expect(relativeToLargest(got, want as Float64Array)).toBeLessThan(1e-4);
      for (let t = 5; t < ids.length; t++) {
        const step = await model.step(ids[t] as number);
        const [ref] = llamaReferenceLogits(config, weights, ids.slice(0, t + 1));
        expect(relativeToLargest(step, ref as Float64Array), `step ${t}`).toBeLessThan(1e-4);
      }
      // A second prompt starts over from an empty cache.
      const again = await model.prefill([9, 1]);
      const [ref2] = llamaReferenceLogits(config, weights, [9, 1]);
      expect(relativeToLargest(again, ref2 as Float64Array)).toBeLessThan(1e-4);
    });

  it("batched rows (prefilled, copied, decoded together) give each row's single-row logits to the bit", async (ctx) => {
    const rt = needRuntime(h, ctx);
    for (const [, over, dtype] of CASES) {
      const config = llamaConfig(over);
      const weights = randomLlama(config, dtype, 7);
      const model = new DeviceTransformer(rt, llamaTransformerConfig(config), weights, {
        contextLength: 80,
      });
      const p = [5, 7, 9, 11, 13];
      const q = [3, 4, 8];
      const alone = async (prompt: number[], next: number[]) => {
        const out = [await model.prefill(prompt)];
        for (const id of next) out.push(await model.step(id));
        return out;
      };
      const [p0, p1, p2] = await alone(p, [20, 21]);
      const [q0, q1, q2] = await alone(q, [30, 31]);
      // Rows: p prefilled, p copied from row 0, q prefilled; rows 3..4 left idle.
      model.batchCaches(5, 9);
      expect(await model.prefillRow(0, p)).toEqual(p0);
      model.copyRow(0, 1, p.length);
      expect(await model.prefillRow(2, q)).toEqual(q0);
      const first = await model.decodeRows([20, 20, 30], [5, 5, 3]);
      expect(first).toEqual([p1, p1, q1]);
      const second = await model.decodeRows([21, 21, 31], [6, 6, 4]);
      expect(second).toEqual([p2, p2, q2]);
      await expect(model.decodeRows([1], [64])).rejects.toThrow('positions must be 1..63');
    }
  });

  for (const [label, temperature, topK, threads] of [
    ['greedy', 0, 0, 16],
    ['T = 1', 1, 0, 64],
    ['T = 0.7, top-k 5', 0.7, 5, 16],
  ] as [string, number, number, number][])
    it(`drawn on the device (${label}): each row's tokens as pick.ts draws them from its single-row logits`, async (ctx) => {
      const rt = needRuntime(h, ctx);
      const config = llamaConfig({ modelType: 'qwen2', attentionBias: true });
      const weights = randomLlama(config, 'BF16', 13);
      const model = new DeviceTransformer(rt, llamaTransformerConfig(config), weights, {
        contextLength: 24,
      });
      // 18 rows (two batches of at most 16): rows 0, 2, 4 share a prompt, so do 1 and 5; row 3's
      // prompt leaves it 3 positions of the context; the rest alone.
      const prng = new Rng(3);
      const fresh = (n: number) => Array.from({ length: n }, () => prng.below(config.vocabSize));
      const [a, b] = [fresh(4), fresh(2)];
      const prompts = [
        a,
        b,
        a,
        fresh(21),
        a,
        b,
        ...Array.from({ length: 12 }, (_, i) => fresh(1 + (i % 5))),
      ];
      const free = { maxNewTokens: 8, temperature, topK, seed: 5, stopId: 0xffff };
      const reference = async (options: typeof free) => {
        const out: { tokens: number[]; logProbs: number[]; finished: boolean }[] = [];
        for (const [r, prompt] of prompts.entries()) {
          const stream = rowPrng(options.seed, r);
          const budget = Math.min(options.maxNewTokens, 24 - prompt.length);
          const row = { tokens: [] as number[], logProbs: [] as number[], finished: false };
          let logits = await model.prefill(prompt);
          for (;;) {
            const pick = pickToken(logits, options.temperature, options.topK, stream);
            row.tokens.push(pick.id);
            row.logProbs.push(pick.logProb);
            if (pick.id === options.stopId) row.finished = true;
            if (row.finished || row.tokens.length >= budget) break;
            logits = await model.step(pick.id);
          }
          out.push(row);
        }
        return out;
      };
      // A stop token row 1 meets at its 4th token: rows end at different steps.
      const stopId = (await reference(free))[1]!.tokens[3]!;
      const options = { ...free, stopId };
      const want = await reference(options);
      const got = await sampleOnModel(model, prompts, options, threads);
      expect(got.tokens).toEqual(want.map((r) => r.tokens));
      expect(got.finished).toEqual(want.map((r) => r.finished));
      expect(got.finished[1]).toBe(true);
      expect(got.tokens[3]).toHaveLength(3);
      if (temperature > 0) expect(new Set(got.tokens.flat()).size).toBeGreaterThan(10);
      got.logProbs.forEach((row, r) => {
        row.forEach((lp, i) => {
          expect(Math.abs(lp - want[r]!.logProbs[i]!), `row ${r} token ${i}`).toBeLessThan(1e-5);
        });
      });
    });

  it('embedding and head split over bindings (row ranges of 64) give the same logits', async (ctx) => {
    const rt = needRuntime(h, ctx);
    const config = llamaConfig({ vocabSize: 203, tieWordEmbeddings: false });
    const weights = randomLlama(config, 'BF16', 9);
    // 64 rows × 32 columns × 2 bytes: four ranges for 203 rows.
    const model = new DeviceTransformer(rt, llamaTransformerConfig(config), weights, {
      contextLength: 8,
      maxBindingBytes: 4096,
    });
    const ids = [202, 0, 64, 128, 127];
    const [want] = llamaReferenceLogits(config, weights, ids);
    expect(relativeToLargest(await model.prefill(ids), want as Float64Array)).toBeLessThan(1e-4);
  });

  it('refuses in words: a missing tensor, a wrong shape, ids outside the vocabulary, a long prompt', async (ctx) => {
    const rt = needRuntime(h, ctx);
    const config = llamaConfig({});
    const weights = randomLlama(config, 'BF16', 1);
    const missing = new Map(weights);
    missing.delete('model.layers.1.mlp.up_proj.weight');
    expect(() => new DeviceTransformer(rt, llamaTransformerConfig(config), missing)).toThrow(
      'the checkpoint has no tensor model.layers.1.mlp.up_proj.weight',
    );
    const wrong = new Map(weights);
    const t = weights.get('model.norm.weight') as WeightTensor;
    wrong.set('model.norm.weight', { ...t, shape: [31] });
    expect(() => new DeviceTransformer(rt, llamaTransformerConfig(config), wrong)).toThrow(
      'model.norm.weight has shape [31], the config says [32]',
    );
    expect(
      () => new DeviceTransformer(rt, llamaTransformerConfig(llamaConfig({ headDim: 6 })), weights),
    ).toThrow(/head size 6/);
    const model = new DeviceTransformer(rt, llamaTransformerConfig(config), weights, {
      contextLength: 4,
    });
    await expect(model.prefill([1, 101])).rejects.toThrow('token id 101 is outside the vocabulary');
    await expect(model.prefill([1, 2, 3, 4, 5])).rejects.toThrow('exceed the context of 4');
    await expect(model.step(1)).rejects.toThrow('prefill a prompt first');
  });
});

describe('the self-check of every config’s switches', () => {
  it('every entry passes on this device; logitsOnDevice runs them first', async (ctx) => {
    const rt = needRuntime(h, ctx);
    const { checksFor, runConfigChecks } = await import(
      '../../src/gpu/engine/selfCheck/checksByConfig'
    );
    const every = checksFor(null);
    expect(every.length).toBeGreaterThanOrEqual(10);
    expect((await runConfigChecks(rt, true, every)).filter((r) => !r.ok)).toEqual([]);
    const { logitsOnDevice } = await import('../../src/gpu/engine/deviceCalls');
    const config = llamaConfig({ modelType: 'qwen2', attentionBias: true });
    const weights = randomLlama(config, 'BF16', 12);
    const ids = [5, 6, 7];
    const [want] = llamaReferenceLogits(config, weights, ids);
    const got = await logitsOnDevice(llamaTransformerConfig(config), weights, ids);
    expect(relativeToLargest(got, want as Float64Array)).toBeLessThan(1e-4);
  });
});
