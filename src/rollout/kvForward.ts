// The model's forward pass over new tokens given cached keys and values of earlier ones.
// Inference only (no gradients), batched tfjs ops; numerically the same computation as
// src/model/gpt.ts's forward, in a different order of reductions only where tfjs chooses.
import * as tf from '@tensorflow/tfjs-core';
import { type GPT, geluTanh, layerNorm, linear, matMul2d, param } from '../model';

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
  const { nEmbd: d, nHead: H, nLayer, layerNormEps: eps, vocabSize: V } = model.config;
  const [B, S] = ids.shape;
  const hd = d / H;
  const Tall = start + S;
  type Out = { logits: tf.Tensor3D; cache: LayerCache[] };
  // tidy keeps every tensor inside the returned object and frees the rest.
  const out = tf.tidy(() => {
    const wte = param(model, 'transformer.wte.weight') as tf.Tensor2D;
    const wpe = tf.slice(param(model, 'transformer.wpe.weight'), [start, 0], [S, d]);
    const oneHot = tf.cast(tf.oneHot(tf.reshape(ids, [B * S]), V, 1, 0, 'int32'), 'float32');
    let x = matMul2d(oneHot as tf.Tensor2D, wte);
    x = tf.reshape(tf.add(tf.reshape(x, [B, S, d]), wpe), [B * S, d]);
    // Query i (absolute position start+i) sees keys 0..start+i.
    const queryPos = tf.reshape(tf.add(tf.range(0, S, 1, 'int32'), start), [S, 1]);
    const keyPos = tf.reshape(tf.range(0, Tall, 1, 'int32'), [1, Tall]);
    const mask = tf.mul(tf.cast(tf.greater(keyPos, queryPos), 'float32'), -1e9);
    const next: LayerCache[] = [];
    for (let i = 0; i < nLayer; i++) {
      const h = `transformer.h.${i}`;
      const a = layerNorm(x, param(model, `${h}.ln_1.weight`), param(model, `${h}.ln_1.bias`), eps);
      const qkv = linear(
        a,
        param(model, `${h}.attn.c_attn.weight`),
        param(model, `${h}.attn.c_attn.bias`),
      );
      const heads = tf.transpose(tf.reshape(qkv, [B, S, 3, H, hd]), [2, 0, 3, 1, 4]);
      const [q, kNew, vNew] = tf.unstack(tf.reshape(heads, [3, B * H, S, hd])) as tf.Tensor3D[];
      const past = cache?.[i];
      const k = past ? (tf.concat([past.k, kNew!], 1) as tf.Tensor3D) : kNew!;
      const v = past ? (tf.concat([past.v, vNew!], 1) as tf.Tensor3D) : vNew!;
      next.push({ k: tf.keep(k), v: tf.keep(v) });
      const scores = tf.add(tf.matMul(tf.mul(q!, 1 / Math.sqrt(hd)), k, false, true), mask);
      const y = tf.matMul(tf.softmax(scores), v);
      const merged = tf.reshape(tf.transpose(tf.reshape(y, [B, H, S, hd]), [0, 2, 1, 3]), [
        B * S,
        d,
      ]);
      x = tf.add(
        x,
        linear(
          merged as tf.Tensor2D,
          param(model, `${h}.attn.c_proj.weight`),
          param(model, `${h}.attn.c_proj.bias`),
        ),
      );
      const m = layerNorm(x, param(model, `${h}.ln_2.weight`), param(model, `${h}.ln_2.bias`), eps);
      const up = geluTanh(
        linear(m, param(model, `${h}.mlp.c_fc.weight`), param(model, `${h}.mlp.c_fc.bias`)),
      );
      x = tf.add(
        x,
        linear(
          up as tf.Tensor2D,
          param(model, `${h}.mlp.c_proj.weight`),
          param(model, `${h}.mlp.c_proj.bias`),
        ),
      );
    }
    x = layerNorm(
      x,
      param(model, 'transformer.ln_f.weight'),
      param(model, 'transformer.ln_f.bias'),
      eps,
    );
    const logits = tf.reshape(matMul2d(x, tf.transpose(wte) as tf.Tensor2D), [
      B,
      S,
      V,
    ]) as tf.Tensor3D;
    return { logits, cache: next } as unknown as tf.TensorContainer;
  });
  return out as unknown as Out;
}

export function disposeCache(cache: LayerCache[] | null): void {
  for (const layer of cache ?? []) {
    layer.k.dispose();
    layer.v.dispose();
  }
}
