// The GRPO loss in tfjs, for training: the same formula as grpoLossReference, with the
// gradient flowing only through the current policy's log-probs. Elementwise ops and sums only
// (exp, minimum, clipByValue, mul, sum): safe on the cpu, wasm and webgpu backends.

import * as tf from '@tensorflow/tfjs-core';
import { stopGradient } from '../model/logProbs';
import type { GrpoLossMetrics, GrpoLossOptions } from './grpoLossTypes';

type Matrix = tf.Tensor2D | readonly (readonly number[])[];

export interface GrpoLossInputs {
  /** [G, L] log-probs of the sampled tokens under the current policy (carries the gradient). */
  logProbs: tf.Tensor2D;
  /** [G, L] under the sampling policy; omitted = a detached copy of logProbs (numIterations 1). */
  oldLogProbs?: Matrix;
  /** [G, L] under the frozen reference; needed when beta > 0. */
  refLogProbs?: Matrix;
  /** [G] one advantage per output. */
  advantages: tf.Tensor1D | readonly number[];
  /** [G, L] 1 for completion tokens, 0 for padding. */
  mask: Matrix;
  /** [G, L] per-token entropies, for the metric only. */
  entropies?: Matrix;
}

/** The aggregated loss, a scalar to differentiate (use inside tf.variableGrads / minimize). */
export function grpoLoss(inputs: GrpoLossInputs, options: GrpoLossOptions): tf.Scalar {
  return tf.tidy(() => lossTerms(inputs, options).loss);
}

/** The loss and its metrics as numbers (no gradient); disposes everything it creates. */
export async function grpoLossMetrics(
  inputs: GrpoLossInputs,
  options: GrpoLossOptions,
): Promise<GrpoLossMetrics> {
  const packed = tf.tidy(() => {
    const terms = lossTerms(inputs, options);
    const tokens = tf.maximum(tf.sum(terms.mask), 1);
    const tokenMean = (values: tf.Tensor) => tf.div(tf.sum(tf.mul(values, terms.mask)), tokens);
    const entropies = inputs.entropies ? toMatrix(inputs.entropies) : tf.zerosLike(terms.mask);
    return tf.concat([
      tf.stack([
        terms.loss,
        terms.k3 !== null ? tokenMean(terms.k3) : tf.scalar(0),
        tokenMean(terms.clippedLow),
        tokenMean(terms.clippedHigh),
        tokenMean(tf.maximum(terms.clippedLow, terms.clippedHigh)),
        tokenMean(entropies),
      ]),
      tf.sum(terms.mask, 1),
    ]);
  });
  const values = await packed.data();
  packed.dispose();
  const lengths = Array.from(values.slice(6));
  return {
    loss: values[0] ?? Number.NaN,
    kl: inputs.refLogProbs ? (values[1] ?? Number.NaN) : null,
    clipRatioLow: values[2] ?? Number.NaN,
    clipRatioHigh: values[3] ?? Number.NaN,
    clipRatioRegion: values[4] ?? Number.NaN,
    entropy: inputs.entropies ? (values[5] ?? Number.NaN) : null,
    meanLength: lengths.length === 0 ? 0 : lengths.reduce((a, b) => a + b, 0) / lengths.length,
    minLength: lengths.length === 0 ? 0 : Math.min(...lengths),
    maxLength: lengths.length === 0 ? 0 : Math.max(...lengths),
  };
}

interface LossTerms {
  loss: tf.Scalar;
  mask: tf.Tensor2D;
  k3: tf.Tensor | null;
  /** 1 where ρ < 1 − ε_low and Â < 0, else 0. */
  clippedLow: tf.Tensor;
  /** 1 where ρ > 1 + ε_high and Â > 0, else 0. */
  clippedHigh: tf.Tensor;
}

// Call inside a tidy.
function lossTerms(inputs: GrpoLossInputs, options: GrpoLossOptions): LossTerms {
  const { logProbs } = inputs;
  const [outputs, width] = logProbs.shape;
  const mask = toMatrix(inputs.mask);
  const advantages = tf.reshape(
    Array.isArray(inputs.advantages)
      ? tf.tensor1d(inputs.advantages as number[], 'float32')
      : (inputs.advantages as tf.Tensor1D),
    [-1, 1],
  );
  checkShape('mask', mask, logProbs.shape);
  if (advantages.shape[0] !== outputs) {
    throw new Error(`grpoLoss: advantages must have ${outputs} entries`);
  }
  if (options.beta !== 0 && !inputs.refLogProbs) {
    throw new Error('grpoLoss: beta > 0 needs refLogProbs');
  }
  const oldLogProbs = inputs.oldLogProbs ? toMatrix(inputs.oldLogProbs) : stopGradient(logProbs);
  checkShape('oldLogProbs', oldLogProbs, logProbs.shape);

  const ratio = tf.exp(tf.sub(logProbs, oldLogProbs));
  const lowBound = 1 - options.epsilonLow;
  const highBound = 1 + options.epsilonHigh;
  const unclipped = tf.mul(ratio, advantages);
  const clipped = tf.mul(tf.clipByValue(ratio, lowBound, highBound), advantages);
  let perToken: tf.Tensor = tf.neg(tf.minimum(unclipped, clipped));

  let k3: tf.Tensor | null = null;
  if (inputs.refLogProbs) {
    const refLogProbs = toMatrix(inputs.refLogProbs);
    checkShape('refLogProbs', refLogProbs, logProbs.shape);
    const delta = tf.sub(refLogProbs, logProbs);
    k3 = tf.sub(tf.sub(tf.exp(delta), delta), 1);
    if (options.beta !== 0) perToken = tf.add(perToken, tf.mul(k3, options.beta));
  }

  const maskedLoss = tf.mul(perToken, mask);
  const normalizer = options.normalizer ?? {};
  const outputCount = normalizer.outputs ?? outputs;
  let loss: tf.Scalar;
  switch (options.lossType) {
    case 'grpo': {
      const lengths = tf.maximum(tf.sum(mask, 1), 1);
      loss = tf.div(tf.sum(tf.div(tf.sum(maskedLoss, 1), lengths)), outputCount);
      break;
    }
    case 'dapo': {
      const tokens = normalizer.tokens ?? tf.maximum(tf.sum(mask), 1);
      loss = tf.div(tf.sum(maskedLoss), tokens);
      break;
    }
    case 'dr_grpo':
      loss = tf.div(tf.sum(maskedLoss), outputCount * (normalizer.maxLength ?? width));
      break;
  }

  // Indicators are computed from values only (no gradient needed).
  const detachedRatio = stopGradient(ratio);
  const negative = tf.cast(tf.less(advantages, 0), 'float32');
  const positive = tf.cast(tf.greater(advantages, 0), 'float32');
  const clippedLow = tf.mul(tf.cast(tf.less(detachedRatio, lowBound), 'float32'), negative);
  const clippedHigh = tf.mul(tf.cast(tf.greater(detachedRatio, highBound), 'float32'), positive);
  return { loss, mask, k3, clippedLow, clippedHigh };
}

function toMatrix(values: Matrix): tf.Tensor2D {
  return values instanceof tf.Tensor
    ? values
    : tf.tensor2d(values as number[][], undefined, 'float32');
}

function checkShape(name: string, tensor: tf.Tensor, shape: readonly number[]): void {
  if (tensor.shape.length !== shape.length || tensor.shape.some((size, i) => size !== shape[i])) {
    throw new Error(
      `grpoLoss: ${name} has shape ${JSON.stringify(tensor.shape)}, expected ${JSON.stringify(shape)}`,
    );
  }
}
