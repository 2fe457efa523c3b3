// Roles on the lab's kernels, every model as the one model (deviceTransformer.ts) and a
// DevicePolicy over it (a RoleSource says which): a Hub base's LoRA roles (GPT-2 or the Llama
// family; engine/baseRoles.ts' roles with backend kernels), the lab's GPT-2 with --lora-rank, and the
// lab's GPT-2 trained in full (the defaults: its weights f32 in one buffer, trained in place). A
// base is held once on the device (16-bit where its values are). tfjs stays the run's source of
// truth: a role's adapter or weights are uploaded only when tfjs changed them, and after each
// device update they are written back into the role's tfjs variables (so a snapshot, the PEFT
// export, the evaluation and a fall-back to tfjs all read the last finished step). Sampling
// attaches the role's adapter (if any) to the base's prefill and decode and decodes a batch of
// rows together, or, where the base is small, samples from an f32 copy with the adapter merged
// in (each layer of a decode step one dispatch); the update computes GRPO's loss and its
// gradient w.r.t. the log-probs on the host (rl/grpoLossReference.ts), then the device's
// backward and AdamW (kernelRoleTraining.ts).
import * as tf from '@tensorflow/tfjs-core';
import type { AdamWState } from '../../model/adamw';
import { gptTransformerConfig } from '../../model/config';
import { hubParameterCount, hubTransformerConfig } from '../../model/families/hubConfig';
import type { HubModel } from '../../model/families/hubModel';
import { HubWeights } from '../../model/families/hubWeights';
import type { GPT } from '../../model/gpt';
import { decodeHalves, f32ToHalf, halfToF32 } from '../../model/halfFloat';
import { type Lora, mergedProjections, PEFT_PREFIX } from '../../model/lora';
import { readValues } from '../../model/params';
import type { TransformerConfig } from '../../model/transformerConfig';
import type { SampleOptions, SampleResult } from '../../rollout/types';
import {
  deviceTensor,
  float32Tensors,
  type WeightTensor,
  type WeightTensors,
} from './deviceCheckpoint';
import { devicePicks } from './deviceDraw';
import { type Adapters, DevicePolicy } from './devicePolicy';
import { DeviceTransformer, fusesDecode } from './deviceTransformer';
import { type DeviceWeights, writeNamed } from './deviceWeights';
import {
  checkModelSizes,
  type Engine,
  engineFor,
  kernelEngine,
  markEngineFailed,
} from './kernelEngine';
import { moduleKey, targetOfKey } from './loraAdapters';
import { sampleOnModel } from './modelSampling';

interface RoleOnDevice {
  engine: Engine;
  policy: DevicePolicy;
  /** The tfjs adapter variables' dataIds when the device last equalled them. */
  key: unknown[];
  /** The adapter came from tfjs since the device's last update (Adam's state may have moved). */
  fresh: boolean;
}

const bases = new WeakMap<object, { engine: Engine; model: DeviceTransformer }>();
/** Roles by their adapter (LoRA) or by the tfjs weights they train. */
const roles = new WeakMap<object, RoleOnDevice>();
/**
 * sample() and update() calls the device answered, and the times a role's adapter or weights
 * were uploaded from tfjs (tests: an update leaves the device current, no upload after it).
 */
export const roleDeviceCalls = { sample: 0, update: 0, uploads: 0 };

/**
 * A float32 matrix as the checkpoint held it: 16-bit where every value is one, else F32. In
 * loops, not typed-array helpers: at a 151,936-token vocabulary the embedding alone is 136M
 * values, and the helpers' intermediate arrays run the JS heap out.
 */
function asCheckpointTensor(shape: number[], data: Float32Array): WeightTensor {
  if (shape.length === 2)
    for (const dtype of ['BF16', 'F16'] as const) {
      const bits = new Uint16Array(data.length);
      let exact = true;
      for (let i = 0; i < data.length && exact; i++) {
        const half = f32ToHalf(dtype, data[i] as number);
        bits[i] = half;
        exact = Object.is(halfToF32(dtype, half), data[i]);
      }
      if (exact) return { dtype, shape, data: bits };
    }
  return { dtype: 'F32', shape, data };
}

