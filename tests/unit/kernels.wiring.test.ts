// The device engine behind rollout/kvSampler.ts (gpu/engine/kernelSampling.ts): on when asked
// (software adapters only on request), the same samples as the host path for the same seed,
// and a device destroyed in the middle of a call: that call and the rest of the run continue on
// the tfjs backend with the same streams.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { initBackend } from '../../src/gpu/backend';
import {
  deviceSampleCalls,
  disableKernelEngine,
  enableKernelEngine,
  kernelEngineReport,
} from '../../src/gpu/engine/kernelSampling';
import { openKernelDevice } from '../../src/gpu/kernels/device';
import { makeConfig } from '../../src/model/config';
import type { GPT } from '../../src/model/gpt';
import { initialValues, makeVariables } from '../../src/model/params';
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
