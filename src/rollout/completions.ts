// Prompt + completion batches for the GRPO loss. Sequences are right-padded (positions
// stay those of sampling), so completion token j of row b is the target at column
// promptLength_b − 1 + j of tokenLogProbs' [B, T−1] output. Per-token values (old
// log-probs, advantages) are moved into that layout in JavaScript, avoiding a gather
// (whose gradient is missing on wasm).
import * as tf from '@tensorflow/tfjs-core';

export interface CompletionBatch {
  /** [B, T] int32: prompt, completion, padding. */
  ids: tf.Tensor2D;
  /** [B, T−1] float32: 1 where the target is a completion token. */
  mask: tf.Tensor2D;
  promptLengths: number[];
  completionLengths: number[];
  /** Columns of the target layout (T − 1). */
  targetColumns: number;
}

export function packCompletions(
  prompts: number[][],
  completions: number[][],
  padId: number,
): CompletionBatch {
  if (prompts.length !== completions.length)
    throw new Error('packCompletions: one completion per prompt');
  const B = prompts.length;
  const T = Math.max(2, ...prompts.map((p, b) => p.length + completions[b]!.length));
  const ids = new Int32Array(B * T).fill(padId);
  for (const [b, p] of prompts.entries()) ids.set([...p, ...completions[b]!], b * T);
  const promptLengths = prompts.map((p) => p.length);
  const completionLengths = completions.map((c) => c.length);
  const mask = toTargetArray(
    promptLengths,
    completions.map((c) => c.map(() => 1)),
    T - 1,
  );
  return {
    ids: tf.tensor2d(ids, [B, T], 'int32'),
    mask: tf.tensor2d(mask, [B, T - 1], 'float32'),
    promptLengths,
    completionLengths,
    targetColumns: T - 1,
  };
}

/** Completion-aligned values (values[b][j] for completion token j) → [B, T−1], 0 elsewhere. */
export function toTargetLayout(batch: CompletionBatch, values: number[][]): tf.Tensor2D {
  const data = toTargetArray(batch.promptLengths, values, batch.targetColumns);
  return tf.tensor2d(data, [batch.promptLengths.length, batch.targetColumns], 'float32');
}

/** [B, T−1] data (e.g. from tokenLogProbs) → completion-aligned rows. */
export function fromTargetLayout(batch: CompletionBatch, data: ArrayLike<number>): number[][] {
  return batch.promptLengths.map((p, b) =>
    Array.from(
      { length: batch.completionLengths[b]! },
      (_, j) => data[b * batch.targetColumns + p - 1 + j]!,
    ),
  );
}

function toTargetArray(promptLengths: number[], values: number[][], columns: number): Float32Array {
  const out = new Float32Array(promptLengths.length * columns);
  promptLengths.forEach((p, b) => {
    values[b]!.forEach((v, j) => {
      out[b * columns + p - 1 + j] = v;
    });
  });
  return out;
}
