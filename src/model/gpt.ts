// The lab's GPT-2 (learned positions, pre-LayerNorm, GELU (tanh) MLP, fused q,k,v projection,
// tied input/output embeddings): its parameters as tfjs variables, and its configuration of the
// one transformer (transformer.ts), which runs it. Training's losses live here.
import * as tf from '@tensorflow/tfjs-core';
import { gptTransformerConfig, type ModelConfig } from './config';
import { tokenLogProbs } from './logProbs';
import { disposeLora, type Lora, loraParams } from './lora';
import { initialValues, makeVariables, type Params } from './params';
import {
  type Transformer,
  forward as transformerForward,
  hiddenStates as transformerHiddenStates,
  logitsAt as transformerLogitsAt,
} from './transformer';

export interface GPT {
  config: ModelConfig;
  params: Params;
  /** A LoRA adapter over `params` (then frozen, possibly shared with other roles): lora.ts. */
  lora?: Lora;
}

/** What an update trains: the adapter's variables with LoRA, else every parameter. */
export function trainableParams(model: GPT): Params {
  return model.lora ? loraParams(model.lora) : model.params;
}

export function createModel(config: ModelConfig, seed: number): GPT {
  return { config, params: makeVariables(config, initialValues(config, seed)) };
}

export function param(model: GPT, name: string): tf.Tensor {
  const v = model.params.get(name);
  if (!v) throw new Error(`model has no parameter ${name}`);
  return v;
}

/** The model as the one transformer reads it (its params and adapter, not copied). */
export function gptTransformer(model: GPT): Transformer {
  return {
    config: gptTransformerConfig(model.config),
    weight: (name) => param(model, name),
    ...(model.lora ? { lora: model.lora } : {}),
  };
}

/** ids [B,T] (int32) → the last block's residual stream [B·T, d], before the final LayerNorm. */
export function hiddenStates(model: GPT, ids: tf.Tensor2D): tf.Tensor2D {
  return transformerHiddenStates(gptTransformer(model), ids);
}

/** ids [B,T] (int32) → logits [B,T,V]. Call inside tf.tidy or a gradient function. */
export function forward(model: GPT, ids: tf.Tensor2D): tf.Tensor3D {
  return transformerForward(gptTransformer(model), ids);
}

/** Logits at chosen positions only ([B·L] rows of the flattened [B·T]) → [B, L, V]. */
export function logitsAt(model: GPT, ids: tf.Tensor2D, rows: tf.Tensor1D): tf.Tensor3D {
  return transformerLogitsAt(gptTransformer(model), ids, rows);
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
