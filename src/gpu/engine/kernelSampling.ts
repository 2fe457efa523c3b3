// The lab's own WebGPU engine behind the existing sampler: once enabled (where a real adapter
// exists, or on request), rollout/kvSampler.ts hands every sample() to the device
// (deviceSampler.ts) — weights synced from the tfjs model on each call, so the trainer may run
// on any tfjs backend. A lost device (or any device error) turns the engine off for the rest of
// the run and the call returns null: the caller samples on its own backend (wasm on a CPU),
// from the same step, with the same seeded streams.
import type { GPT } from '../../model/gpt';
import { readValues } from '../../model/params';
import type { SampleOptions, SampleResult } from '../../rollout/types';
import { getKernelDevice, type KernelDevice } from '../kernels/device';
import { DeviceModel } from './deviceModel';
import { DeviceSampler } from './deviceSampler';
import { type MatmulVersion, SHADERS } from './ops';
import { GpuRuntime } from './runtime';
import { tuneMatmul } from './tune';

export interface KernelEngineReport {
  enabled: boolean;
  adapter: string;
  reason: string;
}

interface Engine {
  gpu: KernelDevice;
  rt: GpuRuntime;
  /** The matmul version this driver runs fastest (tune.ts). */
  matmul: MatmulVersion;
  models: WeakMap<GPT, { dm: DeviceModel; sampler: DeviceSampler }>;
  lost: string | null;
}

let engine: Engine | null = null;
/** sample() calls the device answered (for tests and the backend line). */
let deviceCalls = 0;

export function deviceSampleCalls(): number {
  return deviceCalls;
}
let report: KernelEngineReport = { enabled: false, adapter: '', reason: 'not enabled' };

/**
 * Turns the device engine on where a real (non-software) adapter exists; `allowSoftware`
 * accepts SwiftShader / lavapipe too (tests, benches). `device` replaces the shared one.
 */
export async function enableKernelEngine(
  options: { allowSoftware?: boolean; device?: KernelDevice } = {},
): Promise<KernelEngineReport> {
  let gpu = options.device;
  if (!gpu) {
    const opened = await getKernelDevice();
    if (!opened.ok) return setReport(false, '', `no WebGPU adapter (${opened.why})`);
    gpu = opened.gpu;
  }
  if (gpu.software && !options.allowSoftware)
    return setReport(false, gpu.adapter, 'a software adapter only: tfjs wasm is faster on a CPU');
  const rt = new GpuRuntime(gpu.device);
  try {
    await rt.load([...SHADERS]);
  } catch (error) {
    // The browser has no shader loader yet (kernels/loadShader.ts reads shaders/ from disk).
    return setReport(false, gpu.adapter, `shaders not loaded (${String(error)})`);
  }
  const current: Engine = {
    gpu,
    rt,
    matmul: await tuneMatmul(rt),
    models: new WeakMap(),
    lost: null,
  };
  engine = current;
  void gpu.device.lost.then((info) => {
    current.lost = info.message || info.reason;
  });
  return setReport(true, gpu.adapter, "sampling and updates on the lab's WebGPU kernels");
}

export function disableKernelEngine(): void {
  engine = null;
  setReport(false, report.adapter, 'turned off');
}

/** The engine while it is on (its runtime), for the device trainer. */
export function kernelEngine(): {
  rt: GpuRuntime;
  gpu: KernelDevice;
  matmul: MatmulVersion;
} | null {
  return engine && !engine.lost ? engine : null;
}

/** A device call failed: the engine is off for the rest of the run. */
export function markEngineFailed(e: object, error: unknown): void {
  if (engine !== e) return;
  const failed = engine;
  engine = null;
  const why = error instanceof Error ? error.message : String(error);
  setReport(
    false,
    failed.gpu.adapter,
    `the GPU device failed (${why}); the run continues on the tfjs backend`,
  );
}

export function kernelEngineReport(): KernelEngineReport {
  return report;
}

function setReport(enabled: boolean, adapter: string, reason: string): KernelEngineReport {
  report = { enabled, adapter, reason };
  return report;
}

/** Samples on the device, or returns null when the engine is off or the device failed. */
/** Whether the fused kernels hold this model's shape (width ≤ 256, head size ≤ 64). */
export function deviceHoldsModel(config: GPT['config']): boolean {
  return config.nEmbd <= 256 && config.nEmbd / config.nHead <= 64;
}

export async function sampleOnDevice(
  model: GPT,
  prompts: number[][],
  options: SampleOptions,
): Promise<SampleResult | null> {
  const e = engine;
  if (!e) return null;
  const c = model.config;
  if (!deviceHoldsModel(c) || (options.topK > 64 && options.topK < c.vocabSize)) return null; // shapes the fused kernels do not hold: the host sampler takes them
  if (prompts.some((p) => p.length === 0 || p.length > c.nCtx)) return null; // the host says why
  try {
    if (e.lost) throw new Error(e.lost);
    const values = await readValues(model.params);
    let entry = e.models.get(model);
    if (!entry) {
      const dm = new DeviceModel(e.rt, c, values);
      dm.matmulVersion = e.matmul;
      entry = { dm, sampler: new DeviceSampler(dm, { software: e.gpu.software }) };
      e.models.set(model, entry);
    } else entry.dm.writeParams(values);
    const result = await entry.sampler.sample(prompts, options);
    if (e.lost) throw new Error(e.lost);
    deviceCalls++;
    return result;
  } catch (error) {
    if (engine === e) {
      engine = null;
      const why = error instanceof Error ? error.message : String(error);
      setReport(
        false,
        e.gpu.adapter,
        `the GPU device failed (${why}); sampling continues on the tfjs backend`,
      );
    }
    return null;
  }
}