/**
 * What the kernels need of a role: its base (config, weights, and the object that names the
 * base, so roles over one base share its device copy) and its adapter. A Hub base's role
 * (hubSource) or a LoRA role of the lab's GPT-2 (gptLoraSource): one engine runs both.
 */
export interface RoleSource {
  /** What names the role's device copy: its adapter, or the weights it holds. */
  key: object;
  /** The tfjs variables the device's copy mirrors: uploaded again when tfjs changed any. */
  mirrors: () => tf.Variable[];
  baseKey: object;
  config: TransformerConfig;
  /** The base's tensors by the config's names, without the adapter. */
  tensors: () => Promise<WeightTensors>;
  contextLength: number;
  /** The role's adapter; null: the role is the model's own weights (gptSource). */
  lora: Lora | null;
  /** Trained in full: tfjs's weights, which the device's update writes back into. */
  params: ReadonlyMap<string, tf.Variable> | null;
  /** Without an adapter: the weights by name as the device holds them. */
  values?: () => Promise<Map<string, Float32Array>>;
  /** The weights are never trained (a KL reference). */
  frozen?: boolean;
  /** Without an adapter: the frozen KL reference's own source (gptSource(reference, true)). */
  reference?: RoleSource;
  /** The self-check's sized checks run at this model's sizes first (the lab's GPT-2s). */
  checkSizes?: boolean;
}

/** A role over its (shared) Hub base. */
export function hubSource(model: HubModel): RoleSource | null {
  const lora = model.lora;
  if (!lora) return null;
  return {
    key: lora,
    mirrors: () => adapterVariables(lora),
    baseKey: model.weights,
    config: hubTransformerConfig(model.config),
    tensors: async () => hubTensors(model),
    contextLength: Math.min(model.config.maxPositionEmbeddings || 512, 4096),
    lora,
    params: null,
  };
}

/** A LoRA role of the lab's GPT-2: its own base (each role's warm start), its adapter. */
export function gptLoraSource(model: GPT): RoleSource | null {
  const lora = model.lora;
  if (!lora) return null;
  return {
    ...gptBase(model, () => readValues(model.params)),
    key: lora,
    mirrors: () => adapterVariables(lora),
    lora,
    params: null,
  };
}

/**
 * The lab's GPT-2 trained in full: its weights on the device f32 in one buffer (a trainable
 * DeviceTransformer), mirroring tfjs's; `frozen`: never trained (a KL reference).
 */
export function gptSource(model: GPT, frozen = false, reference?: GPT | null): RoleSource {
  const values = () => readValues(model.params);
  return {
    ...gptBase(model, values),
    key: model.params,
    mirrors: () => [...model.params.values()],
    lora: null,
    params: model.params,
    values,
    frozen,
    ...(reference ? { reference: gptSource(reference, true) } : {}),
  };
}

/** Per LoRA role: what names its sampling copy. */
const mergedKeys = new WeakMap<Lora, object>();

/**
 * Largest f32 sampling copy a Hub base's LoRA role gets (beside its 16-bit base); a larger
 * base decodes layer by layer with the adapter attached.
 */
export const MERGED_COPY_MAX_BYTES = 256 * 2 ** 20;

/**
 * A LoRA role as its sampler holds it: the base widened to f32 with the adapter merged into each
 * adapted projection (PEFT's merge, in the config's weight layout), frozen and flat, so each
 * layer of a decode step is one dispatch (decode_layer.wgsl) where the adapter attached would
 * add its own at every projection. Only the adapted projections are written again when tfjs
 * moved the adapter (the base never moves); the update trains the adapter over the base apart.
 */
function mergedSource(source: RoleSource, lora: Lora): RoleSource {
  const key = mergedKeys.get(lora) ?? {};
  mergedKeys.set(lora, key);
  const merge = (base: WeightTensors) =>
    mergedProjections(lora, (name) => widened(base.get(name)), source.config.weightLayout);
  return {
    ...source,
    key,
    baseKey: key,
    tensors: async () => {
      const base = await source.tensors();
      const merged = await merge(base);
      return {
        get: (name) => {
          const t = base.get(name);
          const w = merged.get(name);
          return w && t ? { dtype: 'F32', shape: t.shape, data: w } : t;
        },
      };
    },
    values: async () => merge(await source.tensors()),
    lora: null,
    frozen: true,
  };
}

