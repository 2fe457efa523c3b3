// Chooses the tfjs backend once, at start: webgpu where an adapter exists, wasm (SIMD)
// otherwise; cpu is for unit tests. Reports what it chose, on which adapter, and why.
import * as tf from '@tensorflow/tfjs-core';
// After the core: the gradients need its flags registered (which a bundle of the two keeps
// only in this order).
import '@tensorflow/tfjs-core/dist/register_all_gradients';
import '@tensorflow/tfjs-backend-cpu';
import type { BackendChoice } from '../engine/types';
import { fewRowsReady } from '../model/fewRowsLinear';
import type { TransformerConfig } from '../model/transformerConfig';
import { buildGpuReport, type GpuReport } from './engine/gpuReport';
import {
  disableKernelEngine,
  enableKernelEngine,
  engineFor,
  type KernelEngineReport,
  kernelEngineReport,
  onKernelEngineOff,
} from './engine/kernelEngine';
import type { SelfCheckSummary } from './engine/selfCheck/types';
import { importNodeOnly, installNodeWebgpu, isNodeHost } from './host';

export type BackendName = 'webgpu' | 'wasm' | 'cpu';
export type { BackendChoice } from '../engine/types';

export interface BackendReport {
  /** The tfjs backend: it holds the models' weights, evaluates, and computes what the kernels do not. */
  backend: BackendName;
  /** The adapter's description (vendor, architecture, device), or the CPU path used. */
  adapter: string;
  reason: string;
  /** Whether the lab's own WebGPU kernels sample and update (then `adapter` is theirs). */
  kernels?: boolean;
  /**
   * The kernels' self-check on this adapter (engine/selfCheck/), when the kernels were tried:
   * how many kernels were checked, which failed, in how long.
   */
  selfCheck?: SelfCheckSummary;
  /** The GPU report (adapter, limits, every check, the tuner's picks), when the kernels were tried. */
  gpu?: GpuReport;
}

/** 'auto' tries webgpu, then wasm, then cpu. A named backend is used or an error thrown. */
export interface BackendOptions {
  /**
   * Browser: where the tfjs wasm binaries are served (a folder URL ending in '/', or a map
   * from file name to URL, as tfjs's setWasmPaths takes). Node finds them in node_modules.
   */
  wasmPaths?: string | Record<string, string>;
  /** Called when the kernels' self-check starts (the page says "checking the GPU kernels…"). */
  onSelfCheck?: () => void;
}

/**
 * Starts the backend a run asked for (types.ts' BackendChoice; 'webgpu' is the older name of
 * 'tfjs-webgpu'). auto and kernels put the lab's kernels in front of a tfjs backend (webgpu on
 * a real adapter, wasm otherwise); kernels takes software adapters too and throws where the
 * kernels cannot start. The report says what runs, on which adapter, and why.
 */
export async function initBackend(
  prefer: BackendChoice | 'webgpu' = 'auto',
  options: BackendOptions = {},
): Promise<BackendReport> {
  disableKernelEngine(); // each start chooses afresh
  const choice = prefer === 'webgpu' ? 'tfjs-webgpu' : prefer;
  const tfjsName = choice === 'tfjs-webgpu' ? 'webgpu' : choice === 'kernels' ? 'auto' : choice;
  tfjsReport = await initTfjsBackend(tfjsName, options);
  if (choice !== 'auto' && choice !== 'kernels') return tfjsReport;
  return withKernels(tfjsReport, choice === 'kernels', options.onSelfCheck);
}

/** The tfjs backend last started, for the report after the kernels turn off. */
let tfjsReport: BackendReport | null = null;

async function withKernels(
  report: BackendReport,
  required: boolean,
  onSelfCheck?: () => void,
): Promise<BackendReport> {
  let why: string;
  try {
    const kernels = await enableKernelEngine({
      allowSoftware: required,
      ...(onSelfCheck ? { onSelfCheck } : {}),
    });
    if (kernels.enabled) return kernelsOn(report, kernels);
    // A kernel failed its self-check: the run goes on on tfjs, even where the kernels were asked for.
    if (kernels.selfCheck && kernels.selfCheck.failed.length > 0)
      return { ...report, ...checked(kernels), kernels: false, reason: kernels.reason };
    why = kernels.reason;
  } catch (error) {
    why = String(error);
  }
  if (required) throw new Error(`the lab's WebGPU kernels cannot start: ${why}`);
  return report;
}

/** The report of the kernels on, over the tfjs backend `tfjs`. */
function kernelsOn(tfjs: BackendReport, kernels: KernelEngineReport): BackendReport {
  return {
    ...tfjs,
    ...checked(kernels),
    adapter: kernels.adapter,
    kernels: true,
    reason: `sampling and updates on the lab's WebGPU kernels, verified on this adapter (${kernels.selfCheck?.checks ?? 0} checks); tfjs ${tfjs.backend} holds the weights and evaluates (${tfjs.reason})`,
  };
}

/** The self-check's tally and the GPU report, where a self-check ran. */
function checked(kernels: KernelEngineReport): Pick<BackendReport, 'selfCheck' | 'gpu'> {
  return kernels.selfCheck
    ? { selfCheck: kernels.selfCheck, gpu: buildGpuReport() ?? undefined }
    : {};
}

/**
 * A base of this config is about to reach the kernels: the checks its switches need beyond the
 * start's run now (once per engine; a GPT-2 run's start does not pay for them), so what the run
 * reports at its start includes them (null: every such check, as the GPU report lists them).
 * The report after: those checks added, or the kernels off, with the failed kernel and its
 * numbers, where one failed (the run goes on on tfjs).
 */
