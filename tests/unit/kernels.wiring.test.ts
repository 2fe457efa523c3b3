// The device engine behind rollout/kvSampler.ts (gpu/engine/kernelSampling.ts): on when asked
// (software adapters only on request), the same samples as the host path for the same seed,
// and a device destroyed in the middle of a call: that call and the rest of the run continue on
// the tfjs backend with the same streams. The same for RoleTrainer's update.
import '@tensorflow/tfjs-core'; // first: its ops must load before register_all_gradients (backend.ts)
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { initBackend } from '../../src/gpu/backend';
import {
  deviceSampleCalls,
  disableKernelEngine,
  enableKernelEngine,
  kernelEngineReport,
} from '../../src/gpu/engine/kernelSampling';
import { deviceUpdateCalls } from '../../src/gpu/engine/kernelTraining';
import { openKernelDevice } from '../../src/gpu/kernels/device';
import { makeConfig } from '../../src/model/config';
import type { GPT } from '../../src/model/gpt';
import { initialValues, makeVariables, readValues } from '../../src/model/params';
import { type PolicySequence, RoleTrainer, type RoleTrainerOptions } from '../../src/rl/trainer';
import { KvCacheSampler } from '../../src/rollout/kvSampler';
import { Rng } from '../../src/tasks/random';

let model: GPT;
const prng = new Rng(3);
const prompts = [5, 9, 2, 9].map((n) => Array.from({ length: n }, () => 1 + prng.below(30)));
const options = { maxNewTokens: 12, temperature: 0.8, topK: 0, seed: 17, stopId: 0xffff };

beforeAll(async () => {
  await initBackend('cpu');
  const config = makeConfig('tiny', 31, 'shared', { nCtx: 40 });
  const values = initialValues(config, 9);
  const wte = values.get('transformer.wte.weight')!;
  for (let i = 0; i < wte.length; i++) wte[i] = (wte[i] ?? 0) * 30;
  model = { config, params: makeVariables(config, values) };
});
afterAll(() => disableKernelEngine());

describe('the WebGPU engine behind KvCacheSampler', () => {
  it('stays off on a software adapter unless asked; on request it samples what the host samples', async (ctx) => {
    const opened = await openKernelDevice();
    if (!opened.ok) return ctx.skip(`no WebGPU adapter: ${opened.why}`);
    const host = await new KvCacheSampler(model).sample(prompts, options);
    if (opened.gpu.software) {
      const off = await enableKernelEngine({ device: opened.gpu });
      expect(off.enabled).toBe(false);
      expect(off.reason).toMatch(/software/);
    }
    const on = await enableKernelEngine({ device: opened.gpu, allowSoftware: true });
    expect(on.enabled).toBe(true);
    const calls = deviceSampleCalls();
    const device = await new KvCacheSampler(model).sample(prompts, options);
    expect(deviceSampleCalls()).toBe(calls + 1);
    expect(device.tokens).toEqual(host.tokens);
    disableKernelEngine();
  });

  it('a device destroyed mid-call: the call and the next ones finish on the tfjs backend', async (ctx) => {
    const opened = await openKernelDevice();
    if (!opened.ok) return ctx.skip(`no WebGPU adapter: ${opened.why}`);
    const host = await new KvCacheSampler(model).sample(prompts, options);
    expect((await enableKernelEngine({ device: opened.gpu, allowSoftware: true })).enabled).toBe(
      true,
    );
    const calls = deviceSampleCalls();
    const pending = new KvCacheSampler(model).sample(prompts, options);
    setTimeout(() => opened.gpu.device.destroy(), 30);
    const survived = await pending;
    expect(survived.tokens).toEqual(host.tokens);
    const report = kernelEngineReport();
    expect(report.enabled).toBe(false);
    expect(report.reason).toMatch(/device failed/);
    const next = await new KvCacheSampler(model).sample(prompts, options);
    expect(next.tokens).toEqual(host.tokens);
    expect(deviceSampleCalls()).toBe(calls); // neither call was answered by the lost device
  });
});

describe('the WebGPU engine behind RoleTrainer', () => {
  const trainOptions: RoleTrainerOptions = {
    learningRate: 1e-3,
    temperature: 0.8,
    numIterations: 1,
    maxGradNorm: 1,
    loss: { lossType: 'dapo', epsilonLow: 0.2, epsilonHigh: 0.28, beta: 0.04 },
    padId: 0,
    memoryBudgetBytes: 1 << 30,
  };
  const seqs = (seed: number): PolicySequence[] => {
    const r = new Rng(seed);
    return Array.from({ length: 5 }, (_, g) => {
      const completion = Array.from({ length: 3 + g }, () => 1 + r.below(30));
      return {
        prompt: Array.from({ length: 4 + g }, () => 1 + r.below(30)),
        completion,
        oldLogProbs: completion.map(() => -3.4 + (r.next() - 0.5) * 0.5),
        advantage: (r.next() - 0.5) * 2,
      };
    });
  };
  /** Adam's first steps move weights by ≈ lr·sign(g): float32-noise gradients may flip. */
  async function expectSameWeights(a: GPT | Map<string, Float32Array>, b: GPT) {
    const x = a instanceof Map ? a : await readValues(a.params);
    const y = await readValues(b.params);
    let off = 0;
    let total = 0;
    for (const [name, ref] of x) {
      const got = y.get(name)!;
      for (let i = 0; i < ref.length; i++) {
        const diff = Math.abs((got[i] ?? 0) - (ref[i] ?? 0));
        expect(diff, name).toBeLessThan(4.2 * trainOptions.learningRate);
        if (diff > 2e-5) off++;
        total++;
      }
    }
    expect(off / total, `${off} of ${total} weights differ`).toBeLessThan(0.02);
  }

  it('updates on the device like on tfjs; a device destroyed mid-update: that update runs on tfjs', async (ctx) => {
    const opened = await openKernelDevice();
    if (!opened.ok) return ctx.skip(`no WebGPU adapter: ${opened.why}`);
    // Unscaled initial weights: the sampling tests' peaked model has ~1e-13 gradients.
    const values = initialValues(model.config, 10);
    const host: GPT = { config: model.config, params: makeVariables(model.config, values) };
    const engined: GPT = { config: model.config, params: makeVariables(model.config, values) };
    const hostTrainer = new RoleTrainer(host, trainOptions);
    const trainer = new RoleTrainer(engined, trainOptions);
    // The tfjs updates first, with the engine off (it serves every RoleTrainer while on).
    const want1 = await hostTrainer.update(seqs(1));
    const hostAfter1 = await readValues(host.params);
    const want2 = await hostTrainer.update(seqs(2));
    expect((await enableKernelEngine({ device: opened.gpu, allowSoftware: true })).enabled).toBe(
      true,
    );
    const calls = deviceUpdateCalls();
    const got1 = await trainer.update(seqs(1));
    expect(deviceUpdateCalls()).toBe(calls + 1); // the device ran it
    expect(Math.abs(got1.metrics.loss - want1.metrics.loss)).toBeLessThan(1e-5);
    await expectSameWeights(hostAfter1, engined);
    const pending = trainer.update(seqs(2));
    opened.gpu.device.destroy(); // the update has submitted its first work and awaits it
    const got2 = await pending;
    expect(kernelEngineReport().enabled).toBe(false);
    expect(deviceUpdateCalls()).toBe(calls + 1); // the second ran on tfjs
    expect(Math.abs(got2.metrics.loss - want2.metrics.loss)).toBeLessThan(1e-4);
    await expectSameWeights(host, engined);
    hostTrainer.dispose();
    trainer.dispose();
  });
});
