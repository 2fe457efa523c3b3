// Batched sampling with a KV cache (tfjs), with shared prompts prefilled once. A rollout's
// rows repeat prompts (the M programs of one plan share statement + plan, the N plans of a
// task its statement), so each distinct prompt is run through the model once, in one batch
// with the other distinct prompts of its length, and its cache is copied to every row that
// continues it. Rows then decode in lockstep, one token per step, each at its own position:
// caches are left-aligned (a row's prompt ends where every other row's does) and a per-row
// mask hides the padding before it, so every row computes what it would alone. A row that
// finishes leaves the batch at once (its cache rows are dropped). Any family: the sampler talks
// to the policy interface (model/policy.ts); a GPT is wrapped by rollout/gptPolicy.ts.
import * as tf from '@tensorflow/tfjs-core';
import { distinctPrompts } from '../gpu/engine/deviceDraw';
import { sampleGptOnDevice, sampleHubRoleOnDevice } from '../gpu/engine/kernelRoles';
import { copyRows, defaultMemoryBudgetBytes, type GPT } from '../model';
import { type HubModel, hubCausalLM } from '../model/families/hubModel';
import type { KvLayerCache as LayerCache } from '../model/policy';
import { type CausalLM, isCausalLM } from '../model/policy';
import { disposeCache } from '../model/transformer';
import { gptCausalLM } from './gptPolicy';
import { pickToken, rowPrng } from './pick';
import type { SampleOptions, SampleResult, Sampler } from './types';

export class KvCacheSampler implements Sampler {
  private readonly lm: CausalLM;
  /** The GPT, when it is one: the lab's WebGPU engine samples GPTs on the device. */
  private readonly gpt: GPT | null;

  /** A role over a Hub base: the engine samples it with its adapter attached. */
  private readonly hub: HubModel | null;

  constructor(
    model: GPT | CausalLM | HubModel,
    /** Bytes one batch of rows may hold (src/model/memory.ts); default: the backend's. */
    private readonly memoryBudgetBytes?: number,
  ) {
    this.hub = 'weights' in model ? model : null;
    this.gpt = isCausalLM(model) || 'weights' in model ? null : model;
    this.lm = isCausalLM(model)
      ? model
      : 'weights' in model
        ? hubCausalLM(model)
        : gptCausalLM(model);
  }

  /**
   * Samples every prompt; a batch larger than the memory budget runs as consecutive chunks.
   * Row r draws from its own stream (seed, r) whatever chunk it lands in, so chunking and
   * sharing do not change which tokens are drawn.
   */
  async sample(prompts: number[][], options: SampleOptions): Promise<SampleResult> {
    if (prompts.some((p) => p.length === 0))
      throw new Error('sample: every prompt needs at least one token');
    const nCtx = this.lm.contextLength;
    const longest = Math.max(0, ...prompts.map((p) => p.length));
    if (longest > nCtx)
      throw new Error(`sample: a prompt of ${longest} tokens exceeds the context of ${nCtx}`);
    // The lab's WebGPU engine, when it is on (gpu/engine/kernelEngine.ts); null: sample here.
    // Every model on the kernels' one model: a GPT-2's own weights, or a LoRA role's base with
    // its adapter attached (gpu/engine/kernelRoles.ts).
    const onDevice = this.hub
      ? await sampleHubRoleOnDevice(this.hub, prompts, options)
      : this.gpt
        ? await sampleGptOnDevice(this.gpt, prompts, options)
        : null;
    if (onDevice) return onDevice;
    const result: SampleResult = { tokens: [], logProbs: [], finished: [] };
    for (const [start, end] of this.chunks(prompts, options.maxNewTokens)) {
      const part = await this.sampleChunk(prompts.slice(start, end), options, start);
      result.tokens.push(...part.tokens);
      result.logProbs.push(...part.logProbs);
      result.finished.push(...part.finished);
    }
    return result;
  }

