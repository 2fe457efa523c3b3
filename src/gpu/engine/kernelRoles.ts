// LoRA roles on the lab's kernels — a Llama-family base's roles (engine/baseRoles.ts' roles with
// backend kernels) and the lab's GPT-2 with --lora-rank, one engine for both (a RoleSource): the
// base is held once on the device (deviceTransformer.ts, 16-bit where its values are), and each
// role's adapter is a DeviceLoraPolicy over it. As for GPT-2's full-parameter path
// (kernelSampling.ts, kernelTraining.ts) tfjs stays the run's source of truth: a role's adapter
// is uploaded only when tfjs changed it, and after each device update the adapter is written
// back into the role's tfjs variables (so the snapshot's PEFT export, the evaluation and a
// fall-back to tfjs all read the last finished step). Sampling attaches the role's adapter to
// the base's prefill and decode and decodes a batch of rows together; the update computes GRPO's
// loss and its gradient w.r.t. the log-probs on the host (rl/grpoLossReference.ts), then the
// device's backward and AdamW.
import * as tf from '@tensorflow/tfjs-core';
import type { AdamWState } from '../../model/adamw';
import { gptTransformerConfig } from '../../model/config';
import type { LlamaModel } from '../../model/families/llama';
import { llamaTransformerConfig } from '../../model/families/llamaConfig';
import { LlamaWeights } from '../../model/families/llamaWeights';
import type { GPT } from '../../model/gpt';
import { type GptLora, PEFT_PREFIX } from '../../model/gptLora';
import { f32ToHalf, halfToF32 } from '../../model/halfFloat';
import { readValues } from '../../model/params';
import type { TransformerConfig } from '../../model/transformerConfig';
import type { SampleOptions, SampleResult } from '../../rollout/types';
import {
  type Adapters,
  adapterKey,
  DeviceLoraPolicy,
  LORA_TARGETS,
  type LoraTarget,
} from './deviceLora';
import {
  devicePicks,
  distinctPrompts,
  initialRowStates,
  pickSpec,
  ROW_STATE_WORDS,
  replayDecode,
} from './deviceSampler';
import {
  DeviceTransformer,
  deviceTensor,
  float32Tensors,
  type WeightTensor,
  type WeightTensors,
} from './deviceTransformer';
import { type Engine, headSizeEngine, kernelEngine, markEngineFailed } from './kernelSampling';

interface RoleOnDevice {
  engine: Engine;
  policy: DeviceLoraPolicy;
  /** The tfjs adapter variables' dataIds when the device last equalled them. */
  key: unknown[];
  /** The adapter came from tfjs since the device's last update (Adam's state may have moved). */
  fresh: boolean;
}

const bases = new WeakMap<object, { engine: Engine; model: DeviceTransformer }>();
const roles = new WeakMap<GptLora, RoleOnDevice>();
/**
 * sample() and update() calls the device answered, and the prompt tokens the samplers
 * prefilled (tests, the bench: a prompt shared by a group's samples is prefilled once).
 */
export const roleDeviceCalls = { sample: 0, update: 0, prefilledTokens: 0 };

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
 * base, so roles over one base share its device copy) and its adapter. A Llama-family role
 * (llamaSource) or a LoRA role of the lab's GPT-2 (gptLoraSource): one engine runs both.
 */
export interface RoleSource {
  baseKey: object;
  config: TransformerConfig;
  /** The base's tensors by the config's names, without the adapter. */
  tensors: () => Promise<WeightTensors>;
  contextLength: number;
  lora: GptLora;
}

/** A Llama-family role over its (shared) base. */
export function llamaSource(model: LlamaModel): RoleSource | null {
  if (!model.lora) return null;
  return {
    baseKey: model.weights,
    config: llamaTransformerConfig(model.config),
    tensors: async () => llamaTensors(model),
    contextLength: Math.min(model.config.maxPositionEmbeddings || 512, 4096),
    lora: model.lora,
  };
}

