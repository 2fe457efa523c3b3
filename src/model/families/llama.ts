// The Llama family (Llama, Qwen2, Qwen3) on tfjs, as Hugging Face defines it, read top to
// bottom like nanoGPT's model file:
//   x = embed(ids)
//   per layer:  h = RMSNorm(x);  q, k, v = h·Wqᵀ(+b), h·Wkᵀ(+b), h·Wvᵀ(+b)   (bias: Qwen2)
//               q, k = RMSNorm per head (Qwen3);  q, k = RoPE(q), RoPE(k)   (rotate-half)
//               x += o_proj(attention(q, k, v))   (each k/v head serves H/Hkv query heads)
//               x += down(silu(gate(RMSNorm(x))) · up(RMSNorm(x)))
//   logits = RMSNorm(x)·Eᵀ (tied) or ·lm_headᵀ
// Weights keep Hugging Face's [out, in] layout. Computes in float32; the base is frozen
// (plain tensors, not variables). A PEFT adapter read with `model logits --adapter` is merged
// into the weights on load (lora.ts); a role's trained adapter (`lora`, llamaLora.ts) is applied
// in the forward instead, so roles share one base and the base is the KL reference.
import * as tf from '@tensorflow/tfjs-core';
import { type GptLora, loraDelta } from '../gptLora';
import { causalAttention, gatherRows } from '../ops';
import type { CausalLM, KvLayerCache } from '../policy';
import type { LlamaConfig } from './llamaConfig';
import { ropeInverseFrequencies } from './rope';

export interface LlamaModel {
  config: LlamaConfig;
  /** Hugging Face's names → float32 tensors. */
  weights: Map<string, tf.Tensor>;
  /** A role's LoRA adapter over `weights`, keyed `model.layers.i.self_attn.q_proj` (llamaLora.ts). */
  lora?: GptLora;
}

/** Builds the model's tensors from float32 values under Hugging Face's names. */
export function createLlamaModel(
  config: LlamaConfig,
  values: Map<string, { shape: number[]; data: Float32Array }>,
): LlamaModel {
  const weights = new Map<string, tf.Tensor>();
  for (const [name, { shape, data }] of values)
    weights.set(name, tf.tensor(data, shape, 'float32'));
  return { config, weights };
}

export function disposeLlamaModel(model: LlamaModel): void {
  for (const t of model.weights.values()) t.dispose();
  model.weights.clear();
}

function w(model: LlamaModel, name: string): tf.Tensor {
  const t = model.weights.get(name);
  if (!t) throw new Error(`model has no weight ${name}`);
  return t;
}

/** nn.Linear: x [n, in] · Wᵀ (W [out, in]) + b. */
function linear(x: tf.Tensor2D, weight: tf.Tensor, bias?: tf.Tensor): tf.Tensor2D {
  const y = tf.matMul(x, weight as tf.Tensor2D, false, true) as tf.Tensor2D;
  return bias ? (tf.add(y, bias) as tf.Tensor2D) : y;
}

/** RMSNorm over the last axis: x / sqrt(mean(x²) + eps) · weight. */
export function rmsNorm<T extends tf.Tensor>(x: T, weight: tf.Tensor, eps: number): T {
  const variance = tf.mean(tf.mul(x, x), -1, true);
  return tf.mul(tf.mul(x, tf.rsqrt(tf.add(variance, eps))), weight) as T;
}

/**
 * cos and sin of RoPE's angles for each row's positions: [B, 1, S, hd], the angle of dimension
 * j being position · inv_freq[j mod hd/2] (rope.ts: θ^(−2j/hd), rescaled when config.json's
 * rope_scaling says so; the two halves repeat, as rotate-half pairs them).
 */
export function ropeTables(
  config: LlamaConfig,
  positions: readonly (readonly number[])[],
): { cos: tf.Tensor4D; sin: tf.Tensor4D } {
  const hd = config.headDim;
  const half = hd / 2;
  const B = positions.length;
  const S = positions[0]?.length ?? 0;
  // float32, as Hugging Face's inv_freq buffer is.
  const invFreq = Float32Array.from(ropeInverseFrequencies(config));
  const cos = new Float32Array(B * S * hd);
  const sin = new Float32Array(B * S * hd);
  for (let b = 0; b < B; b++) {
    for (let s = 0; s < S; s++) {
      const at = (b * S + s) * hd;
      for (let j = 0; j < half; j++) {
        const angle = Math.fround(positions[b]![s]! * invFreq[j]!);
        cos[at + j] = cos[at + j + half] = Math.cos(angle);
        sin[at + j] = sin[at + j + half] = Math.sin(angle);
      }
    }
  }
  return { cos: tf.tensor4d(cos, [B, 1, S, hd]), sin: tf.tensor4d(sin, [B, 1, S, hd]) };
}