/** A copy of the tensor's values as f32 (16-bit widened exactly). */
function widened(t: WeightTensor | undefined): Float32Array {
  if (!t) throw new Error('the base lacks an adapted projection');
  return t.dtype === 'F32'
    ? Float32Array.from(t.data)
    : decodeHalves(t.dtype, t.data as Uint16Array);
}

function gptBase(model: GPT, values: () => Promise<Map<string, Float32Array>>) {
  return {
    checkSizes: true,
    baseKey: model.params as object,
    config: gptTransformerConfig(model.config),
    tensors: async () => float32Tensors(await values(), (name) => model.params.get(name)?.shape),
    contextLength: model.config.nCtx,
  };
}

const adapterVariables = (lora: Lora) =>
  [...lora.modules.values()].flatMap((pair) => [pair.a, pair.b]);

/**
 * A Hub base's tensors: each weight from the checkpoint's stored tensor where tfjs has not
 * made it (a base loaded on demand: tfjs then never holds it), else from tfjs.
 */
function hubTensors(base: HubModel): WeightTensors {
  const weights = base.weights;
  const stored = weights instanceof HubWeights ? weights : null;
  return {
    get(name) {
      const kept = stored?.storedTensor(name);
      if (kept) return deviceTensor(kept);
      const tensor = weights.get(name);
      return tensor && asCheckpointTensor(tensor.shape, tensor.dataSync() as Float32Array);
    },
  };
}

/**
 * The engine with the kernels this role runs checked: the start's checks cover the lab's GPT-2
 * trained in full (its layers, decode, update); a model under an adapter also needs those of
 * its config's switches, its 16-bit weights, LoRA's and its head size (kernelEngine.ts' engineFor).
 */
function roleEngine(source: RoleSource): Promise<Engine | null> {
  if (!source.lora && source.checkSizes) return Promise.resolve(kernelEngine());
  return engineFor(source.config);
}

/** The engine's one device copy of the role's base. */
async function deviceBase(e: Engine, source: RoleSource): Promise<DeviceTransformer> {
  const held = bases.get(source.baseKey);
  // Trained in full, the base is its weights (trainable); under an adapter, frozen.
  if (held && held.engine === e && (held.model.flat !== null) === !source.lora) return held.model;
  const model = new DeviceTransformer(e.rt, source.config, await source.tensors(), {
    contextLength: source.contextLength,
    // Without an adapter the role is the weights themselves: one flat f32 buffer, rewritable.
    trainable: !source.lora,
    matmul: e.matmul,
    decodeThreads: e.gpu.software ? 16 : 64,
  });
  bases.set(source.baseKey, { engine: e, model });
  return model;
}

const dataIds = (variables: Iterable<tf.Variable>) =>
  [...variables].map((v) => (v as unknown as { dataId: unknown }).dataId);

/** The role on the device, its adapter (or weights) uploaded from tfjs where tfjs changed them. */
async function deviceRole(e: Engine, source: RoleSource): Promise<RoleOnDevice> {
  let role = roles.get(source.key);
  const key = dataIds(source.mirrors());
  if (role && role.engine === e && key.every((id, i) => id === role?.key[i])) return role;
  if (!role && source.checkSizes) await checkModelSizes(e, source.config);
  roleDeviceCalls.uploads++;
  const lora = source.lora;
  if (!lora) {
    // The model's own weights: the base holds them (trainable: flat f32), rewritten in place.
    const base = await deviceBase(e, source);
    if (role && role.engine === e) {
      const values = await (source.values as NonNullable<RoleSource['values']>)();
      // A frozen copy (a KL reference, a merged sampling copy) may give only what moved.
      writeNamed(e.rt, base, base.flat?.buffer as GPUBuffer, values, source.frozen === true);
      role.key = key;
      role.fresh = true;
      return role;
    }
    const policy = new DevicePolicy(e.rt, base, source.frozen ? 'nothing' : 'weights');
    role = { engine: e, policy, key, fresh: true };
    roles.set(source.key, role);
    return role;
  }
  const adapters: Adapters = new Map();
  for (const [module, pair] of lora.modules)
    adapters.set(moduleKey(module), {
      A: (await pair.a.data()) as Float32Array,
      B: (await pair.b.data()) as Float32Array,
    });
  if (!role || role.engine !== e) {
    const targets = [...new Set([...adapters.keys()].map(targetOfKey))];
    const shape = { rank: lora.settings.rank, alpha: lora.settings.alpha, targets };
    const policy = new DevicePolicy(e.rt, await deviceBase(e, source), shape, adapters);
    role = { engine: e, policy, key, fresh: true };
    roles.set(source.key, role);
  } else {
    role.policy.importAdapters(adapters);
    role.key = key;
    role.fresh = true;
  }
  return role;
}