export async function checkKernelsForBase(
  report: BackendReport,
  config: TransformerConfig | null,
): Promise<BackendReport> {
  if (!report.kernels) return report;
  const on = (await engineFor(config)) !== null;
  const kernels = kernelEngineReport();
  const tfjs = tfjsReport ?? report;
  if (on) return kernelsOn(tfjs, kernels);
  return {
    ...tfjs,
    ...checked(kernels),
    kernels: false,
    reason: `the lab's kernels stopped: ${kernels.reason}`,
  };
}

/**
 * Called with the new report when the kernels turn themselves off mid-run (a lost or failed
 * device): the tfjs backend carries on from the last finished step. Returns an unsubscribe.
 */
export function onBackendChange(
  listener: (report: BackendReport, why: string) => void,
): () => void {
  return onKernelEngineOff((off, why) => {
    const base = tfjsReport ?? { backend: 'cpu' as const, adapter: '', reason: '' };
    listener(
      {
        ...base,
        ...checked(off),
        kernels: false,
        reason: `the lab's kernels stopped: ${off.reason}`,
      },
      why,
    );
  });
}

async function initTfjsBackend(
  prefer: BackendName | 'auto',
  options: BackendOptions,
): Promise<BackendReport> {
  wasmPathsOption = options.wasmPaths;
  // PROD silences tfjs's "install tfjs-node" banner, which would pollute CLI output.
  if (isNodeHost) tf.env().set('PROD', true);
  if (prefer === 'cpu') return startCpu('asked for cpu');
  if (prefer === 'webgpu' || prefer === 'auto') {
    // 'auto' passes over software adapters (SwiftShader, lavapipe): on a CPU, tfjs wasm
    // is several times faster than tfjs webgpu on them (TESTING.md's speed table).
    const gpu = await webgpuReport(prefer === 'auto');
    if (gpu.ok) return gpu.report;
    if (prefer === 'webgpu') throw new Error(`webgpu unavailable: ${gpu.why}`);
    const wasm = await tryWasm(`no WebGPU adapter (${gpu.why}); wasm SIMD is the CPU fallback`);
    if (wasm) return wasm;
    return startCpu(`no WebGPU adapter (${gpu.why}) and wasm failed to start`);
  }
  const wasm = await tryWasm('asked for wasm');
  if (!wasm) throw new Error('wasm backend failed to start');
  return wasm;
}

async function startCpu(reason: string): Promise<BackendReport> {
  await tf.setBackend('cpu');
  await tf.ready();
  return { backend: 'cpu', adapter: 'tfjs cpu (plain JavaScript)', reason };
}

let wasmPathsOption: BackendOptions['wasmPaths'];

async function tryWasm(reason: string): Promise<BackendReport | null> {
  try {
    const wasm = await import('@tensorflow/tfjs-backend-wasm');
    if (wasmPathsOption) wasm.setWasmPaths(wasmPathsOption as string);
    else if (isNodeHost) {
      // Node: load the .wasm files from the installed package; one thread (workers are
      // not set up for tfjs in Node).
      const { createRequire } = await importNodeOnly<{
        createRequire(url: string): { resolve(id: string): string };
      }>('node:module');
      const require = createRequire(import.meta.url);
      const dir = require
        .resolve('@tensorflow/tfjs-backend-wasm/package.json')
        .replace(/package\.json$/, 'dist/');
      wasm.setWasmPaths(dir);
      wasm.setThreadsCount(1);
    }
    if (!(await tf.setBackend('wasm'))) return null;
    await tf.ready();
    const simd = await tf.env().getAsync('WASM_HAS_SIMD_SUPPORT');
    // Named, so a reader knows decoding through a Hub model's weights uses it (EXPERIMENTS §6).
    const rowKernel = fewRowsReady() ? " + the lab's decode-row kernel" : '';
    return { backend: 'wasm', adapter: `tfjs wasm${simd ? ' SIMD' : ''}${rowKernel}`, reason };
  } catch {
    return null;
  }
}

type GpuAttempt = { ok: true; report: BackendReport } | { ok: false; why: string };

const SOFTWARE_ADAPTER = /swiftshader|llvmpipe|lavapipe|software/i;

async function webgpuReport(refuseSoftware: boolean): Promise<GpuAttempt> {
  let gpu: GPU | null | undefined =
    typeof navigator !== 'undefined' ? (navigator as Navigator).gpu : undefined;
  if (!gpu && isNodeHost) {
    gpu = await installNodeWebgpu();
  }
  if (!gpu) return { ok: false, why: 'navigator.gpu is missing' };
  let adapter: GPUAdapter | null = null;
  try {
    adapter = await gpu.requestAdapter();
  } catch (err) {
    return { ok: false, why: `requestAdapter failed: ${String(err)}` };
  }
  if (!adapter) return { ok: false, why: 'requestAdapter returned null' };
  const description = describeAdapter(adapter);
  const software = adapter.isFallbackAdapter || SOFTWARE_ADAPTER.test(description);
  if (software && refuseSoftware)
    return { ok: false, why: `only a software adapter (${description})` };
  try {
    await import('@tensorflow/tfjs-backend-webgpu');
    if (!(await tf.setBackend('webgpu'))) return { ok: false, why: 'tfjs webgpu refused to start' };
    await tf.ready();
  } catch (err) {
    return { ok: false, why: `tfjs webgpu failed: ${String(err)}` };
  }
  const fallback = software ? ' (software adapter: correct but slow)' : '';
  return {
    ok: true,
    report: { backend: 'webgpu', adapter: description, reason: `WebGPU adapter found${fallback}` },
  };
}

function describeAdapter(adapter: GPUAdapter): string {
  const info = adapter.info;
  const parts = [info?.vendor, info?.architecture, info?.device, info?.description].filter(
    (p): p is string => !!p,
  );
  return parts.length ? [...new Set(parts)].join(' / ') : 'unnamed WebGPU adapter';
}
