// Padded training batches with a loss mask on answer tokens, and length bucketing so
// little compute goes to padding.
import * as tf from '@tensorflow/tfjs-core';
import type { RoleExample } from '../agents/format';
import { Rng } from '../tasks/random';

export interface TokenBatch {
  /** [B, T] int32 */
  ids: tf.Tensor2D;
  /** [B, T−1] float32: 1 where the target ids[:, t+1] is an answer token. */
  mask: tf.Tensor2D;
  /** Number of answer tokens (the tokens the loss counts). */
  targetTokens: number;
  /** Number of real (non-pad) tokens. */
  tokens: number;
}

export function makeBatch(examples: RoleExample[], padId: number): TokenBatch {
  const T = Math.max(...examples.map((e) => e.prompt.length + e.answer.length));
  const ids = new Int32Array(examples.length * T).fill(padId);
  const mask = new Float32Array(examples.length * (T - 1));
  let targetTokens = 0;
  let tokens = 0;
  examples.forEach((e, b) => {
    const seq = [...e.prompt, ...e.answer];
    ids.set(seq, b * T);
    tokens += seq.length;
    for (let t = e.prompt.length - 1; t < seq.length - 1; t++) mask[b * (T - 1) + t] = 1;
    targetTokens += e.answer.length;
  });
  return {
    ids: tf.tensor2d(ids, [examples.length, T], 'int32'),
    mask: tf.tensor2d(mask, [examples.length, T - 1], 'float32'),
    targetTokens,
    tokens,
  };
}

/**
 * Yields batches from an example stream: draws `poolBatches` batches' worth, sorts them by
 * length, cuts them into batches and hands them out in a seeded random order.
 */
export class BucketedBatches {
  private queue: RoleExample[][] = [];
  private readonly prng: Rng;

  constructor(
    private readonly nextExamples: (n: number) => RoleExample[],
    private readonly batchSize: number,
    seed: number,
    private readonly poolBatches = 8,
    private readonly maxLength = Number.POSITIVE_INFINITY,
  ) {
    this.prng = new Rng(seed);
  }

  next(): RoleExample[] {
    if (this.queue.length === 0) this.refill();
    return this.queue.pop()!;
  }

  private refill(): void {
    const fits = (e: RoleExample) => e.prompt.length + e.answer.length <= this.maxLength;
    const pool = this.nextExamples(this.batchSize * this.poolBatches).filter(fits);
    if (pool.length === 0) throw new Error('no training example fits the model context');
    pool.sort((a, b) => a.prompt.length + a.answer.length - (b.prompt.length + b.answer.length));
    for (let i = 0; i < pool.length; i += this.batchSize)
      this.queue.push(pool.slice(i, i + this.batchSize));
    for (let i = this.queue.length - 1; i > 0; i--) {
      const j = this.prng.below(i + 1);
      [this.queue[i], this.queue[j]] = [this.queue[j]!, this.queue[i]!];
    }
  }
}