/** The device's adapter (or weights) written into the role's tfjs variables (tfjs holds the last step). */
async function writeBack(role: RoleOnDevice, source: RoleSource): Promise<void> {
  const lora = source.lora;
  if (lora) {
    const adapters = await role.policy.exportAdapters();
    for (const [module, pair] of lora.modules) {
      const values = adapters.get(moduleKey(module));
      if (!values) continue;
      pair.a.assign(tf.tensor(values.A, pair.a.shape));
      pair.b.assign(tf.tensor(values.B, pair.b.shape));
    }
  } else {
    const values = await (role.policy.weights as DeviceWeights).read();
    tf.tidy(() => {
      for (const [name, v] of source.params ?? [])
        v.assign(tf.tensor(values.get(name) as Float32Array, v.shape));
    });
  }
  role.key = dataIds(source.mirrors());
  role.fresh = false;
}

/**
 * Samples every prompt with the role's adapter attached, rows decoded together on batch caches
 * of the base, tokens drawn on the device as the GPT-2 sampler draws them (decode.wgsl's `pick`:
 * temperature, top-k, row r's own rowPrng stream) and fed back by the device, so a submission
 * runs TOKENS_PER_READ steps and only the tokens come back. Rows are batched grouped by prompt,
 * and each distinct prompt is prefilled once: the other rows of the same prompt copy its cache
 * and its logits (a GRPO group's samples share their prompt). Null: engine off, a draw the
 * device does not do (top-k past 64, more than two stop tokens), or a device failure (the
 * caller samples on tfjs).
 */
export async function sampleHubRoleOnDevice(
  model: HubModel,
  prompts: number[][],
  options: SampleOptions,
): Promise<SampleResult | null> {
  const source = hubSource(model);
  const e = source ? await roleEngine(source) : null;
  // A small base samples from a merged f32 copy, where that copy decodes a layer in one dispatch.
  const small = hubParameterCount(model.config) * 4 <= MERGED_COPY_MAX_BYTES;
  const fused = e && source && small && fusesDecode(source.config, e.rt.device);
  const copy = fused && source && model.lora ? mergedSource(source, model.lora) : null;
  return sampleRoleOnDevice(copy ?? source, prompts, options);
}

async function sampleRoleOnDevice(
  source: RoleSource | null,
  prompts: number[][],
  options: SampleOptions,
): Promise<SampleResult | null> {
  const e = source ? await roleEngine(source) : null;
  if (!e || !source || !devicePicks(options, source.config.vocabSize)) return null;
  try {
    const { policy } = await deviceRole(e, source);
    if (prompts.some((p) => p.length >= policy.model.contextLength)) return null;
    policy.attach();
    try {
      const result = await sampleOnModel(policy.model, prompts, options, e.gpu.software ? 16 : 64);
      roleDeviceCalls.sample++;
      return result;
    } finally {
      policy.detach();
    }
  } catch (error) {
    markEngineFailed(e, error);
    return null;
  }
}

/**
 * The lab's GPT-2 sampled on the one model: its own weights, or (a LoRA role) its sampling copy
 * with the adapter merged in.
 */
export function sampleGptOnDevice(
  model: GPT,
  prompts: number[][],
  options: SampleOptions,
): Promise<SampleResult | null> {
  const lora = gptLoraSource(model);
  const source = lora && model.lora ? mergedSource(lora, model.lora) : gptSource(model);
  return sampleRoleOnDevice(source, prompts, options);
}

/** The role's device policy (its adapter current with tfjs), or null where the engine is off. */
export async function rolePolicy(source: RoleSource | null): Promise<DevicePolicy | null> {
  const e = source ? await roleEngine(source) : null;
  if (!e || !source) return null;
  return (await deviceRole(e, source)).policy;
}

/**
 * The KL reference on the device: with an adapter, the base alone (a policy whose adapters are
 * zero); without, the frozen reference model's own weights (source.reference).
 */
