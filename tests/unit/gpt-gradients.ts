// What the device's GPT-2 gradient tests compare against: a seeded batch of sequences with a
// per-token dlogp, tfjs's autodiff of Σ dlogp·logπ over them, and each sequence's log-probs.
import * as tf from '@tensorflow/tfjs-core';
import { type GPT, sequenceLogProbs } from '../../src/model/gpt';
import { Rng } from '../../src/tasks/random';

/** Sequences of these lengths over the vocabulary, and a dlogp in ±0.5 for each next token. */
export function randomBatch(vocabSize: number, lengths: number[], seed: number) {
  const rng = new Rng(seed);
  const sequences = lengths.map((n) =>
    Array.from({ length: n }, () => Math.floor(rng.next() * vocabSize)),
  );
  const dlogp = sequences.map((q) =>
    Float32Array.from({ length: q.length - 1 }, () => rng.next() - 0.5),
  );
  return { sequences, dlogp };
}

/** tfjs's gradient of Σ_i dlogp_i·logπ_i w.r.t. `variables`, by variable name. */
export function tfjsGradients(
  model: GPT,
  sequences: number[][],
  dlogp: Float32Array[],
  variables: tf.Variable[],
): tf.NamedTensorMap {
  return tf.variableGrads(() => {
    let total = tf.scalar(0);
    sequences.forEach((q, i) => {
      const lp = sequenceLogProbs(model, tf.tensor2d([q], [1, q.length], 'int32'));
      const row = dlogp[i] as Float32Array;
      total = tf.add(total, tf.sum(tf.mul(lp, tf.tensor2d(row, [1, row.length]))));
    });
    return total as tf.Scalar;
  }, variables).grads;
}

/** tfjs's log-probs of a sequence's next tokens [len − 1]. */
export function tfjsLogProbs(model: GPT, sequence: number[]): Promise<Float32Array> {
  const ids = tf.tensor2d([sequence], [1, sequence.length], 'int32');
  return sequenceLogProbs(model, ids).data() as Promise<Float32Array>;
}
