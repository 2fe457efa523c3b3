// `npm run bench -- tfjs-ops`: the data movement inside a tiny-model GRPO step on tfjs wasm, each
// done the way the model does it now and the way it did before, timed in the same run (ratios:
// these machines are noisy). The shapes are a step's: the update's micro-batch of 15 rows × 78
// tokens (4 heads of 16), the sampler's cache of 60 rows × 4 heads × 92 positions; and one
// Hub model's projection (nn.Linear's [out, in] weight).
// The tests check that both ways give the same values (tests/unit/model.test.ts).
import * as tf from '@tensorflow/tfjs-core';
import { initBackend } from '../src/gpu/backend';
import { copyRows } from '../src/model';
import { FEW_ROWS_MAX, fewRowsLinear } from '../src/model/fewRowsLinear';
import { inputGradient, matMulByRows, rows } from '../src/model/ops';
import { splitHeads } from '../src/model/transformer';
import type { BenchTable } from './table';

const REPEATS = 30;

/** Median milliseconds of `run` (its tensors disposed), after 3 warm-up calls. */
function medianMs(run: () => tf.Tensor | tf.Tensor[]): number {
  for (let i = 0; i < 3; i++) tf.dispose(run());
  const times: number[] = [];
  for (let i = 0; i < REPEATS; i++) {
    const start = performance.now();
    tf.dispose(run());
    times.push(performance.now() - start);
  }
  times.sort((a, b) => a - b);
  return times[Math.floor(REPEATS / 2)]!;
}

/** The split as it was: one rank-5 transpose (a generic loop on wasm). */
const qkvByRank5 = (qkv: tf.Tensor2D, B: number, S: number, H: number, hd: number) =>
  tf.unstack(
    tf.reshape(tf.transpose(tf.reshape(qkv, [B, S, 3, H, hd]), [2, 0, 3, 1, 4]), [3, B * H, S, hd]),
  );

/** Rows one gather each, as attention split its slices before. */
function rowsByGather(x: tf.Tensor3D): tf.Tensor[] {
  const [n, a, b] = x.shape;
  const flat = tf.reshape(x, [n, a * b]);
  return Array.from({ length: n }, (_, i) => tf.reshape(tf.gather(flat, i), [a, b]));
}

