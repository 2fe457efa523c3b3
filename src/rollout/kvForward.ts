// The model's forward pass over new tokens given cached keys and values of earlier ones:
// the same embedding, blocks and head as training (src/model/gpt.ts), with an attention
// that appends to the cache and attends to all cached keys. Inference only.
import * as tf from '@tensorflow/tfjs-core';
import { type AttentionFn, block, embedTokens, type GPT, head, param } from '../model';

export interface LayerCache {
  /** [B·H, Tpast, hd] */
  k: tf.Tensor3D;
  v: tf.Tensor3D;
}

/**
 * ids [B, S] at positions start..start+S−1 → logits [B, S, V] and the extended caches.
 * The caller owns (and disposes) both the old and new caches.
 */
export function forwardCached(
  model: GPT,
  ids: tf.Tensor2D,
  start: number,
  cache: LayerCache[] | null,
): { logits: tf.Tensor3D; cache: LayerCache[] } {
  const [B, S] = ids.shape;
  const Tall = start + S;
  type Out = { logits: tf.Tensor3D; cache: LayerCache[] };
  // tidy keeps every tensor inside the returned object and frees the rest.
  const out = tf.tidy(() => {
    // Query i (absolute position start+i) sees keys 0..start+i. Built in JavaScript: tiny,
    // and it avoids int32/float mixing in tfjs ops.
    const maskData = new Float32Array(S * Tall);
    for (let i = 0; i < S; i++)
      for (let j = start + i + 1; j < Tall; j++) maskData[i * Tall + j] = -1e9;
    const mask = tf.tensor2d(maskData, [S, Tall]);
    const next: LayerCache[] = [];
    const cachedAttention: AttentionFn = (q, kNew, vNew, layer) => {
      const past = cache?.[layer];
      const k = past ? (tf.concat([past.k, kNew], 1) as tf.Tensor3D) : kNew;
      const v = past ? (tf.concat([past.v, vNew], 1) as tf.Tensor3D) : vNew;
      next.push({ k: tf.keep(k), v: tf.keep(v) });
      const scale = 1 / Math.sqrt(q.shape[2]);
      const scores = tf.add(tf.matMul(tf.mul(q, scale), k, false, true), mask);
      return tf.matMul(tf.softmax(scores), v);
    };
    let x = embedTokens(model, ids, start);
    for (let i = 0; i < model.config.nLayer; i++) x = block(model, i, x, B, cachedAttention);
    return { logits: head(model, x, B), cache: next } as unknown as tf.TensorContainer;
  });
  return out as unknown as Out;
}

export function disposeCache(cache: LayerCache[] | null): void {
  for (const layer of cache ?? []) {
    layer.k.dispose();
    layer.v.dispose();
  }
}

/**
 * One decode step for B rows, each at its own position: tokens [B] at `positions`, attending
 * to the cache ([B·H, pastLength, hd] per layer, row r's keys valid from `firstKey[r]` on —
 * the left padding before a shorter prompt is masked out) and to itself. Returns the logits
 * [B, V] and the caches grown by one position; the caller owns (and disposes) both.
 */
export function decodeStep(
  model: GPT,
  tokens: readonly number[],
  positions: readonly number[],
  firstKey: readonly number[],
  pastLength: number,
  cache: readonly LayerCache[],
): { logits: tf.Tensor2D; cache: LayerCache[] } {
  const B = tokens.length;
  const { nHead: H, nLayer } = model.config;
  const total = pastLength + 1;
  type Out = { logits: tf.Tensor2D; cache: LayerCache[] };
  const out = tf.tidy(() => {
    const maskData = new Float32Array(B * H * total);
    for (let r = 0; r < B; r++) {
      for (let h = 0; h < H; h++)
        maskData.fill(-1e9, (r * H + h) * total, (r * H + h) * total + firstKey[r]!);
    }
    const mask = tf.tensor3d(maskData, [B * H, 1, total]);
    // Inference only: gather the embedding rows (its gradient is what wasm lacks, not it).
    const wte = param(model, 'transformer.wte.weight');
    const wpe = param(model, 'transformer.wpe.weight');
    let x = tf.add(
      tf.gather(wte, tf.tensor1d(tokens as number[], 'int32')),
      tf.gather(wpe, tf.tensor1d(positions as number[], 'int32')),
    ) as tf.Tensor2D;
    const next: LayerCache[] = [];
    const cachedAttention: AttentionFn = (q, kNew, vNew, layer) => {
      const past = cache[layer]!;
      const k = tf.concat([past.k, kNew], 1) as tf.Tensor3D;
      const v = tf.concat([past.v, vNew], 1) as tf.Tensor3D;
      next.push({ k: tf.keep(k), v: tf.keep(v) });
      const scale = 1 / Math.sqrt(q.shape[2]);
      const scores = tf.add(tf.matMul(tf.mul(q, scale), k, false, true), mask);
      return tf.matMul(tf.softmax(scores), v);
    };
    for (let i = 0; i < nLayer; i++) x = block(model, i, x, B, cachedAttention);
    const logits = tf.reshape(head(model, x, B), [B, -1]);
    return { logits, cache: next } as unknown as tf.TensorContainer;
  });
  return out as unknown as Out;
}