/** x·cos + rotate_half(x)·sin, with rotate_half(x) = [−x₂, x₁] (x's two halves). */
export function applyRope(x: tf.Tensor4D, cos: tf.Tensor4D, sin: tf.Tensor4D): tf.Tensor4D {
  const [x1, x2] = tf.split(x, 2, -1);
  const rotated = tf.concat([tf.neg(x2!), x1!], -1);
  return tf.add(tf.mul(x, cos), tf.mul(rotated, sin));
}

/** Each of the Hkv key/value heads repeated for the H/Hkv query heads it serves: [B·Hkv, S, hd] → [B·H, S, hd]. */
export function repeatKv(x: tf.Tensor3D, B: number, groups: number): tf.Tensor3D {
  if (groups === 1) return x;
  const [rows, S, hd] = x.shape;
  const perRow = rows / B;
  // A broadcast product with ones (exact copies), not a rank-5 tile: tfjs cannot differentiate
  // that, and wasm has no gather gradient (UnsortedSegmentSum).
  const expanded = tf.mul(tf.reshape(x, [B, perRow, 1, S * hd]), tf.ones([1, 1, groups, 1]));
  return tf.reshape(expanded, [B * perRow * groups, S, hd]);
}

/** Attention over heads: q [B·H, S, hd], k and v [B·Hkv, S, hd] (not yet repeated) → [B·H, S, hd]. */
export type LlamaAttention = (
  q: tf.Tensor3D,
  k: tf.Tensor3D,
  v: tf.Tensor3D,
  layer: number,
) => tf.Tensor3D;

/** One decoder layer on x [B·S, d]; `rope` holds this batch's angles. */
export function llamaBlock(
  model: LlamaModel,
  layer: number,
  x: tf.Tensor2D,
  B: number,
  rope: { cos: tf.Tensor4D; sin: tf.Tensor4D },
  attention: LlamaAttention,
): tf.Tensor2D {
  const c = model.config;
  const S = x.shape[0] / B;
  const p = (name: string) => w(model, `model.layers.${layer}.${name}`);
  const bias = (name: string) => (c.attentionBias ? p(name) : undefined);
  // A projection (`self_attn.q_proj`), plus the role's adapter on it when it has one.
  const proj = (name: string, input: tf.Tensor2D, withBias = false): tf.Tensor2D => {
    const y = linear(input, p(`${name}.weight`), withBias ? bias(`${name}.bias`) : undefined);
    const delta = model.lora && loraDelta(model.lora, `model.layers.${layer}.${name}`, input);
    return delta ? tf.add(y, delta) : y;
  };

  const h = rmsNorm(x, p('input_layernorm.weight'), c.rmsNormEps);
  // [B·S, heads·hd] → [B, heads, S, hd], with Qwen3's per-head norm before RoPE.
  const heads = (y: tf.Tensor2D, n: number, norm?: string): tf.Tensor4D => {
    let t = tf.reshape(y, [B, S, n, c.headDim]) as tf.Tensor4D;
    if (norm) t = rmsNorm(t, p(norm), c.rmsNormEps);
    return tf.transpose(t, [0, 2, 1, 3]);
  };
  const qNorm = c.qkNorm ? 'self_attn.q_norm.weight' : undefined;
  const kNorm = c.qkNorm ? 'self_attn.k_norm.weight' : undefined;
  const q = heads(proj('self_attn.q_proj', h, true), c.numHeads, qNorm);
  const k = heads(proj('self_attn.k_proj', h, true), c.numKvHeads, kNorm);
  const v = heads(proj('self_attn.v_proj', h, true), c.numKvHeads);
  const flat = (t: tf.Tensor4D, n: number) => tf.reshape(t, [B * n, S, c.headDim]) as tf.Tensor3D;
  const y = attention(
    flat(applyRope(q, rope.cos, rope.sin), c.numHeads),
    flat(applyRope(k, rope.cos, rope.sin), c.numKvHeads),
    flat(v, c.numKvHeads),
    layer,
  );
  const merged = tf.reshape(
    tf.transpose(tf.reshape(y, [B, c.numHeads, S, c.headDim]), [0, 2, 1, 3]),
    [B * S, c.numHeads * c.headDim],
  ) as tf.Tensor2D;
  x = tf.add(x, proj('self_attn.o_proj', merged));

  const m = rmsNorm(x, p('post_attention_layernorm.weight'), c.rmsNormEps);
  const gate = proj('mlp.gate_proj', m);
  const up = proj('mlp.up_proj', m);
  return tf.add(x, proj('mlp.down_proj', tf.mul(tf.mul(gate, tf.sigmoid(gate)), up)));
}

