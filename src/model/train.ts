// One optimizer step on any scalar loss of the model (SFT cross-entropy, GRPO surrogate).
import * as tf from '@tensorflow/tfjs-core';
import type { AdamW } from './adamw';
import type { GPT } from './gpt';

export interface StepResult {
  loss: number;
  gradNorm: number;
}

/**
 * Computes d loss / d params with tfjs autodiff, applies AdamW, frees every intermediate.
 * `lossFn` builds the loss from the model's variables (e.g. with tokenLogProbs).
 */
export async function optimizerStep(
  model: GPT,
  optimizer: AdamW,
  lossFn: () => tf.Scalar,
  lr: number,
): Promise<StepResult> {
  const variables = [...model.params.values()];
  const { value, grads } = tf.variableGrads(lossFn, variables);
  const byName = new Map<string, tf.Tensor>();
  for (const [name, variable] of model.params) {
    const g = grads[variable.name];
    if (g) byName.set(name, g);
  }
  const gradNorm = await optimizer.apply(byName, lr);
  const loss = (await value.data())[0]!;
  value.dispose();
  for (const g of Object.values(grads)) g.dispose();
  return { loss, gradNorm };
}
