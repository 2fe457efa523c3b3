// The Llama family on the kernels as plain calls, for the CLI (`model logits --backend kernels`)
// and benches: open the kernel device, hold the model, run, free it all.
import type { LlamaConfig } from '../../model/families/llamaConfig';
import { getKernelDevice } from '../kernels/device';
import { DeviceLlama, type DeviceLlamaOptions, type LlamaTensors } from './deviceLlama';
import { SHADERS } from './ops';
import { GpuRuntime } from './runtime';
import { llamaSelfCheck } from './selfCheck/checksLlama';

/** Devices whose Llama kernels passed the self-check (run once per device). */
const checked = new WeakSet<GPUDevice>();

/** A model on the shared kernel device with its own runtime; free() releases every buffer. */
export async function openDeviceLlama(
  config: LlamaConfig,
  weights: LlamaTensors,
  options: DeviceLlamaOptions & { selfCheck?: boolean } = {},
): Promise<{ model: DeviceLlama; adapter: string; free(): void }> {
  const opened = await getKernelDevice();
  if (!opened.ok) throw new Error(`no WebGPU device for the kernels: ${opened.why}`);
  const rt = new GpuRuntime(opened.gpu.device);
  try {
    await rt.load([...SHADERS]);
    if (options.selfCheck !== false && !checked.has(rt.device)) {
      const failed = await llamaSelfCheck(rt, opened.gpu.software);
      if (failed.length)
        throw new Error(
          `the Llama kernels failed their self-check on this device: ${failed.join('; ')}`,
        );
      checked.add(rt.device);
    }
    const model = new DeviceLlama(rt, config, weights, options);
    return { model, adapter: opened.gpu.adapter, free: () => rt.destroy() };
  } catch (error) {
    rt.destroy();
    throw error;
  }
}

/** The last position's logits [vocab] of `ids` (a prompt from position 0) on the kernels. */
export async function llamaLogitsOnDevice(
  config: LlamaConfig,
  weights: LlamaTensors,
  ids: readonly number[],
): Promise<Float32Array> {
  const { model, free } = await openDeviceLlama(config, weights, {
    contextLength: Math.max(ids.length, 1),
  });
  try {
    return await model.prefill(ids);
  } finally {
    free();
  }
}
