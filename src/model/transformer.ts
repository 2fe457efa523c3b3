// One decoder-only transformer on tfjs for every model the lab runs, read top to bottom:
//   x = embed(ids) (+ learned positions)
//   per layer:  h = norm(x);  q, k, v = h·W (one fused projection, or three; bias or not)
//               q, k = norm per head (Qwen3);  q, k = RoPE(q), RoPE(k)   (where positions are RoPE)
//               x += o(attention(q, k, v))   (each k/v head serves heads / kvHeads query heads)
//               x += mlp(norm(x)):  down(gelu(fc(·)))  or  down(silu(gate(·)) · up(·))
//   logits = norm(x)·Eᵀ (tied) or ·headᵀ
// The lab's tiny GPT-2 and Hugging Face's GPT-2, Llama, Qwen2 and Qwen3 are configurations of
// it (gpt.ts' gptTransformer, families/hubModel.ts' hubTransformer): their differences are the
// fields of TransformerConfig and a map of weight names, never a family's name in here. A role's
// LoRA adapter (lora.ts) adds s·(x·Aᵀ)·Bᵀ to any projection it targets. The same embedding,
// blocks and head serve training (whole sequences) and sampling (a KV cache), so a sample is
// scored by exactly the computation that drew it.
import * as tf from '@tensorflow/tfjs-core';
import { ropeInverseFrequencies, ropeRow } from './families/rope';
import { type Lora, loraDelta } from './lora';
import { samplingBytes } from './memory';
import {
  causalAttention,
  embed,
  gatherRows,
  geluTanh,
  layerNorm,
  matMul2d,
  matMulByRows,
} from './ops';
import type { CausalLM, KvLayerCache } from './policy';
import type { TransformerConfig } from './transformerConfig';

export type { TransformerConfig, TransformerNames } from './transformerConfig';

/** A model as this forward reads it: its config, its weights by name, its adapter. */
export interface Transformer {
  config: TransformerConfig;
  weight(name: string): tf.Tensor;
  lora?: Lora;
}

/** Attention over heads: q [B·H, S, hd], k and v [B·kvHeads, S, hd] → [B·H, S, hd]. */
export type AttentionFn = (
  q: tf.Tensor3D,
  k: tf.Tensor3D,
  v: tf.Tensor3D,
  layer: number,
) => tf.Tensor3D;

/** RoPE's cos and sin for each row's positions, [B, 1, S, hd]. */
export interface RopeTables {
  cos: tf.Tensor4D;
  sin: tf.Tensor4D;
}

/** RMSNorm over the last axis: x / sqrt(mean(x²) + eps) · weight. */
export function rmsNorm<T extends tf.Tensor>(x: T, weight: tf.Tensor, eps: number): T {
  const variance = tf.mean(tf.mul(x, x), -1, true);
  return tf.mul(tf.mul(x, tf.rsqrt(tf.add(variance, eps))), weight) as T;
}

function norm(t: Transformer, x: tf.Tensor2D, prefix: string): tf.Tensor2D {
  const c = t.config;
  return c.norm === 'layernorm'
    ? layerNorm(x, t.weight(`${prefix}.weight`), t.weight(`${prefix}.bias`), c.normEps)
    : rmsNorm(x, t.weight(`${prefix}.weight`), c.normEps);
}

/**
 * cos and sin of RoPE's angles for each row's positions: [B, 1, S, hd], the angle of dimension
 * j being position · inv_freq[j mod hd/2] (rope.ts: θ^(−2j/hd), rescaled when config.json's
 * rope_scaling says so; the two halves repeat, as rotate-half pairs them).
 */