/** Final RMSNorm and the head: [B·S, d] → logits [B, S, V]. */
export function llamaHead(model: LlamaModel, x: tf.Tensor2D, B: number): tf.Tensor3D {
  const c = model.config;
  const normed = rmsNorm(x, w(model, 'model.norm.weight'), c.rmsNormEps);
  const head = w(model, c.tieWordEmbeddings ? 'model.embed_tokens.weight' : 'lm_head.weight');
  return tf.reshape(linear(normed, head), [B, x.shape[0] / B, c.vocabSize]);
}

/** ids [B, S] → the residual stream [B·S, d]. */
export function llamaEmbed(model: LlamaModel, ids: tf.Tensor2D): tf.Tensor2D {
  const [B, S] = ids.shape;
  return tf.gather(w(model, 'model.embed_tokens.weight'), tf.reshape(ids, [B * S])) as tf.Tensor2D;
}

/** Causal attention over one whole sequence per row (no cache). */
function fullAttention(model: LlamaModel, B: number): LlamaAttention {
  const groups = model.config.numHeads / model.config.numKvHeads;
  return (q, k, v) => causalAttention(q, repeatKv(k, B, groups), repeatKv(v, B, groups));
}

/** ids [B, T] (int32) → the last layer's residual stream [B·T, d], before the final norm. */
export function llamaHiddenStates(model: LlamaModel, ids: tf.Tensor2D): tf.Tensor2D {
  const [B, T] = ids.shape;
  if (T > model.config.maxPositionEmbeddings)
    throw new Error(
      `sequence of ${T} tokens exceeds max_position_embeddings ${model.config.maxPositionEmbeddings}`,
    );
  const positions = Array.from({ length: B }, () => Array.from({ length: T }, (_, t) => t));
  const rope = ropeTables(model.config, positions);
  let x = llamaEmbed(model, ids);
  for (let i = 0; i < model.config.numLayers; i++)
    x = llamaBlock(model, i, x, B, rope, fullAttention(model, B));
  return x;
}

/** ids [B, T] (int32) → logits [B, T, V]. Call inside tf.tidy. */
export function llamaForward(model: LlamaModel, ids: tf.Tensor2D): tf.Tensor3D {
  return llamaHead(model, llamaHiddenStates(model, ids), ids.shape[0]);
}

/** The last position's logits only, [B, V]: the head (vocabulary × d) runs once per row. */
export function llamaLastLogits(model: LlamaModel, ids: tf.Tensor2D): tf.Tensor2D {
  const [B, T] = ids.shape;
  const x = llamaHiddenStates(model, ids);
  const last = tf.gather(
    x,
    tf.tensor1d(
      Array.from({ length: B }, (_, b) => b * T + T - 1),
      'int32',
    ),
  );
  return tf.reshape(llamaHead(model, last as tf.Tensor2D, B), [B, -1]);
}

/**
 * Attention that appends this step's keys and values ([B·Hkv, S, hd], after RoPE) to the cache
 * and attends to all of it under `mask` [B·H or 1, S, Tall]; the grown caches go to `next`.
 */
function cachedAttention(
  model: LlamaModel,
  B: number,
  cache: readonly KvLayerCache[] | null,
  mask: tf.Tensor,
  next: KvLayerCache[],
): LlamaAttention {
  const groups = model.config.numHeads / model.config.numKvHeads;
  return (q, kNew, vNew, layer) => {
    const past = cache?.[layer];
    const k = past ? (tf.concat([past.k, kNew], 1) as tf.Tensor3D) : kNew;
    const v = past ? (tf.concat([past.v, vNew], 1) as tf.Tensor3D) : vNew;
    next.push({ k: tf.keep(k), v: tf.keep(v) });
    const scale = 1 / Math.sqrt(q.shape[2]);
    const scores = tf.add(tf.matMul(tf.mul(q, scale), repeatKv(k, B, groups), false, true), mask);
    return tf.matMul(tf.softmax(scores), repeatKv(v, B, groups));
  };
}