/** A LoRA role of the lab's GPT-2: its own base (each role's warm start), its adapter. */
export function gptLoraSource(model: GPT): RoleSource | null {
  if (!model.lora) return null;
  return {
    baseKey: model.params,
    config: gptTransformerConfig(model.config),
    tensors: async () =>
      float32Tensors(await readValues(model.params), (name) => model.params.get(name)?.shape),
    contextLength: model.config.nCtx,
    lora: model.lora,
  };
}

/**
 * A Llama base's tensors: each weight from the checkpoint's stored tensor where tfjs has not
 * made it (a base loaded on demand: tfjs then never holds it), else from tfjs.
 */
function llamaTensors(base: LlamaModel): WeightTensors {
  const weights = base.weights;
  const stored = weights instanceof LlamaWeights ? weights : null;
  return {
    get(name) {
      const kept = stored?.storedTensor(name);
      if (kept) return deviceTensor(kept);
      const tensor = weights.get(name);
      return tensor && asCheckpointTensor(tensor.shape, tensor.dataSync() as Float32Array);
    },
  };
}

/** The engine's one device copy of the role's base. */
async function deviceBase(e: Engine, source: RoleSource): Promise<DeviceTransformer> {
  const held = bases.get(source.baseKey);
  if (held && held.engine === e) return held.model;
  const model = new DeviceTransformer(e.rt, source.config, await source.tensors(), {
    contextLength: source.contextLength,
  });
  bases.set(source.baseKey, { engine: e, model });
  return model;
}

/**
 * A module's adapter key on the device: its layer and target (the Llama family's projections by
 * their last name, GPT-2's by module: attn.c_proj and mlp.c_proj share the last name).
 */
export function moduleKey(module: string): string {
  const match = /\.(?:layers|h)\.(\d+)\.(.+)$/.exec(module);
  if (!match) throw new Error(`${module} is not a layer's projection`);
  const rest = match[2] as string;
  const last = rest.slice(rest.lastIndexOf('.') + 1);
  const target = ((LORA_TARGETS as readonly string[]).includes(last) ? last : rest) as LoraTarget;
  return adapterKey(Number(match[1]), target);
}

const targetOfKey = (key: string) => key.slice(key.indexOf('.') + 1) as LoraTarget;
const loraKey = (lora: GptLora) =>
  [...lora.modules.values()].flatMap((p) =>
    [p.a, p.b].map((v) => (v as unknown as { dataId: unknown }).dataId),
  );

/** The role's adapter on the device, uploaded from tfjs where tfjs changed it. */
async function deviceRole(e: Engine, source: RoleSource): Promise<RoleOnDevice> {
  const lora = source.lora;
  let role = roles.get(lora);
  const key = loraKey(lora);
  if (role && role.engine === e && key.every((id, i) => id === role?.key[i])) return role;
  const adapters: Adapters = new Map();
  for (const [module, pair] of lora.modules)
    adapters.set(moduleKey(module), {
      A: (await pair.a.data()) as Float32Array,
      B: (await pair.b.data()) as Float32Array,
    });
  if (!role || role.engine !== e) {
    const targets = [...new Set([...adapters.keys()].map(targetOfKey))];
    const shape = { rank: lora.settings.rank, alpha: lora.settings.alpha, targets };
    const policy = new DeviceLoraPolicy(e.rt, await deviceBase(e, source), shape, adapters);
    role = { engine: e, policy, key, fresh: true };
    roles.set(lora, role);
  } else {
    role.policy.importAdapters(adapters);
    role.key = key;
    role.fresh = true;
  }
  return role;
}

/** The device's adapter written into the role's tfjs variables (tfjs holds the last step). */
async function writeBack(role: RoleOnDevice, lora: GptLora): Promise<void> {
  const adapters = await role.policy.exportAdapters();
  for (const [module, pair] of lora.modules) {
    const values = adapters.get(moduleKey(module));
    if (!values) continue;
    pair.a.assign(tf.tensor(values.A, pair.a.shape));
    pair.b.assign(tf.tensor(values.B, pair.b.shape));
  }
  role.key = loraKey(lora);
  role.fresh = false;
}

