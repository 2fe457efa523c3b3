// Per-token log-probabilities and entropies from logits, with ops whose gradients work on every
// tfjs backend (wasm included): log-softmax and an int32 one-hot cast to float32 and summed,
// never `gather` (its gradient needs UnsortedSegmentSum, missing on wasm) and never a float32
// `oneHot` (wrong bit patterns on wasm).

import * as tf from '@tensorflow/tfjs-core';

/**
 * log π(target | ·) for each position: logits [..., V], targets int32 [...] → [...].
 * Logits are divided by `temperature` first, as TRL does, so the log-probs are those of the
 * distribution the tokens were sampled from.
 */
export function tokenLogProbs(logits: tf.Tensor, targets: tf.Tensor, temperature = 1): tf.Tensor {
  return tf.tidy(() => {
    const vocabSize = lastDim(logits);
    if (!sameShape(logits.shape.slice(0, -1), targets.shape)) {
      throw new Error(
        `tokenLogProbs: targets ${JSON.stringify(targets.shape)} must match logits ${JSON.stringify(logits.shape)} without the last axis`,
      );
    }
    const logProbs = tf.logSoftmax(temperature === 1 ? logits : tf.div(logits, temperature));
    const flatTargets = tf.reshape(tf.cast(targets, 'int32'), [-1]) as tf.Tensor1D;
    const oneHot = tf.cast(tf.oneHot(flatTargets, vocabSize, 1, 0, 'int32'), 'float32');
    const picked = tf.sum(tf.mul(tf.reshape(logProbs, [-1, vocabSize]), oneHot), -1);
    return tf.reshape(picked, targets.shape);
  });
}

/** Entropy of each position's distribution, −Σ p·log p: logits [..., V] → [...]. */
export function tokenEntropies(logits: tf.Tensor, temperature = 1): tf.Tensor {
  return tf.tidy(() => {
    const logProbs = tf.logSoftmax(temperature === 1 ? logits : tf.div(logits, temperature));
    return tf.neg(tf.sum(tf.mul(tf.exp(logProbs), logProbs), -1));
  });
}

/** x in the forward pass, no gradient in the backward pass (torch's `.detach()`). */
export function stopGradient<T extends tf.Tensor>(x: T): T {
  const detach = tf.customGrad((...args) => ({
    value: tf.clone(args[0] as tf.Tensor),
    gradFunc: (dy: tf.Tensor) => tf.zerosLike(dy),
  }));
  return detach(x) as T;
}

function lastDim(tensor: tf.Tensor): number {
  const size = tensor.shape[tensor.shape.length - 1];
  if (size === undefined) throw new Error('tokenLogProbs: logits need a vocabulary axis');
  return size;
}

function sameShape(a: readonly number[], b: readonly number[]): boolean {
  return a.length === b.length && a.every((value, index) => value === b[index]);
}
