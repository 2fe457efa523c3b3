// Drawing tokens on the device, for the one model's batched sampling (kernelRoles.ts'
// sampleOnModel): decode.wgsl's `pick` draws each row's next token from the logits a decode
// step wrote (temperature, top-k, the row's seeded mulberry32 stream, as rollout/pick.ts), and
// the decode step feeds it back; replayDecode replays such a step `perRead` times a submission,
// the tokens coming back once per submission. A finished row costs no work.
import type { SampleOptions } from '../../rollout/types';
import {
  type Bindable,
  type DispatchSpec,
  type GpuRuntime,
  type Program,
  uniforms,
} from './runtime';

/** u32 words of a row's state: pos, done, token, count, rng, finished, _, _ (decode.wgsl). */
export const ROW_STATE_WORDS = 8;

/** The first state word of rollout/pick.ts' rowPrng(seed, row) (mulberry32, src/tasks/random.ts). */
export function rowStreamState(seed: number, row: number): number {
  const word = (Math.imul(seed >>> 0, 0x9e3779b1) ^ Math.imul(row + 1, 0x85ebca77)) >>> 0;
  return word >>> 0 || 0x9e3779b9;
}

/**
 * Replays a decode step (one that ends in `sample` or `pick`) `perRead` times a submission, reading
 * the tokens and the rows' state back after each, until every row is done or maxNew steps ran:
 * each row's tokens, their log-probs, and whether it met a stop token.
 */
export async function replayDecode(
  rt: GpuRuntime,
  step: Program,
  b: { out: GPUBuffer; state: GPUBuffer },
  B: number,
  maxNew: number,
  perRead: number,
): Promise<{ rows: { tokens: number[]; logProbs: number[]; finished: boolean }[]; steps: number }> {
  let steps = 0;
  let out: Float32Array = new Float32Array(0);
  let state: Uint32Array = new Uint32Array(0);
  for (;;) {
    const k = Math.min(perRead, maxNew - steps);
    rt.submit([step], k);
    steps += k;
    const [o, s] = await rt.read([b.out, b.state]);
    out = o as Float32Array;
    state = new Uint32Array((s as Float32Array).buffer);
    if (steps >= maxNew) break;
    let live = false;
    for (let r = 0; r < B; r++) if (state[r * ROW_STATE_WORDS + 1] === 0) live = true;
    if (!live) break;
  }
  const tokens = new Uint32Array(out.buffer);
  const rows = Array.from({ length: B }, (_, r) => {
    const count = state[r * ROW_STATE_WORDS + 3] ?? 0;
    const at = r * maxNew;
    return {
      tokens: Array.from(tokens.subarray(at, at + count)),
      logProbs: Array.from(out.subarray(B * maxNew + at, B * maxNew + at + count)),
      finished: state[r * ROW_STATE_WORDS + 5] === 1,
    };
  });
  return { rows, steps };
}

/**
 * decode.wgsl's row state for each prompt: at its last token, on the stream of row streams[b]
 * (rowPrng's), already done where its budget of new tokens is none.
 */
export function initialRowStates(
  prompts: readonly (readonly number[])[],
  streams: readonly number[],
  seed: number,
  budget: (prompt: readonly number[]) => number,
): Uint32Array {
  const init = new Uint32Array(prompts.length * ROW_STATE_WORDS);
  prompts.forEach((p, b) => {
    const at = b * ROW_STATE_WORDS;
    init[at] = p.length - 1;
    init[at + 1] = budget(p) <= 0 ? 1 : 0;
    init[at + 2] = p[p.length - 1] ?? 0;
    init[at + 4] = rowStreamState(seed, streams[b] as number);
  });
  return init;
}

/** Each distinct prompt once, and for each row the index of its own among them. */
export function distinctPrompts(prompts: readonly number[][]): {
  unique: number[][];
  source: Uint32Array;
} {
  const index = new Map<string, number>();
  const unique: number[][] = [];
  const source = new Uint32Array(prompts.length);
  prompts.forEach((p, b) => {
    const key = p.join(',');
    let u = index.get(key);
    if (u === undefined) {
      u = unique.length;
      unique.push(p);
      index.set(key, u);
    }
    source[b] = u;
  });
  return { unique, source };
}

/**
 * The decode kernel ends a row on `stopId` and one more token (self-plan's <|code|> as its
 * plan ends): the other stop of `stopIds`, null when there is none. More than one other stop
 * is refused: the kernel has room for two.
 */
export function secondStop(options: Pick<SampleOptions, 'stopId' | 'stopIds'>): number | null {
  const others = [...new Set(options.stopIds ?? [])].filter((id) => id !== options.stopId);
  if (others.length > 1) throw new Error('the decode kernel stops on at most two tokens');
  return others[0] ?? null;
}

/** Most top-k candidates the device's draw keeps (decode.wgsl's MAX_K). */
export const DEVICE_TOP_K_MAX = 64;

/** Whether the device's draw honours the call: at most two stop tokens, top-k within its room. */
export function devicePicks(options: SampleOptions, vocabSize: number): boolean {
  const topK = options.topK > 0 && options.topK < vocabSize ? options.topK : 0;
  return topK <= DEVICE_TOP_K_MAX && deviceStops(options);
}

/**
 * decode.wgsl's `pick` over the logits of B rows another pass wrote (rows `stride` floats
 * apart): each unfinished row's next token drawn as `sample` draws it (temperature, top-k, its
 * own stream in `state`), written to `out` ([B, maxNew] tokens, then their log-probs' bits),
 * its state advanced; a row ends on a stop token, after maxNew tokens, or at position `lastPos`.
 */
export function pickSpec(p: {
  B: number;
  vocabSize: number;
  stride: number;
  lastPos: number;
  maxNew: number;
  options: SampleOptions;
  threads: number;
  state: GPUBuffer;
  logits: GPUBuffer;
  out: GPUBuffer;
  unused: Bindable;
}): DispatchSpec {
  const { options } = p;
  const greedy = options.temperature <= 0;
  const topK = options.topK > 0 && options.topK < p.vocabSize ? options.topK : 0;
  if (topK > DEVICE_TOP_K_MAX)
    throw new Error(`pick: the device keeps at most ${DEVICE_TOP_K_MAX} top-k candidates`);
  return {
    shader: 'decode.wgsl',
    entry: 'pick',
    bindings: [
      ['r', p.unused],
      ['r', p.unused],
      ['w', p.state],
      ['w', p.logits],
      ['w', p.out],
    ],
    uniforms: uniforms([
      ['u', p.B],
      ['u', 0],
      ['u', p.vocabSize],
      ['u', p.lastPos],
      ['f', 0],
      ['f', greedy ? 1 : 1 / options.temperature],
      ['u', greedy ? 1 : 0],
      ['u', topK],
      ['u', options.stopId],
      ['u', p.maxNew],
      ['u', 0],
      ['u', 0],
      ['u', 0],
      ['u', secondStop(options) ?? options.stopId],
      ['u', p.stride],
      ['u', 0],
    ]),
    workgroups: [p.B],
    constants: { WG: p.threads },
    label: 'decode_pick',
  };
}

/** Whether the decode kernel can honour the call's stop tokens (at most two). */
export function deviceStops(options: Pick<SampleOptions, 'stopId' | 'stopIds'>): boolean {
  return new Set([options.stopId, ...(options.stopIds ?? [])]).size <= 2;
}
