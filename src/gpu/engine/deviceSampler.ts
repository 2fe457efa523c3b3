// Batched KV-cache sampling on the device, behind the lab's Sampler interface
// (src/rollout/types.ts): prompts prefilled with the full-sequence forward, then one decode
// step per token — every layer fused into one dispatch per row (shaders/decode.wgsl `layer`)
// and one dispatch that samples (temperature, top-k, the row's seeded mulberry32 stream, as
// rollout/pick.ts) — replayed `tokensPerRead` times per submission; tokens come back once per
// submission. A finished row returns at the top of every kernel: it costs no work.
import type { SampleOptions, SampleResult, Sampler } from '../../rollout/types';
import type { DeviceModel } from './deviceModel';
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

export interface DecodeCounts {
  /** Dispatches of one decode step (every row, every layer, the sampler). */
  dispatchesPerToken: number;
  submissions: number;
  /** Decode steps run (the longest row's generated tokens). */
  steps: number;
  /** Rows the prefill's forward ran: one per distinct prompt (0 for one-token prompts). */
  prefillRows?: number;
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

export class DeviceSampler implements Sampler {
  /** Decode steps per submission (and per readback). */
  tokensPerRead = 16;
  /**
   * Invocations per row in the fused decode kernels: 16 on CPU drivers (fewer invocations to
   * switch between at each barrier: 2–5× faster on SwiftShader), 64 on real GPUs.
   */
  rowThreads: number;
  last: DecodeCounts = { dispatchesPerToken: 0, submissions: 0, steps: 0 };
  /** Most bytes of one layer-stacked K (or V) cache; rows beyond it run as further chunks. */
  maxCacheBytes = Number.POSITIVE_INFINITY;
  /** The last call's decode-step program (for profiling; its buffers are freed). */
  lastProgram: Program | null = null;

  /**
   * Rows per workgroup in the fused layer (decode.wgsl's `layer`, override RB): each
   * weight read then serves that many rows. CPU drivers gather every weight a lane reads, so
   * they run as many rows as the workgroup storage holds (at most 8); real GPUs one per row.
   */
  rowsPerGroup: number;

  constructor(
    readonly model: DeviceModel,
    options: { software?: boolean; rowThreads?: number; rowsPerGroup?: number } = {},
  ) {
    this.rowThreads = options.rowThreads ?? (options.software ? 16 : 64);
    const { nEmbd: D, nInner: F } = model.config;
    const storage = model.rt.device.limits.maxComputeWorkgroupStorageSize;
    // The fused layer keeps 5·D + F floats per row in workgroup storage, plus a few words.
    const fits = Math.max(1, Math.floor((storage - 64) / (4 * (5 * D + F))));
    this.rowsPerGroup = Math.min(options.rowsPerGroup ?? (options.software ? 8 : 1), fits, 8);
  }

  /**
   * Rows whose caches fit one binding run together; more run as consecutive chunks, each row
   * still drawing from its own stream (seed, row).
   */
  async sample(prompts: number[][], options: SampleOptions): Promise<SampleResult> {
    if (options.maxNewTokens <= 0)
      return {
        tokens: prompts.map(() => []),
        logProbs: prompts.map(() => []),
        finished: prompts.map(() => false),
      };
    const { nCtx, nEmbd: D, nLayer: L } = this.model.config;
    const longest = Math.max(0, ...prompts.map((p) => p.length));
    const C = Math.min(nCtx, longest + Math.max(1, options.maxNewTokens));
    const limit = Math.min(
      this.model.rt.device.limits.maxStorageBufferBindingSize,
      this.maxCacheBytes,
    );
    const perRow = L * C * D * 4;
    const rows = Math.max(1, Math.floor(limit / perRow));
    if (prompts.length <= rows) return this.sampleChunk(prompts, options, 0);
    const result: SampleResult = { tokens: [], logProbs: [], finished: [] };
    const counts = { dispatchesPerToken: 0, submissions: 0, steps: 0, prefillRows: 0 };
    for (let start = 0; start < prompts.length; start += rows) {
      const part = await this.sampleChunk(prompts.slice(start, start + rows), options, start);
      result.tokens.push(...part.tokens);
      result.logProbs.push(...part.logProbs);
      result.finished.push(...part.finished);
      counts.dispatchesPerToken = this.last.dispatchesPerToken;
      counts.submissions += this.last.submissions;
      counts.steps += this.last.steps;
      counts.prefillRows += this.last.prefillRows ?? 0;
    }
    this.last = counts;
    return result;
  }