export function ropeTables(
  c: TransformerConfig,
  positions: readonly (readonly number[])[],
): RopeTables {
  const hd = c.headDim;
  const half = hd / 2;
  const B = positions.length;
  const S = positions[0]?.length ?? 0;
  const rope = c.rope ?? { theta: 10000 };
  const invFreq = ropeInverseFrequencies({
    headDim: hd,
    ropeTheta: rope.theta,
    ropeScaling: rope.scaling,
  });
  // The kernels' table's row of each position (only those asked: a decode step's one), each
  // half repeated as rotate-half pairs them.
  const row = new Float32Array(hd);
  const cos = new Float32Array(B * S * hd);
  const sin = new Float32Array(B * S * hd);
  for (let b = 0; b < B; b++) {
    for (let s = 0; s < S; s++) {
      const at = (b * S + s) * hd;
      ropeRow(positions[b]![s]!, invFreq, row, 0);
      for (let j = 0; j < half; j++) {
        cos[at + j] = cos[at + j + half] = row[j]!;
        sin[at + j] = sin[at + j + half] = row[half + j]!;
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

/** Each of the kv heads repeated for the query heads it serves: [B·kvH, S, hd] → [B·H, S, hd]. */
export function repeatKv(x: tf.Tensor3D, B: number, groups: number): tf.Tensor3D {
  if (groups === 1) return x;
  const [rows, S, hd] = x.shape;
  const perRow = rows / B;
  // A broadcast product with ones (exact copies), not a rank-5 tile: tfjs cannot differentiate
  // that, and wasm has no gather gradient (UnsortedSegmentSum).
  const expanded = tf.mul(tf.reshape(x, [B, perRow, 1, S * hd]), tf.ones([1, 1, groups, 1]));
  return tf.reshape(expanded, [B * perRow * groups, S, hd]);
}

/**
 * The fused projection's output [B·S, 3·H·hd] → q, k, v as [B·H, S, hd] (its columns are
 * q | k | v, each split into heads). One 4D transpose and an unstack: wasm's transpose of rank 5
 * (and its gradient's) is a generic loop, 7–100× slower (`npm run bench -- tfjs-ops`).
 */
export function splitHeads(
  qkv: tf.Tensor2D,
  B: number,
  S: number,
  H: number,
  hd: number,
): tf.Tensor3D[] {
  const heads = tf.transpose(tf.reshape(qkv, [B, S, 3 * H, hd]), [0, 2, 1, 3]);
  return tf
    .unstack(tf.reshape(heads, [B, 3, H * S * hd]), 1)
    .map((part) => tf.reshape(part, [B * H, S, hd]) as tf.Tensor3D);
}

/** One projection: x·W (+ b), W in the config's layout, plus the adapter where it targets it. */
function project(t: Transformer, module: string, x: tf.Tensor2D, bias: boolean): tf.Tensor2D {
  const w = t.weight(`${module}.weight`);
  let y =
    t.config.weightLayout === 'in-out'
      ? matMul2d(x, w as tf.Tensor2D)
      : matMulByRows(x, w as tf.Tensor2D);
  if (bias) y = tf.add(y, t.weight(`${module}.bias`));
  const delta = t.lora && loraDelta(t.lora, module, x);
  return delta ? tf.add(y, delta) : y;
}

/** One pre-norm block on x [B·S, d]: x += attention(norm(x)); x += mlp(norm(x)). */
export function block(
  t: Transformer,
  layer: number,
  x: tf.Tensor2D,
  B: number,
  attention: AttentionFn,
  rope?: RopeTables,
): tf.Tensor2D {
  const c = t.config;
  const n = c.names;
  const S = x.shape[0] / B;
  const hd = c.headDim;
  const at = (module: string) => `${n.layer(layer)}.${module}`;

  const h = norm(t, x, at(n.inNorm));
  let q: tf.Tensor3D;
  let k: tf.Tensor3D;
  let v: tf.Tensor3D;
  if (c.fusedQkv) {
    [q, k, v] = splitHeads(project(t, at(n.qkv!), h, c.qkvBias), B, S, c.heads, hd) as [
      tf.Tensor3D,
      tf.Tensor3D,
      tf.Tensor3D,
    ];
  } else {
    // [B·S, heads·hd] → [B, heads, S, hd], with the per-head norm and RoPE where configured.
    const heads = (module: string, count: number, headNorm?: string, rotate = false) => {
      let y = tf.reshape(project(t, at(module), h, c.qkvBias), [B, S, count, hd]) as tf.Tensor4D;
      if (headNorm) y = rmsNorm(y, t.weight(`${at(headNorm)}.weight`), c.normEps);
      y = tf.transpose(y, [0, 2, 1, 3]);
      if (rotate && rope) y = applyRope(y, rope.cos, rope.sin);
      return tf.reshape(y, [B * count, S, hd]) as tf.Tensor3D;
    };
    q = heads(n.q!, c.heads, c.qkNorm ? n.qNorm : undefined, true);
    k = heads(n.k!, c.kvHeads, c.qkNorm ? n.kNorm : undefined, true);
    v = heads(n.v!, c.kvHeads);
  }
  const y = attention(q, k, v, layer);
  const merged = tf.reshape(tf.transpose(tf.reshape(y, [B, c.heads, S, hd]), [0, 2, 1, 3]), [
    B * S,
    c.heads * hd,
  ]) as tf.Tensor2D;
  x = tf.add(x, project(t, at(n.o), merged, c.projBias));

  const m = norm(t, x, at(n.postNorm));
  if (c.mlp === 'gelu') {
    const up = geluTanh(project(t, at(n.fc!), m, c.projBias)) as tf.Tensor2D;
    return tf.add(x, project(t, at(n.down), up, c.projBias));
  }
  const gate = project(t, at(n.gate!), m, false);
  const up = project(t, at(n.up!), m, false);
  return tf.add(x, project(t, at(n.down), tf.mul(tf.mul(gate, tf.sigmoid(gate)), up), false));
}

/** The final norm and the head: [B·S, d] → logits [B, S, V]. */
export function head(t: Transformer, x: tf.Tensor2D, B: number): tf.Tensor3D {
  const c = t.config;
  const normed = norm(t, x, c.names.finalNorm);
  const w = t.weight(c.tiedHead ? c.names.embed : (c.names.head as string));
  // A [V, d] table being trained in a Conv1D model (the lab's tiny ones) goes through its
  // explicit transpose, which has a gradient on wasm; a frozen one (a Hub GPT-2 under LoRA) and
  // an nn.Linear head multiply by its transpose in place, without copying the table each call.
  const trained = w instanceof tf.Variable && w.trainable;
  const logits =
    c.weightLayout === 'in-out' && trained
      ? matMul2d(normed, tf.transpose(w) as tf.Tensor2D)
      : matMulByRows(normed, w as tf.Tensor2D);
  return tf.reshape(logits, [B, x.shape[0] / B, c.vocabSize]);
}

/** Token rows of the embedding: a variable may be trained, and wasm has no gather gradient. */
function tokenRows(table: tf.Tensor, ids: tf.Tensor1D): tf.Tensor2D {
  return table instanceof tf.Variable
    ? embed(ids, table as unknown as tf.Tensor2D)
    : (tf.gather(table, ids) as tf.Tensor2D);
}

/** ids [B, S] at positions start..start+S−1 → the residual stream [B·S, d]. */
export function embedTokens(t: Transformer, ids: tf.Tensor2D, start = 0): tf.Tensor2D {
  const c = t.config;
  const [B, S] = ids.shape;
  const tokens = tokenRows(t.weight(c.names.embed), tf.reshape(ids, [B * S]));
  if (c.positions !== 'learned') return tokens;
  const positions = tf.slice(t.weight(c.names.positions as string), [start, 0], [S, c.hidden]);
  const summed = tf.add(tf.reshape(tokens, [B, S, c.hidden]), positions);
  return tf.reshape(summed, [B * S, c.hidden]) as tf.Tensor2D;
}

/** Positions 0..T−1 of every row (RoPE's tables; null with learned positions). */
function ropeFor(c: TransformerConfig, rows: (readonly number[])[]): RopeTables | undefined {
  return c.positions === 'rope' ? ropeTables(c, rows) : undefined;
}

const kvGroups = (c: TransformerConfig) => c.heads / c.kvHeads;

/** ids [B, T] (int32) → the last block's residual stream [B·T, d], before the final norm. */
export function hiddenStates(t: Transformer, ids: tf.Tensor2D): tf.Tensor2D {
  const c = t.config;
  const [B, T] = ids.shape;
  if (T > c.contextLength)
    throw new Error(`sequence of ${T} tokens exceeds the context of ${c.contextLength}`);
  const rope = ropeFor(
    c,
    Array.from({ length: B }, () => Array.from({ length: T }, (_, i) => i)),
  );
  const groups = kvGroups(c);
  const attention: AttentionFn = (q, k, v) =>
    causalAttention(q, repeatKv(k, B, groups), repeatKv(v, B, groups));
  let x = embedTokens(t, ids);
  for (let i = 0; i < c.layers; i++) x = block(t, i, x, B, attention, rope);
  return x;
}

/** ids [B, T] (int32) → logits [B, T, V]. Call inside tf.tidy or a gradient function. */
export function forward(t: Transformer, ids: tf.Tensor2D): tf.Tensor3D {
  return head(t, hiddenStates(t, ids), ids.shape[0]);
}

/**
 * Logits at chosen positions only: `rows` [B·L] indexes the flattened [B·T] positions, giving
 * [B, L, V]. The GRPO update asks only for the positions that predict completion tokens, so the
 * head, log-softmax and their gradients skip every prompt position.
 */
export function logitsAt(t: Transformer, ids: tf.Tensor2D, rows: tf.Tensor1D): tf.Tensor3D {
  return head(t, gatherRows(hiddenStates(t, ids), rows), ids.shape[0]);
}

/**
 * Attention that appends this step's keys and values ([B·kvH, S, hd]) to the cache and attends
 * to all of it under `mask` (broadcast to [B·H, S, Tall]); the grown caches go to `next`.
 */
function cachedAttention(
  c: TransformerConfig,
  B: number,
  cache: readonly KvLayerCache[] | null,
  mask: tf.Tensor,
  next: KvLayerCache[],
): AttentionFn {
  const groups = kvGroups(c);
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

/**
 * ids [B, S] at positions start..start+S−1 after `cache` → the last position's logits [B, V]
 * and the grown caches. The caller owns (and disposes) both the old and new caches. Inference
 * only. The head runs on the last position alone: a sampler reads nothing else, and over a Hub
 * vocabulary the head on every prompt position costs more than the layers.
 */
export function forwardCached(
  t: Transformer,
  ids: tf.Tensor2D,
  start: number,
  cache: readonly KvLayerCache[] | null,
): { lastLogits: tf.Tensor2D; cache: KvLayerCache[] } {
  const c = t.config;
  const [B, S] = ids.shape;
  const Tall = start + S;
  // tidy keeps every tensor inside the returned object and frees the rest.
  const out = tf.tidy(() => {
    // Query i (absolute position start+i) sees keys 0..start+i. Built in JavaScript: tiny,
    // and it avoids int32/float mixing in tfjs ops.
    const maskData = new Float32Array(S * Tall);
    for (let i = 0; i < S; i++)
      for (let j = start + i + 1; j < Tall; j++) maskData[i * Tall + j] = -1e9;
    const mask = tf.tensor3d(maskData, [1, S, Tall]);
    const rope = ropeFor(
      c,
      Array.from({ length: B }, () => Array.from({ length: S }, (_, i) => start + i)),
    );
    const next: KvLayerCache[] = [];
    const attention = cachedAttention(c, B, cache, mask, next);
    let x = embedTokens(t, ids, start);
    for (let i = 0; i < c.layers; i++) x = block(t, i, x, B, attention, rope);
    const last = tf.reshape(
      tf.slice(tf.reshape(x, [B, S, c.hidden]), [0, S - 1, 0], [B, 1, c.hidden]),
      [B, c.hidden],
    ) as tf.Tensor2D;
    const lastLogits = tf.reshape(head(t, last, B), [B, c.vocabSize]);
    return { lastLogits, cache: next } as unknown as tf.TensorContainer;
  });
  return out as unknown as { lastLogits: tf.Tensor2D; cache: KvLayerCache[] };
}

/**
 * One decode step for B rows, each at its own position: tokens [B] at `positions`, attending to
 * the cache ([B·kvH, pastLength, hd] per layer, row r's keys valid from `firstKey[r]` on — the
 * left padding before a shorter prompt is masked out) and to itself. Returns the logits [B, V]
 * and the caches grown by one position; the caller owns (and disposes) both.
 */
export function decodeStep(
  t: Transformer,
  tokens: readonly number[],
  positions: readonly number[],
  firstKey: readonly number[],
  pastLength: number,
  cache: readonly KvLayerCache[],
): { logits: tf.Tensor2D; cache: KvLayerCache[] } {
  const c = t.config;
  const B = tokens.length;
  const total = pastLength + 1;
  const out = tf.tidy(() => {
    const maskData = new Float32Array(B * c.heads * total);
    for (let r = 0; r < B; r++)
      for (let h = 0; h < c.heads; h++)
        maskData.fill(-1e9, (r * c.heads + h) * total, (r * c.heads + h) * total + firstKey[r]!);
    const mask = tf.tensor3d(maskData, [B * c.heads, 1, total]);
    // Inference only: gather the embedding rows (its gradient is what wasm lacks, not it).
    let x = tf.gather(t.weight(c.names.embed), tf.tensor1d(tokens as number[], 'int32'));
    if (c.positions === 'learned') {
      const table = t.weight(c.names.positions as string);
      x = tf.add(x, tf.gather(table, tf.tensor1d(positions as number[], 'int32')));
    }
    const rope = ropeFor(
      c,
      positions.map((p) => [p]),
    );
    const next: KvLayerCache[] = [];
    const attention = cachedAttention(c, B, cache, mask, next);
    for (let i = 0; i < c.layers; i++) x = block(t, i, x as tf.Tensor2D, B, attention, rope);
    const logits = tf.reshape(head(t, x as tf.Tensor2D, B), [B, -1]);
    return { logits, cache: next } as unknown as tf.TensorContainer;
  });
  return out as unknown as { logits: tf.Tensor2D; cache: KvLayerCache[] };
}

/** Frees a KV cache's tensors. */
export function disposeCache(cache: readonly KvLayerCache[] | null): void {
  for (const layer of cache ?? []) {
    layer.k.dispose();
    layer.v.dispose();
  }
}

/** The model behind the one policy interface (policy.ts) the sampler and the trainer talk to. */
export function transformerLM(t: Transformer, family: CausalLM['family']): CausalLM {
  const c = t.config;
  return {
    family,
    vocabSize: c.vocabSize,
    contextLength: c.contextLength,
    numLayers: c.layers,
    cacheHeads: c.kvHeads,
    forward: (ids) => forward(t, ids),
    logitsAt: (ids, rows) => logitsAt(t, ids, rows),
    forwardCached: (ids, start, cache) => forwardCached(t, ids, start, cache),
    decodeStep: (tokens, positions, firstKey, pastLength, cache) =>
      decodeStep(t, tokens, positions, firstKey, pastLength, cache),
    samplingBytes: (rows, prefix, width, prefillRows) =>
      samplingBytes(c, rows, prefix, width, prefillRows),
  };
}
