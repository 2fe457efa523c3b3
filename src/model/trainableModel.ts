// What the GRPO update trains, whatever the family: the lab's GPT-2 (full weights or a LoRA
// adapter) or a Hub base's role (a LoRA adapter over a frozen base, families/hubModel.ts' hubRole).
// The trainer asks this module for the variables to train, the KL reference (the base with the
// adapter off, or a frozen copy for full fine-tuning), the logits at the scored positions, and
// a micro-batch's memory; it holds no family-specific code itself.
import type * as tf from '@tensorflow/tfjs-core';
import { type HubModel, hubTransformer } from './families/hubModel';
import { type GPT, gptTransformer, trainableParams } from './gpt';
import { loraParams } from './lora';
import { trainingBytes } from './memory';
import type { Params } from './params';
import { logitsAt, type Transformer } from './transformer';

export type TrainableModel = GPT | HubModel;

export function isHubModel(model: TrainableModel): model is HubModel {
  return 'weights' in model;
}

/** The variables an update trains (a Hub base trains through its adapter only). */
export function trainableOf(model: TrainableModel): Params {
  if (!isHubModel(model)) return trainableParams(model);
  if (!model.lora)
    throw new Error('a Llama-family base trains LoRA adapters only (give loraRank > 0)');
  return loraParams(model.lora);
}

/** The same base without its adapter: LoRA's KL reference (shares the weights). */
export function adapterOff(model: TrainableModel): TrainableModel {
  const { lora: _, ...base } = model;
  return base;
}

/** The model as the one transformer reads it (its weights and adapter, not copied). */
export function transformerOf(model: TrainableModel): Transformer {
  return isHubModel(model) ? hubTransformer(model) : gptTransformer(model);
}

/** Logits at the flattened positions `rows` of ids [B, T] → [B, L, V]; differentiable. */
export function logitsAtOf(
  model: TrainableModel,
  ids: tf.Tensor2D,
  rows: tf.Tensor1D,
): tf.Tensor3D {
  return logitsAt(transformerOf(model), ids, rows);
}

/** Peak bytes of one forward + backward over `rows` sequences of `width` tokens (memory.ts). */
export function trainingBytesOf(model: TrainableModel, rows: number, width: number): number {
  return trainingBytes(transformerOf(model).config, rows, width);
}
