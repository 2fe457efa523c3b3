// A checkpoint on the kernels as plain calls, for the CLI (`model logits --backend kernels`: the
// Llama family and GPT-2 alike, each as the one transformer's config) and benches: open the
// kernel device, hold the model, run, free it all.

import { gptTransformerConfig } from '../../model/config';
import type { GPT } from '../../model/gpt';
import { mergedProjections } from '../../model/lora';
import { readValues } from '../../model/params';
import type { LoraAdapter } from '../../model/peft';
import type { TransformerConfig } from '../../model/transformerConfig';
import { getKernelDevice } from '../kernels/device';
import { float32Tensors, type WeightTensors } from './deviceCheckpoint';
import { type Adapters, DevicePolicy, LORA_TARGETS, type LoraTarget } from './devicePolicy';
import { DeviceTransformer, type DeviceTransformerOptions } from './deviceTransformer';
import { loadEngineShaders } from './kernelEngine';
import { GPT2_DEVICE_TARGETS, moduleKey, targetOfKey } from './loraAdapters';
import { GpuRuntime } from './runtime';
import { SELF_CHECK_SEED, START_SIZES } from './selfCheck';
import { checksFor, runConfigChecks } from './selfCheck/checksByConfig';
import { type KernelCheck, kernelChecks } from './selfCheck/registry';
import { runChecks } from './selfCheck/run';
import { describeFailure } from './selfCheck/types';

/** Per device and shader sources, the self-check entries that passed (each runs once). */
const checked = new WeakMap<GPUDevice, Set<string>>();

/** A model on the shared kernel device with its own runtime; free() releases every buffer. */
export async function openDeviceTransformer(
  config: TransformerConfig,
  weights: WeightTensors,
  options: DeviceTransformerOptions & { selfCheck?: boolean } = {},
): Promise<{ model: DeviceTransformer; rt: GpuRuntime; adapter: string; free(): void }> {
  const opened = await getKernelDevice();
  if (!opened.ok) throw new Error(`no WebGPU device for the kernels: ${opened.why}`);
  const rt = new GpuRuntime(opened.gpu.device);
  try {
    const sources = JSON.stringify(await loadEngineShaders(rt));
    // An entry that passed on this device with these sources, by its name.
    const passed = checked.get(rt.device) ?? new Set<string>();
    checked.set(rt.device, passed);
    const key = (c: KernelCheck) => `${sources} ${c.name}`;
    const software = opened.gpu.software;
    // The start's checks (LayerNorm, the f32 matmul this model runs, attention, the head…) at the
    // tiny preset's sizes, and those of the config's switches.
    const matmul = options.matmul ?? 'v4_vec4';
    const start = kernelChecks().filter(
      (c) => (c.matmulVersion ?? matmul) === matmul && !passed.has(key(c)),
    );
    const fresh = checksFor(config).filter((c) => !passed.has(key(c)));
    if (options.selfCheck !== false && start.length + fresh.length > 0) {
      const results = [
        ...(await runChecks(start, {
          rt,
          sizes: START_SIZES,
          matmul,
          software,
          seed: SELF_CHECK_SEED,
        })),
        ...(await runConfigChecks(rt, software, fresh)),
      ];
      const failed = results.filter((r) => !r.ok).map(describeFailure);
      if (failed.length)
        throw new Error(`the kernels failed their self-check on this device: ${failed.join('; ')}`);
      for (const c of [...start, ...fresh]) passed.add(key(c));
    }
    const model = new DeviceTransformer(rt, config, weights, options);
    return { model, rt, adapter: opened.gpu.adapter, free: () => rt.destroy() };
  } catch (error) {
    rt.destroy();
    throw error;
  }
}

/**
 * The last position's logits [vocab] of `ids` (a prompt from position 0) on the kernels, with
 * a PEFT adapter (model/peft.ts' reader) on the base when given: y = W·x + s·B·A·x.
 */
export async function logitsOnDevice(
  config: TransformerConfig,
  weights: WeightTensors,
  ids: readonly number[],
  adapter?: LoraAdapter,
): Promise<Float32Array> {
  const { model, rt, free } = await openDeviceTransformer(config, weights, {
    contextLength: Math.max(ids.length, 1),
  });
  try {
    if (adapter) {
      const policy = devicePolicyOf(rt, model, adapter);
      policy.attach();
    }
    return await model.prefill(ids);
  } finally {
    free();
  }
}

/** The model's weights as tfjs holds them, a LoRA adapter merged into its projections. */
export async function mergedValues(model: GPT): Promise<Map<string, Float32Array>> {
  const values = await readValues(model.params);
  if (!model.lora) return values;
  // Copies: a backend may hand out its own storage, which is the frozen base's.
  const copy = (name: string) => Float32Array.from(values.get(name) as Float32Array);
  for (const [name, w] of await mergedProjections(model.lora, copy, 'in-out')) values.set(name, w);
  return values;
}

/**
 * The lab's GPT-2 as the kernels' one model takes it: its config (learned positions, LayerNorm,
 * GELU, Conv1D weights) and its weights as tfjs holds them, a LoRA adapter merged in.
 */
export async function gptForDevice(
  model: GPT,
): Promise<{ config: TransformerConfig; weights: WeightTensors }> {
  const values = await mergedValues(model);
  const weights = float32Tensors(values, (name) => model.params.get(name)?.shape);
  return { config: gptTransformerConfig(model.config), weights };
}

/** The adapter's modules as the kernels' policy holds them; a layer it leaves out adds 0. */
function devicePolicyOf(rt: GpuRuntime, model: DeviceTransformer, adapter: LoraAdapter) {
  const given = new Map<string, { A: Float32Array; B: Float32Array }>();
  const targets = new Set<LoraTarget>();
  const known: readonly LoraTarget[] = model.config.fusedQkv ? GPT2_DEVICE_TARGETS : LORA_TARGETS;
  let rank = 0;
  for (const [module, pair] of adapter.modules) {
    const key = /\.(?:layers|h)\.\d+\./.test(module) ? moduleKey(module) : null;
    const target = key === null ? null : targetOfKey(key);
    if (key === null || target === null || !known.includes(target))
      throw new Error(
        `${adapter.label}: adapts ${module}; the kernels adapt ${known.join(', ')} of each layer`,
      );
    targets.add(target);
    rank = pair.rank;
    given.set(key, { A: pair.a, B: pair.b });
  }
  // The reader's scale already holds alpha / r (or alpha / √r with rsLoRA).
  const policy = new DevicePolicy(rt, model, {
    rank,
    alpha: adapter.scale * rank,
    targets: [...targets],
  });
  const shapes = policy.initialAdapters(1);
  const adapters: Adapters = new Map();
  for (const [key, zero] of shapes) {
    adapters.set(
      key,
      given.get(key) ?? { A: new Float32Array(zero.A.length), B: new Float32Array(zero.B.length) },
    );
  }
  policy.importAdapters(adapters);
  return policy;
}
