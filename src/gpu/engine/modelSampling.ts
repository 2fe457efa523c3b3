// A batch of rows drawn on the one model (deviceTransformer.ts) as it stands — an adapter
// attached or none: rows decoded together on batch caches, tokens drawn on the device as the
// host sampler draws them (deviceDraw.ts' `pick`: temperature, top-k, row r's own rowPrng
// stream) and fed back by the device, so a submission runs TOKENS_PER_READ steps and only the
// tokens come back. Rows are batched grouped by prompt, and each distinct prompt is prefilled
// once: the other rows of the same prompt copy its cache and its logits (a GRPO group's samples
// share their prompt).
import type { SampleOptions, SampleResult } from '../../rollout/types';
import {
  distinctPrompts,
  initialRowStates,
  pickSpec,
  ROW_STATE_WORDS,
  replayDecode,
} from './deviceDraw';
import type { DeviceTransformer } from './deviceTransformer';

/** Most rows decoded together (a GRPO step's group of samples, several groups at once). */
const MAX_BATCH_ROWS = 16;
/** Decode steps per submission (and per readback of the tokens). */
const TOKENS_PER_READ = 16;

/**
 * Prompt tokens the samplers prefilled (tests, the bench: a shared prompt is prefilled once), and
 * rows decoded with each layer in one dispatch (decode_layer.wgsl).
 */
export const sampledCounts = { prefilledTokens: 0, fusedRows: 0 };

/**
 * A role's draw over `base` as it stands (an adapter attached or none), `threads`
 * invocations per row in the draw (16 on CPU drivers, 64 on GPUs).
 */
export async function sampleOnModel(
  base: DeviceTransformer,
  prompts: number[][],
  options: SampleOptions,
  threads: number,
): Promise<SampleResult> {
  const result: SampleResult = {
    tokens: prompts.map(() => []),
    logProbs: prompts.map(() => []),
    finished: prompts.map(() => false),
  };
  const budget = (p: readonly number[]) =>
    Math.min(options.maxNewTokens, base.contextLength - p.length);
  // Rows by their prompt's index among the distinct ones (a stable sort: rows of one prompt
  // stay together, each with its own stream).
  const { source } = distinctPrompts(prompts);
  const order = prompts
    .map((_, r) => r)
    .filter((r) => budget(prompts[r] as number[]) > 0)
    .sort((a, b) => (source[a] as number) - (source[b] as number));
  for (let at = 0; at < order.length; at += MAX_BATCH_ROWS) {
    // Each distinct prompt's first row, then the rows that share a prompt with one of them.
    const batch = order.slice(at, at + MAX_BATCH_ROWS);
    const first = new Set(
      batch.filter((r, i) => i === 0 || source[batch[i - 1] as number] !== source[r]),
    );
    const rows = [...first, ...batch.filter((r) => !first.has(r))];
    const part = await sampleRows(base, rows, prompts, source, budget, options, threads);
    if (base.decodesFused) sampledCounts.fusedRows += rows.length;
    rows.forEach((r, slot) => {
      const row = part[slot] as (typeof part)[number];
      result.tokens[r] = row.tokens;
      result.logProbs[r] = row.logProbs;
      result.finished[r] = row.finished;
    });
  }
  return result;
}

/** Rows `rows` (prompt indices) decoded together to their stop or budget: each row's draw. */
async function sampleRows(
  base: DeviceTransformer,
  rows: number[],
  prompts: number[][],
  source: ArrayLike<number>,
  budget: (p: readonly number[]) => number,
  options: SampleOptions,
  threads: number,
) {
  const rt = base.rt;
  const n = rows.length;
  const own = rows.map((r) => prompts[r] as number[]);
  base.batchCaches(n, Math.max(...own.map((p) => p.length + budget(p))));
  // The distinct prompts (the first rows) prefilled together, as many a pass as fit; every
  // other row copies its prompt's row: the cache and the next token's logits.
  const firstOf = new Map<number, number>();
  rows.forEach((r, slot) => {
    if (!firstOf.has(source[r] as number)) firstOf.set(source[r] as number, slot);
  });
  const distinct = firstOf.size;
  for (let from = 0; from < distinct; ) {
    const longest = Math.max(...own.slice(from, distinct).map((p) => p.length));
    const to = Math.min(distinct, from + base.prefillRowsPerPass(longest));
    base.prefillRowsOnDevice(from, own.slice(from, to));
    for (const p of own.slice(from, to)) sampledCounts.prefilledTokens += p.length;
    from = to;
  }
  const copies = rows.flatMap((r, slot) => {
    const from = firstOf.get(source[r] as number) as number;
    return from === slot ? [] : [{ from, to: slot, length: (own[slot] as number[]).length }];
  });
  if (copies.length) base.copyRows(copies, true);
  const maxNew = options.maxNewTokens;
  const state = rt.buffer(n * ROW_STATE_WORDS, 'row state');
  const out = rt.buffer(2 * n * maxNew, 'sampled');
  rt.write(state, initialRowStates(own, rows, options.seed, budget));
  // Draw from the current logits, then decode the drawn tokens into the next ones. A row ends
  // at its last allowed position: budget(p) tokens put its last at contextLength − 1.
  const step = rt.program([
    pickSpec({
      B: n,
      vocabSize: base.config.vocabSize,
      stride: base.Vp,
      lastPos: base.contextLength - 1,
      maxNew,
      options,
      threads,
      state,
      logits: base.batchLogits,
      out,
      unused: rt.dummy.r,
    }),
    ...base.fedDecodeSpecs(n, state),
  ]);
  try {
    return (await replayDecode(rt, step, { out, state }, n, maxNew, TOKENS_PER_READ)).rows;
  } finally {
    rt.destroyProgram(step);
    rt.free(state);
    rt.free(out);
  }
}
