// LoRA on tfjs for any config of the one transformer: y = W·x + b + (alpha/r)·B·(A·x) on the chosen
// projections (GPT-2's Conv1D `c_attn`, `c_proj` in attention and MLP, `c_fc`; the Llama
// family's nn.Linear q/k/v/o and gate/up/down). A and B keep PEFT's layout (A [r, in], B [out,
// r]; a Conv1D weight is [in, out], so PEFT marks it fan_in_fan_out), A starts as PEFT's
// kaiming-uniform (a = √5: U(−1/√in, 1/√in)), B at zero, so a fresh adapter changes nothing.
// tfjs applies the adapter in the forward (transformer.ts), never merged: the base stays
// untouched and is shared by every role's adapter and by the KL reference (adapter off). Copies
// made for another engine merge it (peft.ts' mergeLora: the kernels' sampler, a GGUF export).
import * as tf from '@tensorflow/tfjs-core';
import { Rng } from '../tasks/random';
import type { LoraSettings } from './loraSettings';
import { matMul2d } from './ops';
import type { Params } from './params';
import { mergeLora } from './peft';
import {
  type Projection,
  projections,
  projectionTarget,
  type TransformerConfig,
} from './transformerConfig';

export interface LoraPairVariables {
  /** [r, in] */
  a: tf.Variable;
  /** [out, r] */
  b: tf.Variable;
}

export interface Lora {
  settings: LoraSettings;
  /** alpha / r */
  scale: number;
  /** Module (`transformer.h.0.attn.c_attn`) → its A and B. */
  modules: Map<string, LoraPairVariables>;
}

/** PEFT's prefix of every adapter tensor (the wrapped model is `base_model.model`). */
export const PEFT_PREFIX = 'base_model.model.';

/**
 * The targeted projections of a model of config `c` (any family's), in layer order, with their
 * in and out sizes; a target that is none of its projections is refused by name.
 */
export function loraModules(c: TransformerConfig, targets: readonly string[]): Projection[] {
  const all = projections(c);
  const known = [...new Set(all.map((p) => projectionTarget(p.module)))];
  const unknown = targets.find((t) => !known.includes(t));
  if (unknown !== undefined)
    throw new Error(
      `loraTargets: ${unknown} is not one of this model's projections (${known.join(', ')})`,
    );
  return all.filter((p) => targets.includes(projectionTarget(p.module)));
}

/** A fresh adapter: A kaiming-uniform from `seed` (module by module, A row-major), B zero. */
export function createLora(c: TransformerConfig, settings: LoraSettings, seed: number): Lora {
  const prng = new Rng(seed);
  const { rank } = settings;
  const modules = new Map<string, LoraPairVariables>();
  for (const { module, inn, out } of loraModules(c, settings.targets)) {
    const bound = 1 / Math.sqrt(inn);
    const a = new Float32Array(rank * inn);
    for (let i = 0; i < a.length; i++) a[i] = (2 * prng.next() - 1) * bound;
    modules.set(module, pairVariables(a, new Float32Array(out * rank), rank, inn, out));
  }
  return { settings, scale: settings.alpha / rank, modules };
}

/** An adapter from given A and B values (a saved one); shapes as createLora's. */
export function loraFromValues(
  c: TransformerConfig,
  settings: LoraSettings,
  values: Map<string, { a: Float32Array; b: Float32Array }>,
  label: string,
): Lora {
  const { rank } = settings;
  const modules = new Map<string, LoraPairVariables>();
  for (const { module, inn, out } of loraModules(c, settings.targets)) {
    const pair = values.get(module);
    if (!pair) throw new Error(`${label}: the adapter has no ${module}`);
    if (pair.a.length !== rank * inn || pair.b.length !== out * rank)
      throw new Error(
        `${label}: ${module}: A and B do not fit [${rank}, ${inn}] and [${out}, ${rank}]`,
      );
    modules.set(module, pairVariables(pair.a, pair.b, rank, inn, out));
  }
  const extra = [...values.keys()].filter((m) => !modules.has(m));
  if (extra.length)
    throw new Error(
      `${label}: the adapter targets ${extra[0]}, which is not one of this model's targets`,
    );
  return { settings, scale: settings.alpha / rank, modules };
}

function pairVariables(
  a: Float32Array,
  b: Float32Array,
  rank: number,
  inn: number,
  out: number,
): LoraPairVariables {
  return tf.tidy(() => ({
    a: tf.variable(tf.tensor2d(a, [rank, inn]), true),
    b: tf.variable(tf.tensor2d(b, [out, rank]), true),
  }));
}

/** The adapter's variables under PEFT's tensor names: what the optimizer trains. */
export function loraParams(lora: Lora): Params {
  const params: Params = new Map();
  for (const [module, { a, b }] of lora.modules) {
    params.set(`${PEFT_PREFIX}${module}.lora_A.weight`, a);
    params.set(`${PEFT_PREFIX}${module}.lora_B.weight`, b);
  }
  return params;
}

/** x [N, in] → scale·(x·Aᵀ)·Bᵀ [N, out], the adapter's addition to a projection. */
export function loraDelta(lora: Lora, module: string, x: tf.Tensor2D): tf.Tensor2D | null {
  const pair = lora.modules.get(module);
  if (!pair) return null;
  const down = matMul2d(x, tf.transpose(pair.a) as tf.Tensor2D);
  return tf.mul(matMul2d(down, tf.transpose(pair.b) as tf.Tensor2D), lora.scale) as tf.Tensor2D;
}

export function disposeLora(lora: Lora): void {
  for (const { a, b } of lora.modules.values()) {
    a.dispose();
    b.dispose();
  }
}

/**
 * Each adapted projection's weight with the adapter merged in (PEFT's merge, peft.ts'
 * mergeLora), by weight name; `weight(name)` gives a copy of the base's f32 values to merge into.
 */
export async function mergedProjections(
  lora: Lora,
  weight: (name: string) => Float32Array,
  layout: 'in-out' | 'out-in',
): Promise<Map<string, Float32Array>> {
  const merged = new Map<string, Float32Array>();
  for (const [module, pair] of lora.modules) {
    const name = `${module}.weight`;
    const w = weight(name);
    const [rank, inn] = pair.a.shape as [number, number];
    const [a, b] = [await pair.a.data(), await pair.b.data()];
    mergeLora(w, inn, pair.b.shape[0] as number, a, b, rank, lora.scale, layout);
    merged.set(name, w);
  }
  return merged;
}
