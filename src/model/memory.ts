// How much memory a pass over a batch holds, and how to split a batch so each piece fits.
// Every pass that would otherwise take a whole role's batch at once (the GRPO update, the
// reference forward, the warm start, sampling, evaluation) goes through these: the wasm heap
// ends at 4 GB, and a tfjs-wasm op that cannot allocate leaves garbage instead of failing
// (TESTING.md, "Memory of a GRPO step on wasm").
import * as tf from '@tensorflow/tfjs-core';
import type { TransformerConfig } from './transformerConfig';

const FLOAT_BYTES = 4;
const MIB = 1024 * 1024;

/** Headroom over the fitted peaks, for shapes between the measured ones. */
const MARGIN = 1.1;

/**
 * Floats one token holds per layer: a forward + backward (training), or a forward alone inside
 * one tidy. One count for every config of the one transformer, by its widths: the residual
 * stream d, the queries q = heads·headDim, the keys and values kv = kvHeads·headDim each, the
 * MLP's inner width. Fitted to tf.profile's peak on the lab's GPT-2 presets (where it gives
 * 336·d and 96·d, as before) and on Llama-family configs of several shapes under a LoRA
 * adapter (tests/unit/microBatch.test.ts checks it stays an upper bound for both).
 */
function layerFloats(c: TransformerConfig, pass: 'training' | 'forward'): number {
  const q = c.heads * c.headDim;
  const kv = c.kvHeads * c.headDim;
  return pass === 'training'
    ? 72 * c.hidden + 62 * q + 45 * kv + 28 * c.intermediate
    : 35 * c.hidden + 21 * q + 4 * kv + 8 * c.intermediate;
}

/**
 * Peak tensor bytes of one forward + backward over `rows` sequences padded to `width` tokens:
 * per token each layer's activations and their gradients, the head's rows of V (the logits,
 * their log-softmax and entropy, and their gradients), and per token pair each layer's
 * attention probabilities and their gradients per head. `scored`: the positions of a row
 * whose logits are taken (the update's completion tokens; default all, an upper bound).
 */
export function trainingBytes(
  c: TransformerConfig,
  rows: number,
  width: number,
  scored = width,
): number {
  const perToken = c.layers * layerFloats(c, 'training');
  const perScored = 32 * c.vocabSize;
  const perPair = 4 * c.layers * c.heads;
  return (
    MARGIN *
    FLOAT_BYTES *
    rows *
    (perToken * width + perScored * Math.min(scored, width) + perPair * width * width)
  );
}

/** Peak tensor bytes of a forward alone inside one tidy (reference log-probs, a prefill). */
export function forwardBytes(c: TransformerConfig, rows: number, width: number): number {
  const perToken = c.layers * layerFloats(c, 'forward') + 8 * c.vocabSize;
  const perPair = 2 * c.layers * c.heads;
  return MARGIN * FLOAT_BYTES * rows * (perToken * width + perPair * width * width);
}

/**
 * Peak tensor bytes of KV-cache sampling for `rows` rows: the prefill of `prefillRows`
 * distinct prompts of up to `prefix` tokens, plus the caches of `width` positions per layer
 * (keys and values; old and new both alive during a step) and one decode step's scores.
 */
export function samplingBytes(
  c: TransformerConfig,
  rows: number,
  prefix: number,
  width: number,
  prefillRows = rows,
): number {
  // Keys and values of one position in every layer.
  const kvRow = 2 * c.layers * c.kvHeads * c.headDim;
  return (
    forwardBytes(c, prefillRows, prefix) +
    FLOAT_BYTES * rows * (2 * kvRow * width + 4 * c.heads * width) +
    // The prefill's caches are copied to the rows: both alive for a moment.
    FLOAT_BYTES * prefillRows * kvRow * prefix
  );
}

/**
 * Splits items into micro-batches whose estimated bytes stay within `budgetBytes`: longest
 * first (so each piece pads little), each piece as large as the budget allows. An item too
 * large on its own still gets a piece (it is counted by the caller, not dropped). Returns
 * indices into `lengths`, ascending within each piece.
 */
export function packByBudget(
  lengths: readonly number[],
  bytesOf: (rows: number, width: number) => number,
  budgetBytes: number,
): number[][] {
  const order = lengths.map((_, index) => index).sort((a, b) => lengths[b]! - lengths[a]! || a - b);
  const pieces: number[][] = [];
  let current: number[] = [];
  let width = 0;
  for (const index of order) {
    const nextWidth = Math.max(width, lengths[index]!);
    if (current.length > 0 && bytesOf(current.length + 1, nextWidth) > budgetBytes) {
      pieces.push(current);
      current = [];
      width = 0;
    }
    current.push(index);
    width = Math.max(width, lengths[index]!);
  }
  if (current.length > 0) pieces.push(current);
  // Within a piece, the items keep their batch order.
  return pieces.map((piece) => piece.sort((a, b) => a - b));
}

/**
 * The default budget of one micro-batch, by tfjs backend. wasm: 256 MiB, well under the 4 GB
 * heap (which never shrinks, fragments, and also holds the models, Adam state, the
 * accumulated gradients and XNNPACK's packed weights) — and faster too: `npm run bench --
 * memory` measured the default tiny step at 0.87× the time of a 1 GiB budget (0.82× at
 * 128 MiB, 1.27× at 2 GiB: big tensors cost wasm more than the extra micro-batches do).
 * webgpu: well under a device's usual 256 MiB–2 GiB buffer limits, as one tensor per op
 * lives in one buffer. cpu: the JS heap.
 */
export function defaultMemoryBudgetBytes(backend: string): number {
  switch (backend) {
    case 'wasm':
      return 256 * MIB;
    case 'webgpu':
      return 256 * MIB;
    default:
      return 512 * MIB;
  }
}

/** The budget in force: a run's override in MiB, else the backend's default. */
export function memoryBudgetBytes(backend: string, overrideMiB?: number): number {
  return overrideMiB !== undefined && overrideMiB > 0
    ? overrideMiB * MIB
    : defaultMemoryBudgetBytes(backend);
}

export const BYTES_PER_MIB = MIB;

/**
 * Runs `work` and returns its result with the peak of tfjs's tensor bytes above what was held
 * before (what tf.profile reports, without its per-kernel records, which overflow the stack
 * on a whole GRPO step). For tests and benchmarks.
 */
export async function peakTensorBytes<T>(
  work: () => Promise<T>,
): Promise<{ result: T; peakBytes: number }> {
  const engine = tf.engine() as unknown as {
    trackTensor: (...args: unknown[]) => void;
    state: { numBytes: number };
  };
  const base = engine.state.numBytes;
  let peak = base;
  const original = engine.trackTensor;
  engine.trackTensor = function (this: unknown, ...args: unknown[]) {
    original.apply(this, args);
    if (engine.state.numBytes > peak) peak = engine.state.numBytes;
  };
  try {
    const result = await work();
    return { result, peakBytes: peak - base };
  } finally {
    engine.trackTensor = original;
  }
}
