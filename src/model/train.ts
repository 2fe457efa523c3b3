// The one update path of the lab: a loss split over micro-batches, gradients summed over
// them (gradient accumulation, as TRL's GRPOTrainer bounds memory), then one guarded step —
// NaN/Inf check, global-norm clip, AdamW. The warm start and the GRPO trainer both call it;
// each micro-batch's loss must already be divided by the whole batch's normalizer, so the
// sum equals the one-pass loss and its gradient the one-pass gradient.
import * as tf from '@tensorflow/tfjs-core';
import type { AdamW } from './adamw';
import type { GPT } from './gpt';
import { applyGradientsSafely, type GradientApplier, type UpdateReport } from './safeUpdate';

export interface StepResult {
  loss: number;
  gradNorm: number;
}

/**
 * Σ over micro-batches of d loss_i / d variables, keyed by variable name, and Σ loss_i.
 * Only one micro-batch's activations are alive at a time; `afterEach` sees each one's loss
 * (and may read what the loss function kept) before the next starts.
 */
export async function accumulateGradients(
  variables: tf.Variable[],
  microBatches: number,
  microBatchLoss: (index: number) => tf.Scalar,
  afterEach: (index: number, loss: number) => Promise<void> | void = () => {},
): Promise<{ grads: tf.NamedTensorMap; loss: number }> {
  const sums: tf.NamedTensorMap = {};
  let loss = 0;
  try {
    for (let index = 0; index < microBatches; index++) {
      const { value, grads } = tf.variableGrads(() => microBatchLoss(index), variables);
      for (const [name, gradient] of Object.entries(grads)) {
        const previous = sums[name];
        sums[name] = previous ? tf.add(previous, gradient) : gradient;
        if (previous) {
          previous.dispose();
          gradient.dispose();
        }
      }
      const value0 = (await value.data())[0] ?? Number.NaN;
      value.dispose();
      loss += value0;
      await afterEach(index, value0);
    }
  } catch (error) {
    tf.dispose(Object.values(sums));
    throw error;
  }
  return { grads: sums, loss };
}

/** Accumulates over micro-batches, then one guarded, clipped optimizer step. */
export async function accumulatedStep(
  optimizer: GradientApplier,
  variables: tf.Variable[],
  microBatches: number,
  microBatchLoss: (index: number) => tf.Scalar,
  maxGradNorm: number,
  afterEach?: (index: number, loss: number) => Promise<void> | void,
): Promise<UpdateReport> {
  const { grads, loss } = await accumulateGradients(
    variables,
    microBatches,
    microBatchLoss,
    afterEach,
  );
  try {
    return await applyGradientsSafely(optimizer, grads, loss, maxGradNorm);
  } finally {
    tf.dispose(Object.values(grads));
  }
}

/**
 * One guarded AdamW step on a single loss at learning rate `lr` (clip 1, as the warm start's
 * default). Frees every intermediate.
 */
export async function optimizerStep(
  model: GPT,
  optimizer: AdamW,
  lossFn: () => tf.Scalar,
  lr: number,
  maxGradNorm = 1,
): Promise<StepResult> {
  optimizer.learningRate = lr;
  const report = await accumulatedStep(
    optimizer,
    [...model.params.values()],
    1,
    lossFn,
    maxGradNorm,
  );
  return { loss: report.loss, gradNorm: report.gradNorm };
}
