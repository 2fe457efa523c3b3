// Role adapters over one pretrained base on the lab's kernels (engine/baseRoles.ts' roles with
// backend kernels): the base is held once on the device (deviceLlama.ts, 16-bit where its
// values are), and each role's adapter is a DeviceLlamaPolicy over it. As for GPT-2
// (kernelSampling.ts, kernelTraining.ts) tfjs stays the run's source of truth: a role's adapter
// is uploaded only when tfjs changed it, and after each device update the adapter is written
// back into the role's tfjs variables (so the snapshot's PEFT export, the evaluation and a
// fall-back to tfjs all read the last finished step). Sampling attaches the role's adapter to
// the base's prefill and decode and decodes a batch of rows together; the update computes GRPO's
// loss and its gradient w.r.t. the log-probs on the host (rl/grpoLossReference.ts), then the
// device's backward and AdamW.
import * as tf from '@tensorflow/tfjs-core';
import type { AdamWState } from '../../model/adamw';
import type { LlamaModel } from '../../model/families/llama';
import { type GptLora, PEFT_PREFIX } from '../../model/gptLora';
import { decodeHalves, f32ToHalf } from '../../model/halfFloat';
import { pickToken, rowPrng } from '../../rollout/pick';
import type { SampleOptions, SampleResult } from '../../rollout/types';
import type { Rng } from '../../tasks/random';
import { DeviceLlama, type LlamaTensor } from './deviceLlama';
import {
  type Adapters,
  adapterKey,
  DeviceLlamaPolicy,
  LORA_TARGETS,
  type LoraTarget,
} from './deviceLlamaLora';
import { distinctPrompts } from './deviceSampler';
import { type Engine, kernelEngine, llamaKernelEngine, markEngineFailed } from './kernelSampling';

interface RoleOnDevice {
  engine: Engine;
  policy: DeviceLlamaPolicy;
  /** The tfjs adapter variables' dataIds when the device last equalled them. */
  key: unknown[];
}

const bases = new WeakMap<Map<string, tf.Tensor>, { engine: Engine; model: DeviceLlama }>();
const roles = new WeakMap<GptLora, RoleOnDevice>();
/**
 * sample() and update() calls the device answered, and the prompt tokens the samplers
 * prefilled (tests, the bench: a prompt shared by a group's samples is prefilled once).
 */
export const llamaDeviceCalls = { sample: 0, update: 0, prefilledTokens: 0 };

/** A float32 matrix as the checkpoint held it: 16-bit where every value is one, else F32. */
function asCheckpointTensor(shape: number[], data: Float32Array): LlamaTensor {
  if (shape.length === 2)
    for (const dtype of ['BF16', 'F16'] as const) {
      const bits = Uint16Array.from(data, (v) => f32ToHalf(dtype, v));
      if (decodeHalves(dtype, bits).every((v, i) => Object.is(v, data[i])))
        return { dtype, shape, data: bits };
    }
  return { dtype: 'F32', shape, data };
}

/** The engine's one device copy of `base` (its frozen weights are read from tfjs once). */
async function deviceBase(e: Engine, base: LlamaModel): Promise<DeviceLlama> {
  const held = bases.get(base.weights);
  if (held && held.engine === e) return held.model;
  const tensors = new Map<string, LlamaTensor>();
  for (const [name, tensor] of base.weights)
    tensors.set(
      name,
      asCheckpointTensor(tensor.shape, (await tensor.data()) as unknown as Float32Array),
    );
  const contextLength = Math.min(base.config.maxPositionEmbeddings || 512, 4096);
  const model = new DeviceLlama(e.rt, base.config, tensors, { contextLength });
  bases.set(base.weights, { engine: e, model });
  return model;
}

const targetOf = (module: string) => module.slice(module.lastIndexOf('.') + 1) as LoraTarget;
const layerOf = (module: string) => Number(/layers\.(\d+)\./.exec(module)?.[1]);
const loraKey = (lora: GptLora) =>
  [...lora.modules.values()].flatMap((p) =>
    [p.a, p.b].map((v) => (v as unknown as { dataId: unknown }).dataId),
  );

/** The role's adapter on the device, uploaded from tfjs where tfjs changed it. */
async function deviceRole(e: Engine, model: LlamaModel): Promise<RoleOnDevice> {
  const lora = model.lora as GptLora;
  let role = roles.get(lora);
  const key = loraKey(lora);
  if (role && role.engine === e && key.every((id, i) => id === role?.key[i])) return role;
  const adapters: Adapters = new Map();
  for (const [module, pair] of lora.modules)
    adapters.set(adapterKey(layerOf(module), targetOf(module)), {
      A: (await pair.a.data()) as Float32Array,
      B: (await pair.b.data()) as Float32Array,
    });
  if (!role || role.engine !== e) {
    const targets = LORA_TARGETS.filter((t) => lora.settings.targets.includes(t));
    const shape = { rank: lora.settings.rank, alpha: lora.settings.alpha, targets };
    const policy = new DeviceLlamaPolicy(e.rt, await deviceBase(e, model), shape, adapters);
    role = { engine: e, policy, key };
    roles.set(lora, role);
  } else {
    role.policy.importAdapters(adapters);
    role.key = key;
  }
  return role;
}

