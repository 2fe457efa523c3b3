// The one interface the sampler (and, for training, the trainer) talks to, whatever the family:
// a causal language model with a KV cache. GPT-2 (model/gpt.ts)
// and a Hub checkpoint's model (model/families/hubModel.ts: GPT-2 or the Llama family), each a configuration of model/transformer.ts.
import type * as tf from '@tensorflow/tfjs-core';

/** One layer's cached keys and values: [B·cacheHeads, T, hd] each. */
export interface KvLayerCache {
  k: tf.Tensor3D;
  v: tf.Tensor3D;
}

export interface CausalLM {
  readonly family: 'gpt2' | 'llama';
  readonly vocabSize: number;
  /** The longest sequence the model takes (GPT-2's n_positions; the Llama family's max_position_embeddings). */
  readonly contextLength: number;
  readonly numLayers: number;
  /** Heads the KV cache holds per sequence (GPT-2: its heads; the Llama family: key/value heads). */
  readonly cacheHeads: number;
  /** ids [B, T] (int32) → logits [B, T, V]; call inside tf.tidy. */
  forward(ids: tf.Tensor2D): tf.Tensor3D;
  /**
   * Logits at chosen positions only (what the GRPO update reads): `rows` [B·L] indexes the
   * flattened [B·T] positions → [B, L, V]; the head runs at those rows alone. Differentiable.
   */
  logitsAt(ids: tf.Tensor2D, rows: tf.Tensor1D): tf.Tensor3D;
  /**
   * ids [B, S] at positions start..start+S−1 after `cache` → the last position's logits [B, V]
   * and the grown caches (caller disposes both).
   */
  forwardCached(
    ids: tf.Tensor2D,
    start: number,
    cache: readonly KvLayerCache[] | null,
  ): { lastLogits: tf.Tensor2D; cache: KvLayerCache[] };
  /** One token per row, each at its own position; keys before firstKey[r] are padding. */
  decodeStep(
    tokens: readonly number[],
    positions: readonly number[],
    firstKey: readonly number[],
    pastLength: number,
    cache: readonly KvLayerCache[],
  ): { logits: tf.Tensor2D; cache: KvLayerCache[] };
  /** Bytes a sampling batch holds at its peak (model/memory.ts' estimate for the family). */
  samplingBytes(rows: number, prefix: number, width: number, prefillRows: number): number;
}

export function isCausalLM(x: unknown): x is CausalLM {
  return typeof (x as CausalLM)?.decodeStep === 'function';
}