  private async sampleChunk(
    prompts: number[][],
    options: SampleOptions,
    rowOffset: number,
  ): Promise<SampleResult> {
    const m = this.model;
    const rt = m.rt;
    const { nCtx, nEmbd: D, nHead: H, nLayer: L, vocabSize: V } = m.config;
    const B = prompts.length;
    const result: SampleResult = {
      tokens: prompts.map(() => []),
      logProbs: prompts.map(() => []),
      finished: prompts.map(() => false),
    };
    if (B === 0) return result;
    if (prompts.some((p) => p.length === 0))
      throw new Error('sample: every prompt needs at least one token');
    const longest = Math.max(...prompts.map((p) => p.length));
    if (longest > nCtx)
      throw new Error(`sample: a prompt of ${longest} tokens exceeds the context of ${nCtx}`);
    const maxNew = Math.max(1, options.maxNewTokens);
    const C = Math.min(nCtx, longest + maxNew);
    const greedy = options.temperature <= 0;
    const topK = options.topK > 0 && options.topK < V ? options.topK : 0;
    if (topK > 64) throw new Error('sample: the device sampler keeps at most 64 top-k candidates');
    if (this.rowThreads < H)
      throw new Error(`sample: ${this.rowThreads} invocations per row < ${H} heads`);
    const submissionsBefore = rt.counters.submissions;

    const kcache = rt.buffer(L * B * C * D, 'k-cache');
    const vcache = rt.buffer(L * B * C * D, 'v-cache');
    const x = rt.buffer(B * D, 'decode-x');
    const scores = rt.buffer(B * H * C, 'scores');
    const logits = rt.buffer(B * V, 'decode-logits');
    const out = rt.buffer(2 * B * maxNew, 'sampled');
    const state = rt.buffer(B * ROW_STATE_WORDS, 'row-state');
    const temporary: GPUBuffer[] = [kcache, vcache, x, scores, logits, out, state];
    try {
      // Prefill: the full-sequence forward over the padded prompts, each distinct prompt once
      // (GRPO's groups share theirs: M programs per plan, N plans per task), copied into every
      // row's cache that has it. Positions past a row's prompt hold garbage that decoding
      // overwrites before it is ever read.
      const T = longest;
      let prefillRows = 0;
      if (T > 1) {
        const { unique, source } = distinctPrompts(prompts);
        const U = unique.length;
        prefillRows = U;
        const ids = new Uint32Array(U * T);
        unique.forEach((p, u) => {
          ids.set(p, u * T);
        });
        const idsBuf = rt.buffer(U * T);
        rt.write(idsBuf, ids);
        const sourceBuf = rt.buffer(B, 'prefill-source');
        rt.write(sourceBuf, source);
        const xs = Array.from({ length: L + 1 }, () => rt.buffer(U * T * D));
        const save = Array.from({ length: L }, () => m.layerBuffers(U * T));
        const specs: DispatchSpec[] = m.forwardSpecs(U, T, idsBuf, xs, save);
        temporary.push(sourceBuf);
        for (let l = 0; l < L; l++)
          specs.push({
            shader: 'decode.wgsl',
            entry: 'fill_cache',
            bindings: [
              ['r', save[l]!.qkv],
              ['w', kcache],
              ['w', vcache],
              ['r', sourceBuf],
            ],
            uniforms: uniforms([
              ['u', B],
              ['u', T],
              ['u', D],
              ['u', C],
              ['u', l],
              ['u', 0],
              ['u', 0],
              ['u', 0],
            ]),
            workgroups: gridFor(B * T * D),
            label: 'fill_cache',
          });
        const prefill = rt.program(specs);
        rt.submit([prefill]);
        temporary.push(idsBuf, ...xs, ...save.flatMap((s) => Object.values(s) as GPUBuffer[]));
        temporary.push(...prefill.uniforms);
      }
      rt.write(
        state,
        initialRowStates(
          prompts,
          prompts.map((_, b) => rowOffset + b),
          options.seed,
          (p) => Math.min(maxNew, nCtx - p.length),
        ),
      );
      const step = this.decodeProgram(B, C, maxNew, options, greedy, topK, {
        x,
        kcache,
        vcache,
        scores,
        logits,
        out,
        state,
      });
      this.lastProgram = step;
      temporary.push(...step.uniforms);
      const { rows, steps } = await replayDecode(
        rt,
        step,
        { out, state },
        B,
        maxNew,
        this.tokensPerRead,
      );
      rows.forEach((row, b) => {
        result.tokens[b] = row.tokens;
        result.logProbs[b] = row.logProbs;
        result.finished[b] = row.finished;
      });
      this.last = {
        dispatchesPerToken: step.size,
        submissions: rt.counters.submissions - submissionsBefore,
        steps,
        prefillRows,
      };
      return result;
    } finally {
      for (const buffer of temporary) rt.free(buffer);
    }
  }