/** Most rows decoded together (a GRPO step's group of samples, several groups at once). */
const MAX_BATCH_ROWS = 16;
/** Decode steps per submission (and per readback of the tokens). */
const TOKENS_PER_READ = 16;

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
export function sampleLlamaOnDevice(
  model: LlamaModel,
  prompts: number[][],
  options: SampleOptions,
): Promise<SampleResult | null> {
  return sampleRoleOnDevice(llamaSource(model), prompts, options);
}

/**
 * A LoRA role of the lab's GPT-2 that the fused sampler does not hold (wider than 256: its
 * sampleOnDevice returns null), on the one model with its adapter attached.
 */
export function sampleGptLoraOnDevice(
  model: GPT,
  prompts: number[][],
  options: SampleOptions,
): Promise<SampleResult | null> {
  return sampleRoleOnDevice(gptLoraSource(model), prompts, options);
}

async function sampleRoleOnDevice(
  source: RoleSource | null,
  prompts: number[][],
  options: SampleOptions,
): Promise<SampleResult | null> {
  const e = source ? await headSizeEngine(source.config.headDim) : null;
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
 * A role's draw over `base` as it stands (an adapter attached or none), `threads`
 * invocations per row in the draw (16 on CPU drivers, 64 on GPUs).
 */
export async function sampleOnModel(
  base: DeviceTransformer,
  prompts: number[][],
  options: SampleOptions,
  threads: number,
): Promise<SampleResult> {
  const result: SampleResult = {
    tokens: prompts.map(() => []),
    logProbs: prompts.map(() => []),
    finished: prompts.map(() => false),
  };
  const budget = (p: readonly number[]) =>
    Math.min(options.maxNewTokens, base.contextLength - p.length);
  // Rows by their prompt's index among the distinct ones (a stable sort: rows of one prompt
  // stay together, each with its own stream).
  const { source } = distinctPrompts(prompts);
  const order = prompts
    .map((_, r) => r)
    .filter((r) => budget(prompts[r] as number[]) > 0)
    .sort((a, b) => (source[a] as number) - (source[b] as number));
  for (let at = 0; at < order.length; at += MAX_BATCH_ROWS) {
    const rows = order.slice(at, at + MAX_BATCH_ROWS);
    const part = await sampleRows(base, rows, prompts, source, budget, options, threads);
    rows.forEach((r, slot) => {
      const row = part[slot] as (typeof part)[number];
      result.tokens[r] = row.tokens;
      result.logProbs[r] = row.logProbs;
      result.finished[r] = row.finished;
    });
  }
  return result;
}

/** Rows `rows` (prompt indices) decoded together to their stop or budget: each row's draw. */
async function sampleRows(
  base: DeviceTransformer,
  rows: number[],
  prompts: number[][],
  source: ArrayLike<number>,
  budget: (p: readonly number[]) => number,
  options: SampleOptions,
  threads: number,
) {
  const rt = base.rt;
  const n = rows.length;
  const own = rows.map((r) => prompts[r] as number[]);
  base.batchCaches(n, Math.max(...own.map((p) => p.length + budget(p))));
  // Each distinct prompt into its first row, its logits into all its rows; they copy its cache.
  const slotsOf = new Map<number, number[]>();
  rows.forEach((r, slot) => {
    const slots = slotsOf.get(source[r] as number);
    if (slots) slots.push(slot);
    else slotsOf.set(source[r] as number, [slot]);
  });
  for (const [first, ...others] of slotsOf.values()) {
    const prompt = own[first as number] as number[];
    base.prefillRowOnDevice(first as number, prompt, [first as number, ...others]);
    roleDeviceCalls.prefilledTokens += prompt.length;
    for (const slot of others) base.copyRow(first as number, slot, prompt.length);
  }
  const maxNew = options.maxNewTokens;
  const state = rt.buffer(n * ROW_STATE_WORDS, 'row state');
  const out = rt.buffer(2 * n * maxNew, 'sampled');
  rt.write(state, initialRowStates(own, rows, options.seed, budget));
  // Draw from the current logits, then decode the drawn tokens into the next ones. A row ends
  // at its last allowed position: budget(p) tokens put its last at contextLength − 1.
  const step = rt.program([
    pickSpec({
      B: n,
      vocabSize: base.config.vocabSize,
      stride: base.Vp,
      lastPos: base.contextLength - 1,
      maxNew,
      options,
      threads,
      state,
      logits: base.batchLogits,
      out,
      unused: rt.dummy.r,
    }),
    ...base.fedDecodeSpecs(n, state),
  ]);
  try {
    return (await replayDecode(rt, step, { out, state }, n, maxNew, TOKENS_PER_READ)).rows;
  } finally {
    rt.destroyProgram(step);
    rt.free(state);
    rt.free(out);
  }
}

/** The role's device policy (its adapter current with tfjs), or null where the engine is off. */
export async function rolePolicy(source: RoleSource | null): Promise<DeviceLoraPolicy | null> {
  const e = source ? await headSizeEngine(source.config.headDim) : null;
  if (!e || !source) return null;
  return (await deviceRole(e, source)).policy;
}

export function llamaRolePolicy(model: LlamaModel): Promise<DeviceLoraPolicy | null> {
  return rolePolicy(llamaSource(model));
}

/** The base alone on the device (the KL reference): a policy whose adapters are zero. */
export async function referencePolicy(source: RoleSource | null): Promise<DeviceLoraPolicy | null> {
  const policy = await rolePolicy(source);
  const e = kernelEngine();
  if (!e || !policy) return null;
  const cached = references.get(policy);
  if (cached) return cached;
  const zero: Adapters = new Map();
  for (const [key, pair] of await policy.exportAdapters())
    zero.set(key, { A: pair.A, B: new Float32Array(pair.B.length) });
  const reference = new DeviceLoraPolicy(e.rt, policy.model, policy.lora, zero);
  references.set(policy, reference);
  return reference;
}
const references = new WeakMap<DeviceLoraPolicy, DeviceLoraPolicy>();

/** After a device update: tfjs's adapter variables take the device's values. */
export async function syncRole(source: RoleSource): Promise<void> {
  const e = kernelEngine();
  const role = roles.get(source.lora);
  if (e && role) await writeBack(role, source.lora);
  roleDeviceCalls.update++;
}

/** Whether the role's adapter came from tfjs since the device last updated it. */
export function roleIsFresh(source: RoleSource): boolean {
  return roles.get(source.lora)?.fresh ?? true;
}

/**
 * The policy's Adam moments as the tfjs AdamW lays them out (every m, then every v, in
 * loraParams' order: each module's lora_A then lora_B), and its steps.
 */
export async function adamStateOf(policy: DeviceLoraPolicy, lora: GptLora): Promise<AdamWState> {
  const { m, v, steps } = await policy.exportMoments();
  const moments: AdamWState['moments'] = [];
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
export function importAdamState(policy: DeviceLoraPolicy, lora: GptLora, state: AdamWState): void {
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

/**
 * Adam's state of a Llama role's adapter where the device updated it (tfjs's optimizer never saw
 * those steps); null where the device holds none.
 */
export async function llamaAdamStateOnDevice(model: LlamaModel): Promise<AdamWState | null> {
  const e = kernelEngine();
  const lora = model.lora as GptLora | undefined;
  const role = lora ? roles.get(lora) : undefined;
  if (!e || !lora || !role || role.engine !== e || role.policy.steps === 0) return null;
  return adamStateOf(role.policy, lora);
}

/** A resumed run's Adam state onto the device, where the engine is on (its next update continues it). */
export async function restoreLlamaAdamStateOnDevice(
  model: LlamaModel,
  state: AdamWState,
): Promise<void> {
  const policy = await llamaRolePolicy(model);
  const lora = model.lora as GptLora | undefined;
  if (!policy || !lora || state.moments.length === 0) return;
  importAdamState(policy, lora, state);
}
