// A GPT-2 style decoder, nanoGPT style: learned positions, pre-LayerNorm, GELU (tanh)
// MLP, fused q,k,v projection, tied input/output embeddings.
import * as tf from '@tensorflow/tfjs-core';
import type { ModelConfig } from './config';
import { causalAttention, embed, geluTanh, layerNorm, linear, matMul2d } from './ops';
import { initialValues, makeVariables, type Params } from './params';

export interface GPT {
  config: ModelConfig;
  params: Params;
}

export function createModel(config: ModelConfig, seed: number): GPT {
  return { config, params: makeVariables(config, initialValues(config, seed)) };
}

export function param(model: GPT, name: string): tf.Tensor {
  const v = model.params.get(name);
  if (!v) throw new Error(`model has no parameter ${name}`);
  return v;
}

/** ids [B,T] (int32) → logits [B,T,V]. Call inside tf.tidy or a gradient function. */
export function forward(model: GPT, ids: tf.Tensor2D): tf.Tensor3D {
  const { nEmbd: d, nHead: H, nLayer, layerNormEps: eps, vocabSize: V, nCtx } = model.config;
  const [B, T] = ids.shape;
  if (T > nCtx) throw new Error(`sequence of ${T} tokens exceeds the context of ${nCtx}`);
  const hd = d / H;
  const wte = param(model, 'transformer.wte.weight') as tf.Tensor2D;
  const wpe = tf.slice(param(model, 'transformer.wpe.weight'), [0, 0], [T, d]);
  // Residual stream as [B·T, d] so every projection is one 2D matMul.
  let x = embed(tf.reshape(ids, [B * T]), wte);
  x = tf.reshape(tf.add(tf.reshape(x, [B, T, d]), wpe), [B * T, d]);

  for (let i = 0; i < nLayer; i++) {
    const h = `transformer.h.${i}`;
    const a = layerNorm(x, param(model, `${h}.ln_1.weight`), param(model, `${h}.ln_1.bias`), eps);
    const qkv = linear(
      a,
      param(model, `${h}.attn.c_attn.weight`),
      param(model, `${h}.attn.c_attn.bias`),
    );
    // [B·T, 3d] → three [B·H, T, hd] tensors.
    const heads = tf.transpose(tf.reshape(qkv, [B, T, 3, H, hd]), [2, 0, 3, 1, 4]);
    const [q, k, v] = tf.unstack(tf.reshape(heads, [3, B * H, T, hd])) as tf.Tensor3D[];
    const y = causalAttention(q!, k!, v!);
    const merged = tf.reshape(tf.transpose(tf.reshape(y, [B, H, T, hd]), [0, 2, 1, 3]), [
      B * T,
      d,
    ]) as tf.Tensor2D;
    x = tf.add(
      x,
      linear(
        merged,
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
  const logits = matMul2d(x, tf.transpose(wte) as tf.Tensor2D); // tied embeddings
  return tf.reshape(logits, [B, T, V]);
}

/**
 * log π(ids[:, t+1] | ids[:, ≤t]) for t = 0..T−2, as [B, T−1], differentiable. With a
 * temperature the log-probs are those of softmax(logits / temperature), as sampled.
 */
export function tokenLogProbs(model: GPT, ids: tf.Tensor2D, temperature = 1): tf.Tensor2D {
  const [B, T] = ids.shape;
  const V = model.config.vocabSize;
  const logits = forward(model, ids);
  const inputs = tf.slice(logits, [0, 0, 0], [B, T - 1, V]);
  const scaled = temperature === 1 ? inputs : tf.div(inputs, temperature);
  const logp = tf.logSoftmax(scaled);
  const targets = tf.slice(ids, [0, 1], [B, T - 1]);
  const pick = tf.cast(tf.oneHot(targets, V, 1, 0, 'int32'), 'float32');
  return tf.sum(tf.mul(logp, pick), -1) as tf.Tensor2D;
}

/** Masked mean cross-entropy of next-token prediction; mask [B, T−1] marks the targets that count. */
export function maskedLoss(model: GPT, ids: tf.Tensor2D, mask: tf.Tensor2D): tf.Scalar {
  const logp = tokenLogProbs(model, ids);
  return tf.div(tf.neg(tf.sum(tf.mul(logp, mask))), tf.maximum(tf.sum(mask), 1)) as tf.Scalar;
}

/** A frozen (non-trainable) copy, e.g. GRPO's reference policy. */
export function cloneModel(model: GPT, trainable = false): GPT {
  const params: Params = new Map();
  for (const [name, v] of model.params) params.set(name, tf.variable(v.clone(), trainable));
  return { config: { ...model.config }, params };
}

export function disposeModel(model: GPT): void {
  for (const v of model.params.values()) v.dispose();
}