  private decodeProgram(
    B: number,
    C: number,
    maxNew: number,
    options: SampleOptions,
    greedy: boolean,
    topK: number,
    b: Record<'x' | 'kcache' | 'vcache' | 'scores' | 'logits' | 'out' | 'state', GPUBuffer>,
  ): Program {
    const m = this.model;
    const {
      nCtx,
      nEmbd: D,
      nHead: H,
      nLayer: L,
      nInner: F,
      vocabSize: V,
      layerNormEps: eps,
    } = m.config;
    const specs: DispatchSpec[] = [];
    for (let l = 0; l < L; l++) {
      const o = (name: string) => m.off(`transformer.h.${l}.${name}`);
      specs.push({
        shader: 'decode.wgsl',
        bindings: [
          ['r', m.params],
          ['r', b.state],
          ['w', b.x],
          ['w', b.kcache],
          ['w', b.vcache],
          ['w', b.scores],
        ],
        uniforms: uniforms([
          ['u', B],
          ['u', D],
          ['u', H],
          ['u', D / H],
          ['u', C],
          ['u', F],
          ['u', l],
          ['u', l === 0 ? 1 : 0],
          ['f', eps],
          ['f', 1 / Math.sqrt(D / H)],
          ['u', m.off('transformer.wte.weight')],
          ['u', m.off('transformer.wpe.weight')],
          ['u', o('ln_1.weight')],
          ['u', o('ln_1.bias')],
          ['u', o('attn.c_attn.weight')],
          ['u', o('attn.c_attn.bias')],
          ['u', o('attn.c_proj.weight')],
          ['u', o('attn.c_proj.bias')],
          ['u', o('ln_2.weight')],
          ['u', o('ln_2.bias')],
          ['u', o('mlp.c_fc.weight')],
          ['u', o('mlp.c_fc.bias')],
          ['u', o('mlp.c_proj.weight')],
          ['u', o('mlp.c_proj.bias')],
        ]),
        entry: 'layer',
        workgroups: [Math.ceil(B / this.rowsPerGroup)],
        constants: { WG: this.rowThreads, RB: this.rowsPerGroup, MD: D, MF: F },
        label: `decode_layer_${l}`,
      });
    }
    specs.push({
      shader: 'decode.wgsl',
      entry: 'sample',
      bindings: [
        ['r', m.params],
        ['r', b.x],
        ['w', b.state],
        ['w', b.logits],
        ['w', b.out],
      ],
      uniforms: uniforms([
        ['u', B],
        ['u', D],
        ['u', V],
        ['u', nCtx],
        ['f', eps],
        ['f', greedy ? 1 : 1 / options.temperature],
        ['u', greedy ? 1 : 0],
        ['u', topK],
        ['u', options.stopId],
        ['u', maxNew],
        ['u', m.off('transformer.ln_f.weight')],
        ['u', m.off('transformer.ln_f.bias')],
        ['u', m.off('transformer.wte.weight')],
        ['u', secondStop(options) ?? options.stopId],
        ['u', 0],
        ['u', 0],
      ]),
      workgroups: [B],
      constants: { WG: this.rowThreads },
      label: 'decode_sample',
    });
    return m.rt.program(specs);
  }
}

function gridFor(elements: number): [number, number] {
  const groups = Math.ceil(elements / 64);
  const x = Math.max(1, Math.min(groups, 65535));
  return [x, Math.ceil(groups / x)];
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
