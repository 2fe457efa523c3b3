// The device engine behind rollout/kvSampler.ts (gpu/engine/kernelEngine.ts, the lab's GPT-2
// on the kernels' one model: kernelRoles.ts): on when asked (software adapters only on
// request), the same samples as the host path for the same seed, and a device destroyed in the
// middle of a call: that call and the rest of the run continue on the tfjs backend with the
// same streams. The same for RoleTrainer's update; the sampler and the trainer share the one
// copy of the weights on the device.
import * as tf from '@tensorflow/tfjs-core'; // first: its ops must load before register_all_gradients (backend.ts)
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type BackendReport, initBackend, onBackendChange } from '../../src/gpu/backend';
import {
  destroyKernelDevice,
  disableKernelEngine,
  enableKernelEngine,
  kernelEngineReport,
} from '../../src/gpu/engine/kernelEngine';
import { roleDeviceCalls } from '../../src/gpu/engine/kernelRoles';
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
    // Two end tokens (self-plan's plan ends at <|code|> or the end): every row ends at the
    // first of its stops.
    const stops = { ...options, stopId: host.tokens[0]![3]!, stopIds: [host.tokens[1]![2]!] };
    const hostStops = await new KvCacheSampler(model).sample(prompts, stops);
    expect(hostStops.tokens[0]!.length).toBeLessThanOrEqual(4);
    expect(hostStops.tokens[1]!.length).toBeLessThanOrEqual(3);
    if (opened.gpu.software) {
      const off = await enableKernelEngine({ device: opened.gpu });
      expect(off.enabled).toBe(false);
      expect(off.reason).toMatch(/software/);
    }
    const on = await enableKernelEngine({ device: opened.gpu, allowSoftware: true });
    expect(on.enabled).toBe(true);
    const calls = roleDeviceCalls.sample;
    const device = await new KvCacheSampler(model).sample(prompts, options);
    expect(roleDeviceCalls.sample).toBe(calls + 1);
    expect(device.tokens).toEqual(host.tokens);
    // The decode kernel honours both stops: the host's tokens.
    const deviceStops = await new KvCacheSampler(model).sample(prompts, stops);
    expect(roleDeviceCalls.sample).toBe(calls + 2);
    expect(deviceStops.tokens).toEqual(hostStops.tokens);
    expect(deviceStops.finished).toEqual(hostStops.finished);
    disableKernelEngine();
  });

  it('a device destroyed mid-call: the call and the next ones finish on the tfjs backend', async (ctx) => {
    const opened = await openKernelDevice();
    if (!opened.ok) return ctx.skip(`no WebGPU adapter: ${opened.why}`);
    const host = await new KvCacheSampler(model).sample(prompts, options);
    expect((await enableKernelEngine({ device: opened.gpu, allowSoftware: true })).enabled).toBe(
      true,
    );
    const calls = roleDeviceCalls.sample;
    const pending = new KvCacheSampler(model).sample(prompts, options);
    setTimeout(() => opened.gpu.device.destroy(), 30);
    const survived = await pending;
    expect(survived.tokens).toEqual(host.tokens);
    const report = kernelEngineReport();
    expect(report.enabled).toBe(false);
    expect(report.reason).toMatch(/device (failed|was lost)/);
    const next = await new KvCacheSampler(model).sample(prompts, options);
    expect(next.tokens).toEqual(host.tokens);
    expect(roleDeviceCalls.sample).toBe(calls); // neither call was answered by the lost device
  });
});

