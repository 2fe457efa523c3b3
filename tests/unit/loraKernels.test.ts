// GPT-2 with a LoRA adapter samples on the lab's kernels (SwiftShader here): the device's copy of
// the role holds its Conv1D weights with the adapter merged (W + (alpha/r)·(B·A)ᵀ, as PEFT
// merges), so the fused decode draws what the tfjs sampler draws over the unmerged forward;
// after the adapter changes (its update runs on tfjs), the next sampling uploads the new merge;
// the base's tfjs values stay as they were.
import * as tf from '@tensorflow/tfjs-core';
import { describe, expect, it } from 'vitest';
import { initBackend } from '../../src/gpu/backend';
import {
  deviceSampleCalls,
  deviceWeightUploads,
  kernelEngine,
} from '../../src/gpu/engine/kernelSampling';
import { createModel, makeConfig, readValues } from '../../src/model';
import { createLora } from '../../src/model/gptLora';
import { KvCacheSampler } from '../../src/rollout';
import { Rng } from '../../src/tasks/random';

process.env.VK_ICD_FILENAMES ??= '/usr/lib/chromium/vk_swiftshader_icd.json';
process.env.XDG_RUNTIME_DIR ??= '/tmp';

describe('GPT-2 with LoRA on the kernels', () => {
  it('samples on the device what tfjs samples, the adapter merged into the device copy', async () => {
    const report = await initBackend('kernels');
    expect(report.kernels).toBe(true);
    const config = makeConfig('tiny', 31, 'coder', { nCtx: 48 });
    const model = createModel(config, 3);
    model.lora = createLora(
      config,
      { rank: 4, alpha: 8, targets: ['c_attn', 'c_proj', 'c_fc'] },
      5,
    );
    const randomize = (seed: number) => {
      const rng = new Rng(seed);
      for (const { b } of model.lora!.modules.values())
        b.assign(
          tf.tensor(
            Array.from({ length: b.size }, () => rng.normal() * 0.5),
            b.shape,
          ),
        );
    };
    randomize(7);
    const base = await readValues(model.params);
    const prng = new Rng(2);
    const prompts = [3, 5, 5, 1].map((n) => Array.from({ length: n }, () => 1 + prng.below(29)));
    const options = { maxNewTokens: 12, temperature: 1, topK: 0, seed: 4, stopId: 0 };

    const calls = deviceSampleCalls();
    const uploads = deviceWeightUploads();
    const first = await new KvCacheSampler(model).sample(prompts, options);
    expect(deviceSampleCalls()).toBe(calls + 1);
    randomize(8); // as an update on tfjs would
    const second = await new KvCacheSampler(model).sample(prompts, options);
    expect(deviceSampleCalls()).toBe(calls + 2);
    expect(deviceWeightUploads()).toBe(uploads + 2);
    // The frozen base is untouched by the merges.
    for (const [name, values] of await readValues(model.params))
      expect(Array.from(values), name).toEqual(Array.from(base.get(name)!));

    // The same draws on tfjs, over the adapter in the forward.
    await initBackend('wasm');
    expect(kernelEngine()).toBeNull();
    const onTfjs = await new KvCacheSampler(model).sample(prompts, options);
    expect(deviceSampleCalls()).toBe(calls + 2);
    expect(second.tokens).toEqual(onTfjs.tokens);
    expect(new Set(second.tokens.flat()).size).toBeGreaterThan(5);
    expect(first.tokens).not.toEqual(second.tokens); // the new adapter was used
    second.logProbs.forEach((row, r) => {
      row.forEach((lp, i) => {
        expect(Math.abs(lp - onTfjs.logProbs[r]![i]!), `row ${r} token ${i}`).toBeLessThan(1e-3);
      });
    });
  }, 120_000);
});