export async function tfjsOpsBench(): Promise<BenchTable> {
  const report = await initBackend('wasm');
  const B = 15;
  const S = 78;
  const H = 4;
  const hd = 16;
  const qkv = tf.randomNormal([B * S, 3 * H * hd]) as tf.Tensor2D;
  const gradientBefore = tf.randomNormal([3, B, H, S, hd]);
  const gradientNow = tf.randomNormal([B, 3 * H, S, hd]);
  const slices = tf.randomNormal([B * H, S, hd]) as tf.Tensor3D;
  const cache = tf.randomNormal([60 * H, 92, hd]) as tf.Tensor3D;
  const kept = Array.from({ length: 59 * H }, (_, i) => i);
  const keptIndex = tf.tensor1d(kept, 'int32');
  // A Hub model's nn.Linear over a prompt: SmolLM2-135M's up projection [1536, 576], 64 tokens.
  const linearInput = tf.randomNormal([64, 576]) as tf.Tensor2D;
  const linearWeight = tf.randomNormal([1536, 576]) as tf.Tensor2D;
  // Decode rows through SmolLM2-135M's head and up projection: XNNPACK's W·xᵀ (8 output columns
  // a pass, one used) against the lab's kernel reading W's rows in place (fewRowsLinear.ts), and
  // against a transposed copy XNNPACK packs once (as fast, at twice the weight's memory).
  const decodeRow = tf.randomNormal([1, 576]) as tf.Tensor2D;
  const decodeRows4 = tf.randomNormal([4, 576]) as tf.Tensor2D;
  const decodeRows8 = tf.randomNormal([8, 576]) as tf.Tensor2D;
  const headWeight = tf.randomNormal([49152, 576]) as tf.Tensor2D;
  const headTransposed = tf.transpose(headWeight) as tf.Tensor2D;
  // The input gradient through a frozen weight, over a short and a long micro-batch.
  const upGradient64 = tf.randomNormal([64, 1536]) as tf.Tensor2D;
  const upGradient1080 = tf.randomNormal([1080, 1536]) as tf.Tensor2D;
  const byXnnpack = (x: tf.Tensor2D, w: tf.Tensor2D) => () =>
    tf.transpose(tf.matMul(w, tf.transpose(x)));
  const pairs: [
    string,
    string,
    () => tf.Tensor | tf.Tensor[],
    string,
    () => tf.Tensor | tf.Tensor[],
  ][] = [
    [
      'q, k, v from c_attn [1170, 192]',
      'rank-5 transpose + unstack',
      () => qkvByRank5(qkv, B, S, H, hd),
      '4D transpose + unstack (now)',
      () => splitHeads(qkv, B, S, H, hd),
    ],
    [
      "the split's gradient (the transpose back)",
      'rank-5 transpose',
      () => tf.transpose(gradientBefore, [1, 3, 0, 2, 4]),
      '4D transpose (now)',
      () => tf.transpose(gradientNow, [0, 2, 1, 3]),
    ],
    [
      'attention slices [60, 78, 16] → 60 × [78, 16]',
      '60 gathers',
      () => rowsByGather(slices),
      'one read, 60 copies in JS (now)',
      () => rows(slices),
    ],
    [
      'KV cache [240, 92, 16]: drop a finished row',
      'tf.gather',
      () => tf.gather(cache, keptIndex),
      'copyRows in JS (now)',
      () => copyRows(cache, kept),
    ],
    [
      "nn.Linear x·Wᵀ, x [64, 576], W [1536, 576] (a Hub model's layer)",
      'matMul, transposed B',
      () => tf.matMul(linearInput, linearWeight, false, true),
      '(W·xᵀ)ᵀ, matMulByRows (now)',
      () => matMulByRows(linearInput, linearWeight),
    ],
    [
      'decode: x·Wᵀ, head [49152, 576], 1 row',
      'W·xᵀ on XNNPACK (before)',
      byXnnpack(decodeRow, headWeight),
      'fewRowsLinear (now)',
      () => matMulByRows(decodeRow, headWeight),
    ],
    [
      'decode: x·Wᵀ, head [49152, 576], 1 row',
      'W held transposed, packed once (2× memory)',
      () => tf.matMul(decodeRow, headTransposed),
      'fewRowsLinear (now)',
      () => matMulByRows(decodeRow, headWeight),
    ],
    [
      'decode: x·Wᵀ, up projection [1536, 576], 1 row',
      'W·xᵀ on XNNPACK (before)',
      byXnnpack(decodeRow, linearWeight),
      'fewRowsLinear (now)',
      () => matMulByRows(decodeRow, linearWeight),
    ],
    [
      `decode: x·Wᵀ, up projection, 4 rows (FEW_ROWS_MAX ${FEW_ROWS_MAX})`,
      'W·xᵀ on XNNPACK (before)',
      byXnnpack(decodeRows4, linearWeight),
      'fewRowsLinear (now)',
      () => matMulByRows(decodeRows4, linearWeight),
    ],
    ...([upGradient64, upGradient1080] as const).map(
      (dy) =>
        [
          `input gradient dy·W, dy [${dy.shape[0]}, 1536], W [1536, 576] frozen`,
          'matMul(dy, W): W packed once, kept (W held twice)',
          () => tf.matMul(dy, linearWeight),
          'a copy packed per call (inputGradient past 1 GiB of tensors)',
          () => inputGradient(dy, linearWeight, 0),
        ] as [string, string, () => tf.Tensor, string, () => tf.Tensor],
    ),
    [
      'decode: x·Wᵀ, up projection, 8 rows',
      'fewRowsLinear (not used past FEW_ROWS_MAX)',
      () => fewRowsLinear(decodeRows8, linearWeight),
      'W·xᵀ on XNNPACK (now)',
      () => matMulByRows(decodeRows8, linearWeight),
    ],
  ];
  const table: (string | number)[][] = pairs.map(([what, beforeName, before, nowName, now]) => {
    const beforeMs = medianMs(before);
    const nowMs = medianMs(now);
    return [what, beforeName, beforeMs, nowName, nowMs, beforeMs / nowMs];
  });
  tf.dispose([
    qkv,
    gradientBefore,
    gradientNow,
    slices,
    cache,
    keptIndex,
    linearInput,
    linearWeight,
    decodeRow,
    decodeRows4,
    decodeRows8,
    upGradient64,
    upGradient1080,
    headWeight,
    headTransposed,
  ]);
  return {
    title: 'tfjs data movement in a GRPO step: before and now',
    environment: `tfjs ${report.backend} (${report.adapter}), median of ${REPEATS} calls, tiny preset's sizes`,
    columns: ['what', 'before', 'ms', 'now', 'ms', 'speed-up ×'],
    rows: table,
  };
}
