// GPT-2 with a LoRA adapter on the lab's kernels (SwiftShader here). Sampling: the role's sampling
// copy on the one model holds the base with the adapter merged in (W + (alpha/r)·(B·A)ᵀ, as PEFT
// merges), so the device draws what the tfjs sampler draws over the unmerged forward; after the
// adapter changes, the next sampling uploads the new merge; the base's tfjs values stay as they
// were; a role wider than the tiny presets (320, heads of 64) likewise. The update: the kernels' one model (devicePolicy.ts
// over GPT-2's switches) takes RoleTrainer's update, and two updates there leave the adapter,
// the loss's metrics and tfjs's Adam state where two updates on tfjs leave them.
import * as tf from '@tensorflow/tfjs-core';
import { describe, expect, it } from 'vitest';
import { initBackend } from '../../src/gpu/backend';
import { kernelEngine } from '../../src/gpu/engine/kernelEngine';
import { roleDeviceCalls } from '../../src/gpu/engine/kernelRoles';
import { createModel, type GPT, makeConfig, readValues } from '../../src/model';
import { gptTransformerConfig } from '../../src/model/config';
import { createLora } from '../../src/model/lora';
import { type PolicySequence, RoleTrainer, type RoleTrainerOptions } from '../../src/rl/trainer';
import { KvCacheSampler } from '../../src/rollout';
import { Rng } from '../../src/tasks/random';

process.env.VK_ICD_FILENAMES ??= '/usr/lib/chromium/vk_swiftshader_icd.json';
process.env.XDG_RUNTIME_DIR ??= '/tmp';

