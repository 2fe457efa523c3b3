// A GPT-2 style decoder, nanoGPT style: learned positions, pre-LayerNorm, GELU (tanh)
// MLP, fused q,k,v projection, tied input/output embeddings.
import * as tf from '@tensorflow/tfjs-core';
import type { ModelConfig } from './config';
import { disposeLora, type GptLora, loraDelta, loraParams } from './gptLora';
import { tokenLogProbs } from './logProbs';
import { causalAttention, embed, gatherRows, geluTanh, layerNorm, linear, matMul2d } from './ops';
import { initialValues, makeVariables, type Params } from './params';

export interface GPT {
  config: ModelConfig;
  params: Params;
  /** A LoRA adapter over `params` (then frozen, possibly shared with other roles): gptLora.ts. */
  lora?: GptLora;
}

/** What an update trains: the adapter's variables with LoRA, else every parameter. */
export function trainableParams(model: GPT): Params {
  return model.lora ? loraParams(model.lora) : model.params;
}

/** The same base without its adapter (shares the variables): LoRA's KL reference. */
export function baseOf(model: GPT): GPT {
  return { config: model.config, params: model.params };
}

export function createModel(config: ModelConfig, seed: number): GPT {
  return { config, params: makeVariables(config, initialValues(config, seed)) };
}

export function param(model: GPT, name: string): tf.Tensor {
  const v = model.params.get(name);
  if (!v) throw new Error(`model has no parameter ${name}`);
  return v;
}

/** Attention over heads: q, k, v [B·H, S, hd] → [B·H, S, hd]. Training uses causalAttention;
 * the KV-cache sampler passes one that attends to cached keys too. */
export type AttentionFn = (
  q: tf.Tensor3D,
  k: tf.Tensor3D,
  v: tf.Tensor3D,
  layer: number,
) => tf.Tensor3D;

/**
 * Embeds S tokens per row at positions start..start+S−1: ids [B,S] → residual stream [B·S, d]
 * (rows flattened so every projection is one 2D matMul).
 */
export function embedTokens(model: GPT, ids: tf.Tensor2D, start = 0): tf.Tensor2D {
  const d = model.config.nEmbd;
  const [B, S] = ids.shape;
  const wte = param(model, 'transformer.wte.weight') as tf.Tensor2D;
  const wpe = tf.slice(param(model, 'transformer.wpe.weight'), [start, 0], [S, d]);
  const tokens = tf.reshape(embed(tf.reshape(ids, [B * S]), wte), [B, S, d]);
  return tf.reshape(tf.add(tokens, wpe), [B * S, d]) as tf.Tensor2D;
}

/**
 * c_attn's output [B·S, 3·H·hd] → q, k, v as [B·H, S, hd] (its columns are q | k | v, each split
 * into heads, so its 3·H column blocks of hd are q's heads, then k's, then v's). One 4D transpose
 * and an unstack: wasm's transpose of rank 5 (and its gradient's) is a generic loop, 7–100×
 * slower (`npm run bench -- tfjs-ops`).
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

/** One pre-LN transformer block: x += attn(ln_1(x)); x += mlp(ln_2(x)). */
export function block(
  model: GPT,
  layer: number,
  x: tf.Tensor2D,
  B: number,
  attention: AttentionFn,
): tf.Tensor2D {
  const { nEmbd: d, nHead: H, layerNormEps: eps } = model.config;
  const S = x.shape[0] / B;
  const hd = d / H;
  const w = (name: string) => param(model, `transformer.h.${layer}.${name}`);
  // A Conv1D projection, plus the adapter's scale·(x·Aᵀ)·Bᵀ where LoRA targets it.
  const project = (module: string, input: tf.Tensor2D): tf.Tensor2D => {
    const y = linear(input, w(`${module}.weight`), w(`${module}.bias`));
    const delta = model.lora && loraDelta(model.lora, `transformer.h.${layer}.${module}`, input);
    return delta ? tf.add(y, delta) : y;
  };

  const a = layerNorm(x, w('ln_1.weight'), w('ln_1.bias'), eps);
  const qkv = project('attn.c_attn', a);
  const [q, k, v] = splitHeads(qkv, B, S, H, hd);
  const y = attention(q!, k!, v!, layer);
  const merged = tf.reshape(tf.transpose(tf.reshape(y, [B, H, S, hd]), [0, 2, 1, 3]), [B * S, d]);
  x = tf.add(x, project('attn.c_proj', merged as tf.Tensor2D));

  const m = layerNorm(x, w('ln_2.weight'), w('ln_2.bias'), eps);
  const up = geluTanh(project('mlp.c_fc', m)) as tf.Tensor2D;
  return tf.add(x, project('mlp.c_proj', up));
}

