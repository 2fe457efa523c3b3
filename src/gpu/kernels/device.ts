// One GPUDevice for the custom kernels. In Node it comes from Dawn (the `webgpu` package),
// over SwiftShader's Vulkan on CPU-only machines (installNodeWebgpu sets that up).
import { NEEDED_LIMITS } from '../engine/limits';
import { installNodeWebgpu, isNodeHost } from '../host';

export interface KernelDevice {
  device: GPUDevice;
  /** The adapter in words: vendor, architecture, device, and whether it is a fallback. */
  adapter: string;
  /** A CPU driver (SwiftShader, lavapipe/llvmpipe, a fallback adapter): correct, not fast. */
  software: boolean;
  /** For the GPU report: the adapter's info, its features, and every limit it offers. */
  details?: AdapterDetails;
}

export interface AdapterDetails {
  info: Record<string, string | boolean>;
  features: string[];
  limits: Record<string, number>;
}

export type KernelDeviceResult = { ok: true; gpu: KernelDevice } | { ok: false; why: string };

let pending: Promise<KernelDeviceResult> | null = null;

export function getKernelDevice(): Promise<KernelDeviceResult> {
  if (!pending) {
    const opening = openKernelDevice();
    pending = opening;
    // A lost device is not handed out again: the next caller opens a fresh one.
    void opening.then((result) => {
      if (result.ok)
        void result.gpu.device.lost.then(() => {
          if (pending === opening) pending = null;
        });
    });
  }
  return pending;
}

/** A device of its own (not the shared one): for a run that may lose it, or a test that destroys it. */
export async function openKernelDevice(): Promise<KernelDeviceResult> {
  let gpu: GPU | null | undefined = (globalThis as { navigator?: { gpu?: GPU } }).navigator?.gpu;
  if (!gpu && isNodeHost) gpu = await installNodeWebgpu();
  if (!gpu) return { ok: false, why: 'no navigator.gpu and the `webgpu` package did not load' };
  const adapter = await gpu.requestAdapter();
  if (!adapter) return { ok: false, why: 'requestAdapter() returned null' };
  // The adapter's own limits, not WebGPU's defaults (128 MiB per binding, 16 KiB of workgroup
  // storage): a KV cache, a model trained in full or a batch's activations on the larger
  // presets need more.
  // Every limit the engine plans against (engine/limits.ts) is requested at the adapter's value.
  const limits = adapter.limits as unknown as Record<string, number>;
  const device = await adapter.requestDevice({
    requiredLimits: Object.fromEntries(NEEDED_LIMITS.map((k) => [k, limits[k] as number])),
  });
  const info = adapter.info;
  const words = [info.vendor, info.architecture, info.device, info.description].filter(Boolean);
  const fallback = info.isFallbackAdapter ? ' (fallback adapter)' : '';
  const adapterText = `${words.join(' / ') || 'unknown'}${fallback}`;
  const software =
    info.isFallbackAdapter || /swiftshader|llvmpipe|lavapipe|software/i.test(adapterText);
  return { ok: true, gpu: { device, adapter: adapterText, software, details: details(adapter) } };
}

function details(adapter: GPUAdapter): AdapterDetails {
  const info: Record<string, string | boolean> = {};
  for (const key of ['vendor', 'architecture', 'device', 'description', 'isFallbackAdapter']) {
    const value = (adapter.info as unknown as Record<string, unknown>)[key];
    if (typeof value === 'string' || typeof value === 'boolean') info[key] = value;
  }
  const limits: Record<string, number> = {};
  // GPUSupportedLimits' fields are getters on its prototype: walk them, not own keys.
  const proto = Object.getPrototypeOf(adapter.limits) as object;
  for (const key of Object.keys(Object.getOwnPropertyDescriptors(proto))) {
    const value = (adapter.limits as unknown as Record<string, unknown>)[key];
    if (typeof value === 'number') limits[key] = value;
  }
  return { info, features: [...adapter.features].map(String).sort(), limits };
}
