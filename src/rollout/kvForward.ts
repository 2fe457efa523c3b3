// The model's forward pass over new tokens given cached keys and values of earlier ones:
// the same embedding, blocks and head as training (src/model/gpt.ts), with an attention
// that appends to the cache and attends to all cached keys. Inference only.
import * as tf from '@tensorflow/tfjs-core';
import { type AttentionFn, block, embedTokens, type GPT, head } from '../model';

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
