// Chooses the tfjs backend once, at start: webgpu where an adapter exists, wasm (SIMD)
// otherwise; cpu is for unit tests. Reports what it chose, on which adapter, and why.
import '@tensorflow/tfjs-core/dist/register_all_gradients';
import * as tf from '@tensorflow/tfjs-core';
import '@tensorflow/tfjs-backend-cpu';
import { enableKernelEngine } from './engine/kernelSampling';
import { importNodeOnly, installNodeWebgpu, isNodeHost } from './host';

export type BackendName = 'webgpu' | 'wasm' | 'cpu';

export interface BackendReport {
  backend: BackendName;
  /** The adapter's description (vendor, architecture, device), or the CPU path used. */
  adapter: string;
  reason: string;
}

/** 'auto' tries webgpu, then wasm, then cpu. A named backend is used or an error thrown. */
export interface BackendOptions {
  /**
   * Browser: where the tfjs wasm binaries are served (a folder URL ending in '/', or a map
   * from file name to URL, as tfjs's setWasmPaths takes). Node finds them in node_modules.
   */
  wasmPaths?: string | Record<string, string>;
}

export async function initBackend(
  prefer: BackendName | 'auto' = 'auto',
  options: BackendOptions = {},
): Promise<BackendReport> {
  const report = await initTfjsBackend(prefer, options);
  if (prefer !== 'auto' && prefer !== 'webgpu') return report;
  // The lab's own WebGPU engine samples where a real adapter exists (software adapters only
  // through enableKernelEngine's allowSoftware: benches, tests); tfjs keeps the update. The
  // backend line says which ran.
  try {
    const kernels = await enableKernelEngine();
    if (kernels.enabled)
      return {
        ...report,
        reason: `${report.reason}; sampling and updates on the lab's WebGPU kernels (${kernels.adapter})`,
      };
  } catch {
    // no device engine: tfjs samples too
  }
  return report;
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
    return { backend: 'wasm', adapter: `tfjs wasm${simd ? ' SIMD' : ''}`, reason };
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