/** ids [B, S] at positions start..start+S−1 after `cache` → logits [B, S, V] and the grown caches. */
export function llamaForwardCached(
  model: LlamaModel,
  ids: tf.Tensor2D,
  start: number,
  cache: readonly KvLayerCache[] | null,
): { logits: tf.Tensor3D; cache: KvLayerCache[] } {
  const [B, S] = ids.shape;
  const Tall = start + S;
  const out = tf.tidy(() => {
    const maskData = new Float32Array(S * Tall);
    for (let i = 0; i < S; i++)
      for (let j = start + i + 1; j < Tall; j++) maskData[i * Tall + j] = -1e9;
    const mask = tf.tensor3d(maskData, [1, S, Tall]);
    const positions = Array.from({ length: B }, () =>
      Array.from({ length: S }, (_, t) => start + t),
    );
    const rope = ropeTables(model.config, positions);
    const next: KvLayerCache[] = [];
    const attention = cachedAttention(model, B, cache, mask, next);
    let x = llamaEmbed(model, ids);
    for (let i = 0; i < model.config.numLayers; i++)
      x = llamaBlock(model, i, x, B, rope, attention);
    return { logits: llamaHead(model, x, B), cache: next } as unknown as tf.TensorContainer;
  });
  return out as unknown as { logits: tf.Tensor3D; cache: KvLayerCache[] };
}

/**
 * One decode step for B rows, each at its own position (rows' keys valid from firstKey[r] on:
 * left padding before a shorter prompt is masked out). Returns logits [B, V] and the grown caches.
 */
export function llamaDecodeStep(
  model: LlamaModel,
  tokens: readonly number[],
  positions: readonly number[],
  firstKey: readonly number[],
  pastLength: number,
  cache: readonly KvLayerCache[],
): { logits: tf.Tensor2D; cache: KvLayerCache[] } {
  const B = tokens.length;
  const H = model.config.numHeads;
  const total = pastLength + 1;
  const out = tf.tidy(() => {
    const maskData = new Float32Array(B * H * total);
    for (let r = 0; r < B; r++)
      for (let h = 0; h < H; h++)
        maskData.fill(-1e9, (r * H + h) * total, (r * H + h) * total + firstKey[r]!);
    const mask = tf.tensor3d(maskData, [B * H, 1, total]);
    const rope = ropeTables(
      model.config,
      positions.map((p) => [p]),
    );
    const next: KvLayerCache[] = [];
    const attention = cachedAttention(model, B, cache, mask, next);
    let x = llamaEmbed(model, tf.tensor2d(tokens as number[], [B, 1], 'int32'));
    for (let i = 0; i < model.config.numLayers; i++)
      x = llamaBlock(model, i, x, B, rope, attention);
    return {
      logits: tf.reshape(llamaHead(model, x, B), [B, -1]),
      cache: next,
    } as unknown as tf.TensorContainer;
  });
  return out as unknown as { logits: tf.Tensor2D; cache: KvLayerCache[] };
}

/** The Llama family behind the one policy interface (model/policy.ts) the sampler talks to. */
export function llamaCausalLM(model: LlamaModel): CausalLM {
  const c = model.config;
  return {
    family: 'llama',
    vocabSize: c.vocabSize,
    contextLength: c.maxPositionEmbeddings,
    numLayers: c.numLayers,
    cacheHeads: c.numKvHeads,
    forward: (ids) => llamaForward(model, ids),
    logitsAt: (ids, rows) =>
      llamaHead(model, gatherRows(llamaHiddenStates(model, ids), rows), ids.shape[0]),
    forwardCached: (ids, start, cache) => llamaForwardCached(model, ids, start, cache),
    decodeStep: (tokens, positions, firstKey, pastLength, cache) =>
      llamaDecodeStep(model, tokens, positions, firstKey, pastLength, cache),
    samplingBytes: (rows, prefix, width, prefillRows) => {
      const kv = 2 * c.numLayers * c.numKvHeads * c.headDim;
      // A layer's live activations per prefill position: residual, norms, q/k/v, the MLP's
      // three intermediate rows, a row of attention scores; then the logits.
      const perPosition =
        4 * c.hiddenSize + 3 * c.intermediateSize + c.numHeads * prefix + c.vocabSize;
      return (
        4 *
        (rows * (kv * width + c.numHeads * width) +
          prefillRows * prefix * (perPosition + kv) +
          rows * c.vocabSize)
      );
    },
  };
}