/** Final LayerNorm and the tied output projection: [B·S, d] → logits [B, S, V]. */
export function head(model: GPT, x: tf.Tensor2D, B: number): tf.Tensor3D {
  const { layerNormEps: eps, vocabSize: V } = model.config;
  const normed = layerNorm(
    x,
    param(model, 'transformer.ln_f.weight'),
    param(model, 'transformer.ln_f.bias'),
    eps,
  );
  const wte = param(model, 'transformer.wte.weight');
  const logits = matMul2d(normed, tf.transpose(wte) as tf.Tensor2D); // tied embeddings
  return tf.reshape(logits, [B, x.shape[0] / B, V]);
}

const trainingAttention: AttentionFn = (q, k, v) => causalAttention(q, k, v);

/** ids [B,T] (int32) → the last block's residual stream [B·T, d], before the final LayerNorm. */
export function hiddenStates(model: GPT, ids: tf.Tensor2D): tf.Tensor2D {
  const [B, T] = ids.shape;
  if (T > model.config.nCtx)
    throw new Error(`sequence of ${T} tokens exceeds the context of ${model.config.nCtx}`);
  let x = embedTokens(model, ids);
  for (let i = 0; i < model.config.nLayer; i++) x = block(model, i, x, B, trainingAttention);
  return x;
}

/** ids [B,T] (int32) → logits [B,T,V]. Call inside tf.tidy or a gradient function. */
export function forward(model: GPT, ids: tf.Tensor2D): tf.Tensor3D {
  return head(model, hiddenStates(model, ids), ids.shape[0]);
}

/**
 * Logits at chosen positions only: `rows` [B·L] indexes the flattened [B·T] positions (row-major
 * per sequence), giving [B, L, V]. The GRPO update asks only for the positions that predict
 * completion tokens, so the head, log-softmax and their gradients skip every prompt position.
 */
export function logitsAt(model: GPT, ids: tf.Tensor2D, rows: tf.Tensor1D): tf.Tensor3D {
  const picked = gatherRows(hiddenStates(model, ids), rows);
  return head(model, picked, ids.shape[0]);
}

/**
 * log π(ids[:, t+1] | ids[:, ≤t]) for t = 0..T−2, as [B, T−1], differentiable. With a
 * temperature the log-probs are those of softmax(logits / temperature), as sampled.
 */
export function sequenceLogProbs(model: GPT, ids: tf.Tensor2D, temperature = 1): tf.Tensor2D {
  const [B, T] = ids.shape;
  const V = model.config.vocabSize;
  const logits = tf.slice(forward(model, ids), [0, 0, 0], [B, T - 1, V]);
  return tokenLogProbs(logits, tf.slice(ids, [0, 1], [B, T - 1]), temperature) as tf.Tensor2D;
}

/**
 * Masked mean cross-entropy of next-token prediction; mask [B, T−1] marks the targets that
 * count. `targetTokens`: the whole batch's count when this is one micro-batch of it (default:
 * this mask's sum), so micro-batch losses add up to the batch's.
 */
export function maskedLoss(
  model: GPT,
  ids: tf.Tensor2D,
  mask: tf.Tensor2D,
  targetTokens?: number,
): tf.Scalar {
  const logp = sequenceLogProbs(model, ids);
  const normalizer = targetTokens ?? tf.maximum(tf.sum(mask), 1);
  return tf.div(tf.neg(tf.sum(tf.mul(logp, mask))), normalizer) as tf.Scalar;
}

export function disposeModel(model: GPT): void {
  for (const v of model.params.values()) v.dispose();
  if (model.lora) disposeLora(model.lora);
}