export async function referencePolicy(source: RoleSource | null): Promise<DevicePolicy | null> {
  if (source && !source.lora) return source.reference ? rolePolicy(source.reference) : null;
  const policy = await rolePolicy(source);
  const e = kernelEngine();
  if (!e || !policy) return null;
  const cached = references.get(policy);
  if (cached) return cached;
  const zero: Adapters = new Map();
  for (const [key, pair] of await policy.exportAdapters())
    zero.set(key, { A: pair.A, B: new Float32Array(pair.B.length) });
  const reference = new DevicePolicy(e.rt, policy.model, policy.lora ?? 'nothing', zero);
  references.set(policy, reference);
  return reference;
}
const references = new WeakMap<DevicePolicy, DevicePolicy>();

/** After a device update: tfjs's variables (adapter or weights) take the device's values. */
export async function syncRole(source: RoleSource): Promise<void> {
  const e = kernelEngine();
  const role = roles.get(source.key);
  if (e && role) await writeBack(role, source);
  roleDeviceCalls.update++;
}

/** Whether the role's adapter (or weights) came from tfjs since the device last updated it. */
export function roleIsFresh(source: RoleSource): boolean {
  return roles.get(source.key)?.fresh ?? true;
}

/**
 * The policy's Adam moments as the tfjs AdamW lays them out (every m, then every v, in the
 * trained variables' order: each module's lora_A then lora_B, or the model's parameters), and
 * its steps.
 */
export async function adamStateOf(policy: DevicePolicy, source: RoleSource): Promise<AdamWState> {
  const moments: AdamWState['moments'] = [];
  const lora = source.lora;
  if (!lora) {
    const { m, v, steps } = await (policy.weights as DeviceWeights).exportMoments();
    for (const [kind, values] of [
      ['m', m],
      ['v', v],
    ] as const)
      for (const [name, param] of source.params ?? [])
        moments.push({
          name: `${name}/${kind}`,
          shape: param.shape,
          data: values.get(name) as Float32Array,
        });
    return { step: steps, moments };
  }
  const { m, v, steps } = await policy.exportMoments();
  for (const [kind, values] of [
    ['m', m],
    ['v', v],
  ] as const)
    for (const [module, pair] of lora.modules) {
      const moment = values.get(moduleKey(module));
      if (!moment) throw new Error(`the device holds no Adam moments for ${module}`);
      for (const [side, data, shape] of [
        ['A', moment.A, pair.a.shape],
        ['B', moment.B, pair.b.shape],
      ] as const)
        moments.push({ name: `${PEFT_PREFIX}${module}.lora_${side}.weight/${kind}`, shape, data });
    }
  return { step: steps, moments };
}

/** The tfjs AdamW's moments (adamStateOf's layout) onto the policy. */
export function importAdamState(policy: DevicePolicy, source: RoleSource, state: AdamWState): void {
  const lora = source.lora;
  if (!lora) {
    const names = [...(source.params?.keys() ?? [])];
    const weights = policy.weights as DeviceWeights;
    if (state.moments.length === 0) {
      weights.steps = state.step;
      return;
    }
    if (state.moments.length !== 2 * names.length)
      throw new Error(
        `optimizer state holds ${state.moments.length} moments, the model needs ${2 * names.length}`,
      );
    const m = new Map(names.map((name, i) => [name, state.moments[i]!.data]));
    const v = new Map(names.map((name, i) => [name, state.moments[names.length + i]!.data]));
    weights.importMoments(m, v, state.step);
    return;
  }
  const modules = [...lora.modules.keys()];
  if (state.moments.length !== 4 * modules.length)
    throw new Error(
      `optimizer state holds ${state.moments.length} moments, the adapter needs ${4 * modules.length}`,
    );
  const half = 2 * modules.length;
  const m: Adapters = new Map();
  const v: Adapters = new Map();
  modules.forEach((module, i) => {
    const key = moduleKey(module);
    m.set(key, { A: state.moments[2 * i]!.data, B: state.moments[2 * i + 1]!.data });
    v.set(key, { A: state.moments[half + 2 * i]!.data, B: state.moments[half + 2 * i + 1]!.data });
  });
  policy.importMoments(m, v, state.step);
}