describe('the backend a run chooses', () => {
  it('auto keeps the kernels off a software adapter, kernels takes it, and a lost device says so once', async (ctx) => {
    const opened = await openKernelDevice();
    if (!opened.ok) return ctx.skip(`no WebGPU adapter: ${opened.why}`);
    const auto = await initBackend('auto');
    expect(auto.kernels ?? false).toBe(!opened.gpu.software);
    const kernels = await initBackend('kernels');
    expect(kernels.kernels).toBe(true);
    expect(kernels.reason).toMatch(/lab's WebGPU kernels/);
    // On a software adapter the tfjs side is the CPU fallback, not tfjs's slow webgpu.
    if (opened.gpu.software) expect(kernels.backend).toBe('wasm');
    const changes: { report: BackendReport; why: string }[] = [];
    const stop = onBackendChange((report, why) => changes.push({ report, why }));
    expect(destroyKernelDevice()).toBe(true);
    await expect.poll(() => changes.length).toBe(1);
    stop();
    expect(changes[0]?.why).toMatch(/device was lost/);
    expect(changes[0]?.report).toMatchObject({ backend: kernels.backend, kernels: false });
    expect(kernelEngineReport().enabled).toBe(false);
    // The run goes on where the tfjs backend is: the same samples as a host-only run.
    const host = await new KvCacheSampler(model).sample(prompts, options);
    expect(host.tokens.length).toBe(prompts.length);
    // The next start opens a fresh device (a lost one is not handed out again).
    expect((await initBackend('kernels')).kernels).toBe(true);
    const reference = await initBackend('tfjs-webgpu');
    expect(reference).toMatchObject({ backend: 'webgpu' });
    expect(reference.kernels ?? false).toBe(false);
    expect(kernelEngineReport().enabled).toBe(false);
    await initBackend('cpu');
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
    const calls = roleDeviceCalls.update;
    const got1 = await trainer.update(seqs(1));
    expect(roleDeviceCalls.update).toBe(calls + 1); // the device ran it
    expect(Math.abs(got1.metrics.loss - want1.metrics.loss)).toBeLessThan(1e-5);
    await expectSameWeights(hostAfter1, engined);
    const pending = trainer.update(seqs(2));
    opened.gpu.device.destroy(); // the update has submitted its first work and awaits it
    const got2 = await pending;
    expect(kernelEngineReport().enabled).toBe(false);
    expect(roleDeviceCalls.update).toBe(calls + 1); // the second ran on tfjs
    expect(Math.abs(got2.metrics.loss - want2.metrics.loss)).toBeLessThan(1e-4);
    await expectSameWeights(host, engined);
    hostTrainer.dispose();
    trainer.dispose();
  });

  it('the sampler and the trainer share one device copy: no upload after a device update, one after tfjs moves', async (ctx) => {
    const opened = await openKernelDevice();
    if (!opened.ok) return ctx.skip(`no WebGPU adapter: ${opened.why}`);
    const values = await readValues(model.params); // the peaked model: samples robust to float noise
    const shared: GPT = { config: model.config, params: makeVariables(model.config, values) };
    const trainer = new RoleTrainer(shared, {
      ...trainOptions,
      loss: { ...trainOptions.loss, beta: 0 },
    });
    expect((await enableKernelEngine({ device: opened.gpu, allowSoftware: true })).enabled).toBe(
      true,
    );
    const uploads = roleDeviceCalls.uploads;
    await new KvCacheSampler(shared).sample(prompts, options);
    expect(roleDeviceCalls.uploads).toBe(uploads + 1); // first use
    await new KvCacheSampler(shared).sample(prompts, options);
    expect(roleDeviceCalls.uploads).toBe(uploads + 1); // unchanged weights stay on the device
    const updates = roleDeviceCalls.update;
    await trainer.update(seqs(1));
    expect(roleDeviceCalls.update).toBe(updates + 1);
    const afterUpdate = await new KvCacheSampler(shared).sample(prompts, options);
    expect(roleDeviceCalls.uploads).toBe(uploads + 1); // the update left the copy current
    const valuesAfterUpdate = await readValues(shared.params);
    // tfjs's weights move without the device: the next call uploads them.
    const [, first] = [...shared.params][0]!;
    first.assign(tf.mul(first, 1)); // same values, new tensor data (a clone would share it)
    await new KvCacheSampler(shared).sample(prompts, options);
    expect(roleDeviceCalls.uploads).toBe(uploads + 2);
    await trainer.update(seqs(2)); // re-reads Adam's state from the host, then runs on the device
    expect(roleDeviceCalls.update).toBe(updates + 2);
    // What the device sampled after its update is what tfjs samples from the written-back weights.
    disableKernelEngine();
    const onHost: GPT = {
      config: model.config,
      params: makeVariables(model.config, valuesAfterUpdate),
    };
    expect((await new KvCacheSampler(onHost).sample(prompts, options)).tokens).toEqual(
      afterUpdate.tokens,
    );
    trainer.dispose();
  });
});
