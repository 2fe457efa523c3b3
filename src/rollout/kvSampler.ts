// Batched sampling with a KV cache (tfjs). Prompts of different lengths run in lockstep:
// the common prefix is prefilled at once, then each step feeds one token per row — the
// row's own prompt token while it is still inside its prompt, else a sampled one. So no
// padding or attention masks are needed and every row computes exactly what it would alone.
import * as tf from '@tensorflow/tfjs-core';
import { defaultMemoryBudgetBytes, type GPT, samplingBytes } from '../model';
import { disposeCache, forwardCached, type LayerCache } from './kvForward';
import { pickToken, rowPrng } from './pick';
import type { SampleOptions, SampleResult, Sampler } from './types';

export class KvCacheSampler implements Sampler {
  constructor(
    private readonly model: GPT,
    private readonly padId = 0,
    /** Bytes one batch of rows may hold (src/model/memory.ts); default: the backend's. */
    private readonly memoryBudgetBytes?: number,
  ) {}

  /**
   * Samples every prompt; a batch larger than the memory budget runs as consecutive chunks.
   * Row r draws from its own stream (seed, r) whatever chunk it lands in, so chunking does
   * not change which tokens are drawn.
   */
  async sample(prompts: number[][], options: SampleOptions): Promise<SampleResult> {
    const chunks = this.chunks(prompts, options.maxNewTokens);
    if (chunks.length <= 1) return this.sampleChunk(prompts, options, 0);
    const result: SampleResult = { tokens: [], logProbs: [], finished: [] };
    for (const [start, end] of chunks) {
      const part = await this.sampleChunk(prompts.slice(start, end), options, start);
      result.tokens.push(...part.tokens);
      result.logProbs.push(...part.logProbs);
      result.finished.push(...part.finished);
    }
    return result;
  }

  /**
   * Consecutive [start, end) row ranges whose prefill (of their common prompt prefix, at most
   * their shortest prompt) and cache stay within the budget; at least one row each.
   */
  private chunks(prompts: number[][], maxNewTokens: number): [number, number][] {
    const config = this.model.config;
    const budget = this.memoryBudgetBytes ?? defaultMemoryBudgetBytes(tf.getBackend());
    const ranges: [number, number][] = [];
    let start = 0;
    let shortest = Number.POSITIVE_INFINITY;
    let width = 0;
    for (let row = 0; row < prompts.length; row++) {
      const length = prompts[row]!.length;
      const nextShortest = Math.min(shortest, length);
      const nextWidth = Math.max(width, Math.min(config.nCtx, length + maxNewTokens));
      const bytes = samplingBytes(config, row - start + 1, nextShortest, nextWidth);
      if (row > start && bytes > budget) {
        ranges.push([start, row]);
        start = row;
        shortest = length;
        width = Math.min(config.nCtx, length + maxNewTokens);
      } else {
        shortest = nextShortest;
        width = nextWidth;
      }
    }
    if (prompts.length > 0) ranges.push([start, prompts.length]);
    return ranges;
  }

  private async sampleChunk(
    prompts: number[][],
    options: SampleOptions,
    rowOffset: number,
  ): Promise<SampleResult> {
    const { maxNewTokens, temperature, topK, seed, stopId } = options;
    const B = prompts.length;
    const result: SampleResult = {
      tokens: prompts.map(() => []),
      logProbs: prompts.map(() => []),
      finished: prompts.map(() => false),
    };
    if (B === 0) return result;
    if (prompts.some((p) => p.length === 0))
      throw new Error('sample: every prompt needs at least one token');
    const nCtx = this.model.config.nCtx;
    const longest = Math.max(...prompts.map((p) => p.length));
    if (longest > nCtx)
      throw new Error(`sample: a prompt of ${longest} tokens exceeds the context of ${nCtx}`);
    const prngs = prompts.map((_, r) => rowPrng(seed, rowOffset + r));
    const done = prompts.map(() => false);
    const budget = prompts.map((p) => Math.min(maxNewTokens, nCtx - p.length));
    budget.forEach((b, r) => {
      if (b <= 0) done[r] = true;
    });
    const common = Math.min(...prompts.map((p) => p.length));
    // seqs[r] = everything row r has consumed or produced so far.
    const seqs = prompts.map((p) => p.slice());

    let cache: LayerCache[] | null = null;
    let input = tf.tensor2d(
      prompts.map((p) => p.slice(0, common)),
      [B, common],
      'int32',
    );
    let position = 0;
    try {
      while (!done.every(Boolean)) {
        const S = input.shape[1];
        const { logits, cache: next } = forwardCached(this.model, input, position, cache);
        disposeCache(cache);
        input.dispose();
        cache = next;
        position += S;
        const last = tf.tidy(() =>
          tf.reshape(tf.slice(logits, [0, S - 1, 0], [B, 1, -1]), [B, -1]),
        );
        logits.dispose();
        const rows = (await last.data()) as Float32Array;
        last.dispose();
        const V = rows.length / B;
        const feed: number[] = [];
        for (let r = 0; r < B; r++) {
          const seq = seqs[r]!;
          if (position < prompts[r]!.length) {
            feed.push(seq[position]!); // still inside this row's prompt
            continue;
          }
          if (done[r]) {
            feed.push(this.padId);
            continue;
          }
          const pick = pickToken(rows.subarray(r * V, (r + 1) * V), temperature, topK, prngs[r]!);
          seq.push(pick.id);
          result.tokens[r]!.push(pick.id);
          result.logProbs[r]!.push(pick.logProb);
          if (pick.id === stopId) {
            done[r] = true;
            result.finished[r] = true;
          } else if (result.tokens[r]!.length >= budget[r]!) done[r] = true;
          feed.push(pick.id);
        }
        if (done.every(Boolean) || position >= nCtx) break;
        input = tf.tensor2d(feed, [B, 1], 'int32');
      }
    } finally {
      disposeCache(cache);
      if (!input.isDisposed) input.dispose();
    }
    return result;
  }
}