describe('GPT-2 with LoRA on the kernels', () => {
  it('samples on the device what tfjs samples, the adapter merged into the sampling copy', async () => {
    const report = await initBackend('kernels');
    expect(report.kernels).toBe(true);
    const config = makeConfig('tiny', 31, 'coder', { nCtx: 48 });
    const model = createModel(config, 3);
    model.lora = createLora(
      gptTransformerConfig(config),
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

    const calls = roleDeviceCalls.sample;
    const uploads = roleDeviceCalls.uploads;
    const first = await new KvCacheSampler(model).sample(prompts, options);
    expect(roleDeviceCalls.sample).toBe(calls + 1);
    const again = await new KvCacheSampler(model).sample(prompts, options);
    expect(again.tokens).toEqual(first.tokens);
    expect(roleDeviceCalls.uploads).toBe(uploads + 1); // the same adapter stays on the device
    randomize(8); // as an update on tfjs would
    const second = await new KvCacheSampler(model).sample(prompts, options);
    expect(roleDeviceCalls.sample).toBe(calls + 3);
    expect(roleDeviceCalls.uploads).toBe(uploads + 2);
    // The frozen base is untouched.
    for (const [name, values] of await readValues(model.params))
      expect(Array.from(values), name).toEqual(Array.from(base.get(name)!));

    // The same draws on tfjs, over the adapter in the forward.
    await initBackend('wasm');
    expect(kernelEngine()).toBeNull();
    const onTfjs = await new KvCacheSampler(model).sample(prompts, options);
    expect(roleDeviceCalls.sample).toBe(calls + 3);
    expect(second.tokens).toEqual(onTfjs.tokens);
    expect(new Set(second.tokens.flat()).size).toBeGreaterThan(5);
    expect(first.tokens).not.toEqual(second.tokens); // the new adapter was used
    second.logProbs.forEach((row, r) => {
      row.forEach((lp, i) => {
        expect(Math.abs(lp - onTfjs.logProbs[r]![i]!), `row ${r} token ${i}`).toBeLessThan(1e-3);
      });
    });
  }, 120_000);

  it('a LoRA role wider than the tiny presets (320, heads of 64) samples on the one model, adapter merged: tfjs’s draws', async () => {
    await initBackend('kernels');
    const config = makeConfig('tiny', 31, 'coder', { nCtx: 40, nEmbd: 320, nHead: 5 });
    const model = createModel(config, 3);
    model.lora = createLora(
      gptTransformerConfig(config),
      { rank: 4, alpha: 8, targets: ['c_attn', 'c_proj', 'c_fc'] },
      5,
    );
    const rng = new Rng(6);
    for (const { b } of model.lora.modules.values())
      b.assign(
        tf.tensor(
          Array.from({ length: b.size }, () => rng.normal() * 0.3),
          b.shape,
        ),
      );
    const prng = new Rng(2);
    const prompts = [4, 4, 2].map((n) => Array.from({ length: n }, () => 1 + prng.below(29)));
    const options = { maxNewTokens: 10, temperature: 1, topK: 0, seed: 4, stopId: 0 };
    const calls = roleDeviceCalls.sample;
    const onDevice = await new KvCacheSampler(model).sample(prompts, options);
    expect(roleDeviceCalls.sample).toBe(calls + 1);
    await initBackend('wasm');
    const onTfjs = await new KvCacheSampler(model).sample(prompts, options);
    expect(onDevice.tokens).toEqual(onTfjs.tokens);
    onDevice.logProbs.forEach((row, r) => {
      row.forEach((lp, i) => {
        expect(Math.abs(lp - onTfjs.logProbs[r]![i]!), `row ${r} token ${i}`).toBeLessThan(1e-3);
      });
    });
  }, 120_000);

  it('a role’s update runs on the kernels’ one model and lands where tfjs’s does: the adapter, the metrics, Adam’s state', async () => {
    const config = makeConfig('tiny', 31, 'coder', { nCtx: 40 });
    const make = (): GPT => {
      const model = createModel(config, 3);
      model.lora = createLora(
        gptTransformerConfig(config),
        { rank: 4, alpha: 8, targets: ['c_attn', 'c_proj', 'c_fc'] },
        5,
      );
      return model;
    };
    const prng = new Rng(9);
    const prompt = Array.from({ length: 6 }, () => 1 + prng.below(29));
    const sequences: PolicySequence[] = Array.from({ length: 4 }, (_, g) => {
      const completion = Array.from({ length: 3 + g }, () => 1 + prng.below(29));
      return {
        prompt,
        completion,
        oldLogProbs: completion.map(() => -Math.log(31) + (prng.next() - 0.5) * 0.5),
        advantage: g % 2 === 0 ? 1 : -1,
      };
    });
    const options: RoleTrainerOptions = {
      learningRate: 1e-2,
      temperature: 1,
      numIterations: 1,
      maxGradNorm: 1,
      loss: { lossType: 'grpo', epsilonLow: 0.2, epsilonHigh: 0.28, beta: 0.04 },
      padId: 0,
      memoryBudgetBytes: 1 << 30,
    };
    const run = async (backend: 'kernels' | 'wasm') => {
      await initBackend(backend);
      const model = make();
      const trainer = new RoleTrainer(model, options);
      const updates = [await trainer.update(sequences), await trainer.update(sequences)];
      const adapter = new Map<string, Float32Array>();
      for (const [module, pair] of model.lora?.modules ?? [])
        for (const [side, v] of [
          ['A', pair.a],
          ['B', pair.b],
        ] as const)
          adapter.set(`${module}.${side}`, (await v.data()) as Float32Array);
      const state = await trainer.exportState();
      trainer.dispose();
      return { updates, adapter, state };
    };
    const before = roleDeviceCalls.update;
    const device = await run('kernels');
    expect(roleDeviceCalls.update).toBe(before + 2);
    const host = await run('wasm');
    expect(roleDeviceCalls.update).toBe(before + 2);
    device.updates.forEach((u, i) => {
      const want = host.updates[i] as (typeof host.updates)[number];
      expect(Math.abs(u.gradNorm - want.gradNorm), `grad norm ${i}`).toBeLessThan(
        1e-4 * want.gradNorm,
      );
      for (const key of ['loss', 'kl'] as const)
        expect(
          Math.abs((u.metrics[key] ?? 0) - (want.metrics[key] ?? 0)),
          `${key} ${i}`,
        ).toBeLessThan(1e-5);
    });
    // B moved from 0 by two Adam steps; A by a little. Both as tfjs moved them.
    for (const [name, want] of host.adapter) {
      const got = device.adapter.get(name) as Float32Array;
      const largest = Math.max(...want.map(Math.abs));
      const worst = Math.max(...want.map((v, i) => Math.abs(v - (got[i] as number))));
      expect(worst, name).toBeLessThan(1e-3 * largest + 1e-6);
    }
    expect(device.state.iterations).toBe(2);
    expect(device.state.moments.length).toBe(host.state.moments.length);
    device.state.moments.forEach((m, i) => {
      const want = (host.state.moments[i] as typeof m).data;
      const largest = Math.max(...want.map(Math.abs));
      const worst = Math.max(...want.map((v, k) => Math.abs(v - (m.data[k] as number))));
      expect(worst, m.name).toBeLessThan(1e-2 * largest + 1e-12);
    });
  }, 120_000);
});