/** The device's adapter written into the role's tfjs variables (tfjs holds the last step). */
async function writeBack(role: RoleOnDevice, lora: GptLora): Promise<void> {
  const adapters = await role.policy.exportAdapters();
  for (const [module, pair] of lora.modules) {
    const values = adapters.get(adapterKey(layerOf(module), targetOf(module)));
    if (!values) continue;
    pair.a.assign(tf.tensor(values.A, pair.a.shape));
    pair.b.assign(tf.tensor(values.B, pair.b.shape));
  }
  role.key = loraKey(lora);
}

/** Most rows decoded together (a GRPO step's group of samples, several groups at once). */
const MAX_BATCH_ROWS = 16;

/**
 * Samples every prompt with the role's adapter attached, rows decoded together on batch caches
 * of the base (one pass per token for up to MAX_BATCH_ROWS rows); tokens drawn as the tfjs
 * sampler draws them (pick.ts, row r's own stream). Rows are batched grouped by prompt, and each
 * distinct prompt is prefilled once: the other rows of the same prompt copy its cache and start
 * from its logits (a GRPO group's samples share their prompt). Null: engine off or a device
 * failure (the caller samples on tfjs).
 */
export async function sampleLlamaOnDevice(
  model: LlamaModel,
  prompts: number[][],
  options: SampleOptions,
): Promise<SampleResult | null> {
  const e = await llamaKernelEngine();
  if (!e || !model.lora) return null;
  try {
    const { policy } = await deviceRole(e, model);
    const base = policy.model;
    if (prompts.some((p) => p.length >= base.contextLength)) return null;
    const stops = new Set([
      ...(options.stopIds ?? []),
      ...(options.stopId !== undefined ? [options.stopId] : []),
    ]);
    const result: SampleResult = {
      tokens: prompts.map(() => []),
      logProbs: prompts.map(() => []),
      finished: prompts.map(() => false),
    };
    const budget = (r: number) =>
      Math.min(options.maxNewTokens, base.contextLength - (prompts[r] as number[]).length);
    // Rows by their prompt's index among the distinct ones (a stable sort: rows of one prompt
    // stay together, each with its own stream).
    const { source } = distinctPrompts(prompts);
    const order = prompts
      .map((_, r) => r)
      .filter((r) => budget(r) > 0)
      .sort((a, b) => (source[a] as number) - (source[b] as number));
    policy.attach();
    try {
      for (let at = 0; at < order.length; at += MAX_BATCH_ROWS) {
        const rows = order.slice(at, at + MAX_BATCH_ROWS);
        await sampleRows(base, rows, prompts, source, budget, stops, options, result);
      }
    } finally {
      policy.detach();
    }
    llamaDeviceCalls.sample++;
    return result;
  } catch (error) {
    markEngineFailed(e, error);
    return null;
  }
}

/** Rows `rows` (prompt indices) decoded together to their stop or budget, into `result`. */
async function sampleRows(
  base: DeviceLlama,
  rows: number[],
  prompts: number[][],
  source: ArrayLike<number>,
  budget: (r: number) => number,
  stops: Set<number>,
  options: SampleOptions,
  result: SampleResult,
): Promise<void> {
  const lengths = rows.map((r) => (prompts[r] as number[]).length);
  base.batchCaches(
    rows.length,
    Math.max(...rows.map((r, slot) => (lengths[slot] as number) + budget(r))),
  );
  // Each distinct prompt into its first row; its other rows copy that row's cache.
  let logits: Float32Array[] = [];
  const firstSlot = new Map<number, number>();
  for (const [slot, r] of rows.entries()) {
    const distinct = source[r] as number;
    const first = firstSlot.get(distinct);
    if (first === undefined) {
      firstSlot.set(distinct, slot);
      logits[slot] = await base.prefillRow(slot, prompts[r] as number[]);
      llamaDeviceCalls.prefilledTokens += lengths[slot] as number;
    } else {
      base.copyRow(first, slot, lengths[slot] as number);
      logits[slot] = logits[first] as Float32Array;
    }
  }
  const prngs = rows.map((r) => rowPrng(options.seed, r));
  const done = rows.map(() => false);
  for (;;) {
    const next = rows.map((r, slot) => {
      if (done[slot]) return 0;
      const pick = pickToken(
        logits[slot] as Float32Array,
        options.temperature,
        options.topK,
        prngs[slot] as Rng,
      );
      const tokens = result.tokens[r] as number[];
      tokens.push(pick.id);
      (result.logProbs[r] as number[]).push(pick.logProb);
      if (stops.has(pick.id)) result.finished[r] = done[slot] = true;
      else if (tokens.length >= budget(r)) done[slot] = true;
      return pick.id;
    });
    if (done.every(Boolean)) return;
    // A finished row decodes along, its output unread, at the position of its last token
    // (inside its cache: prompt + budget fits the batch's rows).
    logits = await base.decodeRows(next, lengths);
    lengths.forEach((n, slot) => {
      if (!done[slot]) lengths[slot] = n + 1;
    });
  }
}