  /**
   * Consecutive [start, end) row ranges whose prefill (their distinct prompts) and caches
   * stay within the budget; at least one row each.
   */
  private chunks(prompts: number[][], maxNewTokens: number): [number, number][] {
    const budget = this.memoryBudgetBytes ?? defaultMemoryBudgetBytes(tf.getBackend());
    const ranges: [number, number][] = [];
    let start = 0;
    let distinct = new Set<string>();
    let longest = 0;
    for (let row = 0; row < prompts.length; row++) {
      const prompt = prompts[row]!;
      const nextDistinct = new Set(distinct).add(prompt.join(','));
      const nextLongest = Math.max(longest, prompt.length);
      // Left-aligned caches: the longest prompt's positions, then one per generated token.
      const width = nextLongest + maxNewTokens;
      const bytes = this.lm.samplingBytes(row - start + 1, nextLongest, width, nextDistinct.size);
      if (row > start && bytes > budget) {
        ranges.push([start, row]);
        start = row;
        distinct = new Set([prompt.join(',')]);
        longest = prompt.length;
      } else {
        distinct = nextDistinct;
        longest = nextLongest;
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
    const { maxNewTokens, temperature, topK, seed, stopId, stopIds } = options;
    const B = prompts.length;
    const { contextLength: nCtx, cacheHeads: H, vocabSize: V } = this.lm;
    const result: SampleResult = {
      tokens: prompts.map(() => []),
      logProbs: prompts.map(() => []),
      finished: prompts.map(() => false),
    };
    if (B === 0) return result;
    const prngs = prompts.map((_, r) => rowPrng(seed, rowOffset + r));
    const budget = prompts.map((p) => Math.min(maxNewTokens, nCtx - p.length));

    // Distinct prompts, and which one each row continues.
    const { unique: distinct, source } = distinctPrompts(prompts);
    const width = Math.max(...distinct.map((p) => p.length));
    const { lastLogits, cache: distinctCache } = await this.prefill(distinct, width);

    // Every row's cache: its distinct prompt's, left-padded to `width`.
    const headRows = (rows: ArrayLike<number>) =>
      Array.from(rows).flatMap((d) => Array.from({ length: H }, (_, h) => d * H + h));
    let cache: LayerCache[] = tf.tidy(() => {
      const index = headRows(source);
      return distinctCache.map(({ k, v }) => ({ k: copyRows(k, index), v: copyRows(v, index) }));
    });
    disposeCache(distinctCache);

    // The rows still decoding: original index, position of its next token, first valid key.
    let active = prompts.map((_, r) => r);
    const position = prompts.map((p) => p.length);
    const firstKey = prompts.map((p) => width - p.length);
    const feed: number[] = [];
    try {
      // The first token of each row comes from its prompt's last logits.
      const survivors: number[] = [];
      for (const r of active) {
        if (budget[r]! <= 0) continue;
        const logits = lastLogits.subarray(source[r]! * V, (source[r]! + 1) * V);
        if (this.take(r, logits, result, prngs, temperature, topK, stopId, budget, stopIds)) {
          survivors.push(r);
          feed.push(result.tokens[r]!.at(-1)!);
        }
      }
      let length = width;
      while (survivors.length > 0) {
        if (survivors.length < active.length) {
          // Drop the finished rows' caches: they cost nothing from here on.
          const keep = survivors.map((r) => active.indexOf(r));
          const next = tf.tidy(() => {
            const index = headRows(keep);
            return cache.map(({ k, v }) => ({ k: copyRows(k, index), v: copyRows(v, index) }));
          });
          disposeCache(cache);
          cache = next;
          active = survivors.slice();
        }
        const { logits, cache: grown } = this.lm.decodeStep(
          feed.splice(0, feed.length),
          active.map((r) => position[r]!),
          active.map((r) => firstKey[r]!),
          length,
          cache,
        );
        disposeCache(cache);
        cache = grown;
        length += 1;
        const rows = (await logits.data()) as Float32Array;
        logits.dispose();
        survivors.length = 0;
        active.forEach((r, i) => {
          position[r]! += 1;
          if (
            this.take(
              r,
              rows.subarray(i * V, (i + 1) * V),
              result,
              prngs,
              temperature,
              topK,
              stopId,
              budget,
              stopIds,
            )
          ) {
            survivors.push(r);
            feed.push(result.tokens[r]!.at(-1)!);
          }
        });
      }
    } finally {
      disposeCache(cache);
    }
    return result;
  }

  /** Picks row r's next token; true while the row goes on. */
  private take(
    r: number,
    logits: Float32Array,
    result: SampleResult,
    prngs: ReturnType<typeof rowPrng>[],
    temperature: number,
    topK: number,
    stopId: number,
    budget: readonly number[],
    stopIds?: readonly number[],
  ): boolean {
    const pick = pickToken(logits, temperature, topK, prngs[r]!);
    result.tokens[r]!.push(pick.id);
    result.logProbs[r]!.push(pick.logProb);
    if (pick.id === stopId || stopIds?.includes(pick.id)) {
      result.finished[r] = true;
      return false;
    }
    return result.tokens[r]!.length < budget[r]!;
  }

  /**
   * Runs each distinct prompt once (those of one length in one batch): the last position's
   * logits of each, [D·V] in order, and its cache left-padded to `width` ([D·H, width, hd]).
   */
  private async prefill(
    distinct: number[][],
    width: number,
  ): Promise<{ lastLogits: Float32Array; cache: LayerCache[] }> {
    const { numLayers: nLayer, vocabSize: V } = this.lm;
    const lastLogits = new Float32Array(distinct.length * V);
    const byLength = new Map<number, number[]>();
    distinct.forEach((p, d) => {
      byLength.set(p.length, [...(byLength.get(p.length) ?? []), d]);
    });
    // Per layer, the padded caches of each length group, reassembled in distinct order.
    const parts: { order: number[]; k: tf.Tensor3D; v: tf.Tensor3D }[][] = Array.from(
      { length: nLayer },
      () => [],
    );
    try {
      for (const [length, group] of byLength) {
        const ids = tf.tensor2d(
          group.map((d) => distinct[d]!),
          [group.length, length],
          'int32',
        );
        const { lastLogits: last, cache } = this.lm.forwardCached(ids, 0, null);
        ids.dispose();
        const values = (await last.data()) as Float32Array;
        last.dispose();
        group.forEach((d, i) => {
          lastLogits.set(values.subarray(i * V, (i + 1) * V), d * V);
        });
        cache.forEach(({ k, v }, layer) => {
          const pad = (x: tf.Tensor3D) =>
            length === width
              ? x
              : (tf.pad(x, [
                  [0, 0],
                  [width - length, 0],
                  [0, 0],
                ]) as tf.Tensor3D);
          const padded = { order: group, k: pad(k), v: pad(v) };
          if (length !== width) {
            k.dispose();
            v.dispose();
          }
          parts[layer]!.push(padded);
        });
      }
      // Back into distinct order: concatenate the groups, then gather by group position.
      const H = this.lm.cacheHeads;
      const order = parts[0]?.flatMap((part) => part.order) ?? [];
      const positionOf = new Map(order.map((d, i) => [d, i]));
      const index = distinct.flatMap((_, d) =>
        Array.from({ length: H }, (_, h) => positionOf.get(d)! * H + h),
      );
      const cache = parts.map((layerParts) =>
        tf.tidy(() => {
          const k = concatFew(layerParts.map((p) => p.k));
          const v = concatFew(layerParts.map((p) => p.v));
          return { k: copyRows(k, index), v: copyRows(v, index) };
        }),
      );
      return { lastLogits, cache };
    } finally {
      for (const layerParts of parts) for (const p of layerParts) tf.dispose([p.k, p.v]);
    }
  }
}

/** Concatenation along axis 0, a few inputs at a time (WebGPU binds at most 8 buffers). */
function concatFew(tensors: tf.Tensor3D[]): tf.Tensor3D {
  let level = tensors;
  while (level.length > 1) {
    const next: tf.Tensor3D[] = [];
    for (let i = 0; i < level.length; i += 4) next.push(tf.concat(level.slice(i, i + 4), 0));
    level = next;
  }
  return level[0]!;
}
