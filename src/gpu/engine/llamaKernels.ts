// The Llama family on the kernels as plain calls, for the CLI (`model logits --backend kernels`)
// and benches: open the kernel device, hold the model, run, free it all.
import type { LlamaConfig } from '../../model/families/llamaConfig';
import { getKernelDevice } from '../kernels/device';
import { DeviceLlama, type DeviceLlamaOptions, type LlamaTensors } from './deviceLlama';
import { SHADERS } from './ops';
import { GpuRuntime } from './runtime';

/** A model on the shared kernel device with its own runtime; free() releases every buffer. */
export async function openDeviceLlama(
  config: LlamaConfig,
  weights: LlamaTensors,
  options: DeviceLlamaOptions = {},
): Promise<{ model: DeviceLlama; adapter: string; free(): void }> {
  const opened = await getKernelDevice();
  if (!opened.ok) throw new Error(`no WebGPU device for the kernels: ${opened.why}`);
  const rt = new GpuRuntime(opened.gpu.device);
  try {
    await rt.load([...SHADERS]);
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