/** The role's device policy (its adapter current with tfjs), or null where the engine is off. */
export async function llamaRolePolicy(model: LlamaModel): Promise<DeviceLlamaPolicy | null> {
  const e = await llamaKernelEngine();
  if (!e || !model.lora) return null;
  return (await deviceRole(e, model)).policy;
}

/** The base alone on the device (the KL reference): a policy whose adapters are zero. */
export async function llamaReferencePolicy(model: LlamaModel): Promise<DeviceLlamaPolicy | null> {
  const policy = await llamaRolePolicy(model);
  const e = kernelEngine();
  if (!e || !policy) return null;
  const cached = references.get(policy);
  if (cached) return cached;
  const zero: Adapters = new Map();
  for (const [key, pair] of await policy.exportAdapters())
    zero.set(key, { A: pair.A, B: new Float32Array(pair.B.length) });
  const reference = new DeviceLlamaPolicy(e.rt, policy.model, policy.lora, zero);
  references.set(policy, reference);
  return reference;
}
const references = new WeakMap<DeviceLlamaPolicy, DeviceLlamaPolicy>();

/** After a device update: tfjs's adapter variables take the device's values. */
export async function syncLlamaRole(model: LlamaModel): Promise<void> {
  const e = kernelEngine();
  const role = model.lora ? roles.get(model.lora) : undefined;
  if (e && role && model.lora) await writeBack(role, model.lora);
  llamaDeviceCalls.update++;
}

/**
 * Adam's state of the role's adapter where the device updated it (tfjs's optimizer never saw
 * those steps), as the tfjs AdamW lays it out (every m, then every v, in loraParams' order:
 * each module's lora_A then lora_B); null where the device holds none.
 */
export async function llamaAdamStateOnDevice(model: LlamaModel): Promise<AdamWState | null> {
  const e = kernelEngine();
  const lora = model.lora as GptLora | undefined;
  const role = lora ? roles.get(lora) : undefined;
  if (!e || !lora || !role || role.engine !== e || role.policy.steps === 0) return null;
  const { m, v, steps } = await role.policy.exportMoments();
  const moments: AdamWState['moments'] = [];
  for (const [kind, values] of [
    ['m', m],
    ['v', v],
  ] as const)
    for (const [module, pair] of lora.modules) {
      const moment = values.get(adapterKey(layerOf(module), targetOf(module)));
      if (!moment) throw new Error(`the device holds no Adam moments for ${module}`);
      for (const [side, data, shape] of [
        ['A', moment.A, pair.a.shape],
        ['B', moment.B, pair.b.shape],
      ] as const)
        moments.push({ name: `${PEFT_PREFIX}${module}.lora_${side}.weight/${kind}`, shape, data });
    }
  return { step: steps, moments };
}

/** A resumed run's Adam state onto the device, where the engine is on (its next update continues it). */
export async function restoreLlamaAdamStateOnDevice(
  model: LlamaModel,
  state: AdamWState,
): Promise<void> {
  const policy = await llamaRolePolicy(model);
  const lora = model.lora as GptLora | undefined;
  if (!policy || !lora || state.moments.length === 0) return;
  const modules = [...lora.modules.keys()];
  if (state.moments.length !== 4 * modules.length)
    throw new Error(
      `optimizer state holds ${state.moments.length} moments, the adapter needs ${4 * modules.length}`,
    );
  const half = 2 * modules.length;
  const m: Adapters = new Map();
  const v: Adapters = new Map();
  modules.forEach((module, i) => {
    const key = adapterKey(layerOf(module), targetOf(module));
    m.set(key, { A: state.moments[2 * i]!.data, B: state.moments[2 * i + 1]!.data });
    v.set(key, { A: state.moments[half + 2 * i]!.data, B: state.moments[half + 2 * i + 1]!.data });
  });
  policy.importMoments(m, v, state.step);
}
