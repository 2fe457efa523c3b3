// LoRA over a frozen Llama-family base on the kernels (gpu/engine/devicePolicy.ts): the new
// kernels (matmul v6_b16t, lora.wgsl) against float64 loops; the log-probs with random adapters
// against the float64 forward of the merged weights W + (alpha/r)·B·A; every adapter's gradient
// of Σ dlogp·logp against central finite differences of that float64 forward, on tiny random
// Qwen2-like (BF16, bias, tied, split bindings) and Qwen3-like (F32, q/k norms) models, with
// sequences of different lengths; one AdamW step against its formula. A Qwen3-like base with its
// adapter merged into an f32 copy (as a LoRA role samples) decodes fused to the same reference.

import { describe, expect, it } from 'vitest';
import type { WeightTensor } from '../../src/gpu/engine/deviceCheckpoint';
import {
  type Adapters,
  adapterKey,
  DevicePolicy,
  LORA_TARGETS,
  type LoraTarget,
} from '../../src/gpu/engine/devicePolicy';
import { DeviceTransformer } from '../../src/gpu/engine/deviceTransformer';
import {
  type LoraSegment,
  loraGradB,
  loraGradU,
  loraUp,
  loraWidth,
  matmul16T,
  type WeightDtype,
} from '../../src/gpu/engine/ops';
import { packBatch } from '../../src/gpu/engine/packedBatch';
import type { DispatchSpec, GpuRuntime } from '../../src/gpu/engine/runtime';
import { loraBSideRef } from '../../src/gpu/kernels/referenceOps';
import { grid2d } from '../../src/gpu/kernels/runKernel';
import type { LlamaConfig } from '../../src/model/families/llamaConfig';
import { llamaTransformerConfig } from '../../src/model/families/llamaConfig';
import { bf16ToF32, decodeHalves, f16ToF32, f32ToBf16, f32ToF16 } from '../../src/model/halfFloat';
import { mergeLora } from '../../src/model/peft';
import { Rng } from '../../src/tasks/random';
import {
  expectClose,
  kernelRuntime,
  needRuntime,
  randoms,
  readBack,
  run,
  upload,
} from './kernels-harness';
import {
  llamaConfig,
  llamaReferenceLogits,
  randomLlama,
  relativeToLargest,
} from './llama-device-fixtures';

const h = kernelRuntime();

describe('matmul v6_b16t and lora.wgsl', () => {
  for (const dtype of ['F16', 'BF16'] as const)
    for (const [M, K, N] of [
      [1, 5, 8],
      [7, 101, 36],
      [13, 64, 20],
    ] as [number, number, number][])
      it(`v6_b16t ${dtype}: C [${M},${N}] += A [${M},${K}]·W [${K},${N}]`, async (ctx) => {
        const rt = needRuntime(h, ctx);
        const aStride = Math.ceil(K / 4) * 4 + 4;
        const a = randoms(M * aStride, M + K);
        const w = randoms(K * N, K * N, 0.5);
        const bits = Uint16Array.from(w, (v) => (dtype === 'F16' ? f32ToF16(v) : f32ToBf16(v)));
        const wd = Float64Array.from(bits, (b) => (dtype === 'F16' ? f16ToF32(b) : bf16ToF32(b)));
        const c0 = randoms(M * N, 3);
        const C = upload(rt, c0);
        await run(rt, [
          matmul16T({
            M,
            N,
            K,
            a: upload(rt, a),
            aStride,
            w: upload(rt, new Uint32Array(bits.buffer)),
            dtype,
            c: C,
            accumulate: true,
            dummy: rt.dummy,
          }),
        ]);
        const want = Float64Array.from({ length: M * N }, (_, e) => {
          const [i, j] = [Math.floor(e / N), e % N];
          let s = c0[e] as number;
          for (let k = 0; k < K; k++)
            s += (a[i * aStride + k] as number) * (wd[k * N + j] as number);
          return s;
        });
        expectClose(await readBack(rt, C, M * N), want, 1e-5, 1e-4, dtype);
      });

  const SEGMENTS = [
    [{ offset: 7, width: 11 }],
    // A site of three adapters (q, k, v), columns with gaps between them (an unadapted target).
    [
      { offset: 2, width: 5 },
      { offset: 9, width: 3 },
      { offset: 20, width: 6 },
    ],
  ];
  /** The B side's three products on fresh inputs, `scalar`: the versions a k at a time. */
  async function bSide(rt: GpuRuntime, segments: LoraSegment[], r: number, scalar = false) {
    const [M, rs, s] = [9, 29, 0.75];
    const cols = { M, r, scale: s, rowStride: rs, segments };
    const N = loraWidth(cols);
    const nr = segments.length * r;
    const inputs = {
      u: randoms(M * nr, 1),
      b: randoms(N * r, 2),
      y0: randoms(M * rs, 3),
      dy: randoms(M * rs, 4),
      db0: randoms(N * r, 5),
    };
    const [Y, DU, DB] = [upload(rt, inputs.y0), rt.buffer(M * nr), upload(rt, inputs.db0)];
    const [U, Bb, DY] = [upload(rt, inputs.u), upload(rt, inputs.b), upload(rt, inputs.dy)];
    const specs = [
      loraUp(cols, U, Bb, Y),
      loraGradU(cols, DY, Bb, DU),
      loraGradB(cols, DY, U, DB, true),
    ];
    // The versions a k at a time: one invocation per element of du and dB (four in _r4's).
    const invocations = { up: 0, grad_u: M * nr, grad_b: N * r };
    const oneK = (x: DispatchSpec): DispatchSpec => {
      const entry = x.entry.replace(/_r4$/, '') as keyof typeof invocations;
      const n = invocations[entry];
      return { ...x, entry, ...(n > 0 ? { workgroups: grid2d(Math.ceil(n / 64)) } : {}) };
    };
    await run(rt, scalar ? specs.map(oneK) : specs);
    return {
      cols,
      inputs,
      y: await readBack(rt, Y, M * rs),
      du: await readBack(rt, DU, M * nr),
      db: await readBack(rt, DB, N * r),
    };
  }

  for (const segments of SEGMENTS)
    for (const r of [3, 8])
      it(`up, grad_u and grad_b at rank ${r}, ${segments.length} column segment(s) inside wider rows`, async (ctx) => {
        const rt = needRuntime(h, ctx);
        const { cols, inputs, y, du, db } = await bSide(rt, segments, r);
        const want = loraBSideRef(cols, inputs.u, inputs.b, inputs.dy, inputs.y0);
        expectClose(y, want.y, 1e-6, 1e-5, 'y');
        expectClose(du, want.du, 1e-6, 1e-5, 'du');
        expectClose(
          db,
          want.db.map((v, i) => v + inputs.db0[i]!),
          1e-6,
          1e-5,
          'dB',
        );
      });

  it('the rank-multiple-of-4 versions (vec4s over k) give the versions a k at a time to the bit', async (ctx) => {
    const rt = needRuntime(h, ctx);
    const bits = (x: Float32Array) => [...new Uint32Array(x.buffer, x.byteOffset, x.length)];
    for (const segments of SEGMENTS) {
      const fast = await bSide(rt, segments, 8);
      const scalar = await bSide(rt, segments, 8, true);
      for (const key of ['y', 'du', 'db'] as const)
        expect(bits(fast[key]), key).toEqual(bits(scalar[key]));
    }
  });
});

/** The projection weights a target merges into. */
const weightName = (l: number, t: LoraTarget) =>
  `model.layers.${l}.${t.endsWith('_proj') && ['gate_proj', 'up_proj', 'down_proj'].includes(t) ? 'mlp' : 'self_attn'}.${t}.weight`;

function decoded(t: WeightTensor): Float64Array {
  return Float64Array.from(
    t.dtype === 'F32' ? (t.data as Float32Array) : decodeHalves(t.dtype, t.data as Uint16Array),
  );
}

/**
 * The base with W + scale·B·A merged in float64. The reference reads an 'F32' tensor's data by
 * index, so Float64Array data passes through unrounded (finite differences need it).
 */
function merged(
  base: Map<string, WeightTensor>,
  adapters: Adapters,
  scale: number,
  r: number,
): Map<string, WeightTensor> {
  const out = new Map(base);
  for (const [key, { A, B }] of adapters) {
    const [l, t] = key.split('.') as [string, LoraTarget];
    const name = weightName(Number(l), t);
    const w = base.get(name) as WeightTensor;
    const [N, K] = w.shape as [number, number];
    const m = decoded(w);
    for (let j = 0; j < N; j++)
      for (let k = 0; k < K; k++) {
        let s = 0;
        for (let q = 0; q < r; q++) s += (B[j * r + q] as number) * (A[q * K + k] as number);
        m[j * K + k] = (m[j * K + k] as number) + scale * s;
      }
    out.set(name, { dtype: 'F32', shape: w.shape, data: m as unknown as Float32Array });
  }
  return out;
}

/** Σ_b Σ_t g[b][t]·log p(seq[t+1] | seq[≤t]) in float64, and the log-probs. */
function referenceLoss(
  c: LlamaConfig,
  w: Map<string, WeightTensor>,
  seqs: number[][],
  g: Float64Array[] | null,
): { loss: number; logp: Float64Array[] } {
  let loss = 0;
  const logp = seqs.map((seq, b) => {
    const logits = llamaReferenceLogits(c, w, seq, false);
    return Float64Array.from({ length: seq.length - 1 }, (_, t) => {
      const z = logits[t] as Float64Array;
      const m = Math.max(...z);
      let sum = 0;
      for (const v of z) sum += Math.exp(v - m);
      const lp = (z[seq[t + 1] as number] as number) - m - Math.log(sum);
      loss += (g?.[b]?.[t] ?? 0) * lp;
      return lp;
    });
  });
  return { loss, logp };
}

function randomAdapters(policy: DevicePolicy, seed: number): Adapters {
  const rng = new Rng(seed);
  const start = policy.initialAdapters(seed);
  for (const a of start.values())
    for (let i = 0; i < a.B.length; i++) a.B[i] = 0.3 * (2 * rng.next() - 1);
  return start;
}

const CASES: [string, Partial<LlamaConfig>, WeightDtype, number, readonly LoraTarget[]][] = [
  [
    'Qwen2-like: BF16, q/k/v bias, tied, gate|up and head split over bindings',
    { modelType: 'qwen2', attentionBias: true, ropeTheta: 1000000 },
    'BF16',
    4096,
    LORA_TARGETS,
  ],
  [
    // Adapters on some targets: each site's columns with gaps (k and gate unadapted).
    'Qwen3-like: F32, q/k norms, head_dim 12 ≠ hidden/heads, GQA 2:1, adapters on q, v, up, down',
    { modelType: 'qwen3', qkNorm: true, headDim: 12, numHeads: 4, numKvHeads: 2 },
    'F32',
    0,
    ['q_proj', 'v_proj', 'up_proj', 'down_proj'],
  ],
];

/**
 * The first case's base (Qwen2-like, BF16; its bindings split unless `split` is false) and a
 * rank-2 policy over it for each name, all holding the same random adapters.
 */
function qwen2Policies<K extends string>(
  rt: GpuRuntime,
  names: readonly K[],
  o: { baseSeed: number; adapterSeed: number; contextLength: number; split?: boolean },
) {
  const [, over, dtype, maxBindingBytes] = CASES[0] as (typeof CASES)[number];
  const config = llamaConfig(over);
  const model = new DeviceTransformer(
    rt,
    llamaTransformerConfig(config),
    randomLlama(config, dtype, o.baseSeed),
    {
      contextLength: o.contextLength,
      ...(o.split === false ? {} : { maxBindingBytes }),
    },
  );
  const lora = { rank: 2, alpha: 5, targets: LORA_TARGETS };
  const policies = Object.fromEntries(
    names.map((name) => [name, new DevicePolicy(rt, model, lora)]),
  ) as Record<K, DevicePolicy>;
  const adapters = randomAdapters(Object.values<DevicePolicy>(policies)[0]!, o.adapterSeed);
  for (const p of Object.values<DevicePolicy>(policies)) p.importAdapters(adapters);
  return { config, ...policies };
}

describe('LoRA over a frozen Llama-family base on the kernels', () => {
  for (const [name, over, dtype, maxBindingBytes, targets] of CASES)
    it(`${name}: log-probs and every adapter gradient against float64`, async (ctx) => {
      const rt = needRuntime(h, ctx);
      const config = llamaConfig(over);
      const base = randomLlama(config, dtype, 21);
      const model = new DeviceTransformer(rt, llamaTransformerConfig(config), base, {
        contextLength: 8,
        ...(maxBindingBytes ? { maxBindingBytes } : {}),
      });
      const lora = { rank: 2, alpha: 5, targets };
      const policy = new DevicePolicy(rt, model, lora);
      const adapters = randomAdapters(policy, 4);
      policy.importAdapters(adapters);
      const seqs = [
        [3, 17, 0, config.vocabSize - 1, 42, 8],
        [9, 1, 64, 5],
      ];
      const g = seqs.map((s, b) =>
        Float64Array.from({ length: s.length - 1 }, (_, t) => Math.sin(b + 3 * t)),
      );
      const ref = referenceLoss(config, merged(base, adapters, policy.scale, 2), seqs, g);
      const logp = await policy.logProbs({ sequences: seqs });
      const top = Math.max(...ref.logp.flatMap((v) => [...v].map(Math.abs)));
      logp.forEach((lp, b) => {
        expect(lp.length).toBe((seqs[b] as number[]).length - 1);
        lp.forEach((v, t) => {
          expect(Math.abs(v - (ref.logp[b]?.[t] as number)) / top).toBeLessThan(1e-5);
        });
      });
      const { logp: again, grads } = await policy.adapterGradients({ sequences: seqs }, g);
      expect(again).toEqual(logp);
      // Central differences of the float64 loss, one parameter at a time.
      const eps = 1e-5;
      let worst = 0;
      for (const [key, a] of adapters) {
        const got = grads.get(key) as { A: Float32Array; B: Float32Array };
        for (const part of ['A', 'B'] as const) {
          const values = a[part];
          const fd = new Float64Array(values.length);
          for (let i = 0; i < values.length; i++) {
            const keep = values[i] as number;
            const at = (v: number) => {
              const bumped = new Map(adapters);
              const copy = Float64Array.from(values);
              copy[i] = v;
              bumped.set(key, { ...a, [part]: copy as unknown as Float32Array });
              return referenceLoss(config, merged(base, bumped, policy.scale, 2), seqs, g).loss;
            };
            fd[i] = (at(keep + eps) - at(keep - eps)) / (2 * eps);
          }
          let err = 0;
          let big = 0;
          fd.forEach((v, i) => {
            err = Math.max(err, Math.abs((got[part][i] as number) - v));
            big = Math.max(big, Math.abs(v));
          });
          const rel = err / big;
          worst = Math.max(worst, rel);
          expect(rel, `${key} ${part}`).toBeLessThan(1e-3);
        }
      }
      console.log(`${name}: worst adapter gradient error ${worst.toExponential(2)} of its largest`);
      // One AdamW step from those gradients.
      const before = await policy.exportAdapters();
      const step = await policy.applyAdamW({ lr: 1e-2, weightDecay: 0 });
      expect(step.ok).toBe(true);
      const after = await policy.exportAdapters();
      for (const [key, b4] of before) {
        const gr = grads.get(key) as { A: Float32Array; B: Float32Array };
        const now = after.get(key) as { A: Float32Array; B: Float32Array };
        for (const part of ['A', 'B'] as const)
          b4[part].forEach((v, i) => {
            const gi = gr[part][i] as number;
            // Step 1: m̂ = g, v̂ = g², so the update is lr·g / (|g| + eps).
            const want = v - (1e-2 * gi) / (Math.abs(gi) + 1e-8);
            expect(Math.abs((now[part][i] as number) - want)).toBeLessThan(1e-6);
          });
      }
      policy.free();
    }, 240_000);

  it('a step in micro-batches (the memory budget) takes the step of one batch: the same log-probs, loss and adapters', async (ctx) => {
    const rt = needRuntime(h, ctx);
    const { whole, parts } = qwen2Policies(rt, ['whole', 'parts'], {
      baseSeed: 31,
      adapterSeed: 6,
      contextLength: 8,
      split: false,
    });
    const sequences = [
      [3, 17, 0, 42, 8, 1, 2],
      [9, 1, 64, 5],
      [7, 7, 7, 7, 7, 7],
      [2, 40, 11],
      [5, 6],
    ];
    // A loss linear in the log-probs, Σ g·logp, so dlogp = g whatever the split.
    const g = sequences.map((q, b) =>
      Array.from({ length: q.length - 1 }, (_, t) => Math.cos(b + 2 * t)),
    );
    const seen: Float32Array[][] = [];
    const lossFn = (logp: Float32Array[]) => {
      seen.push(logp);
      const loss = logp.reduce(
        (sum, lp, b) => sum + lp.reduce((s2, v, t) => s2 + v * (g[b]?.[t] ?? 0), 0),
        0,
      );
      return { loss, dlogp: g };
    };
    const adamw = { lr: 1e-2, weightDecay: 0.01 };
    const one = await whole.step({ sequences }, lossFn, adamw);
    // 7 positions a row: at most 2 sequences a micro-batch, so 3 of them.
    const split = await parts.step({ sequences }, lossFn, adamw, 14);
    expect([one.microBatches, split.microBatches]).toEqual([1, 3]);
    expect(split.ok).toBe(true);
    for (const [b, lp] of seen[1]!.entries())
      for (const [t, v] of lp.entries())
        expect(Math.abs(v - (seen[0]![b]![t] as number))).toBeLessThan(1e-6);
    expect(Math.abs(split.loss - one.loss)).toBeLessThan(1e-5 * Math.max(1, Math.abs(one.loss)));
    expect(Math.abs(split.gradNorm - one.gradNorm)).toBeLessThan(1e-5 * one.gradNorm);
    const [a, b] = [await whole.exportAdapters(), await parts.exportAdapters()];
    for (const [key, pair] of a)
      for (const part of ['A', 'B'] as const)
        for (const [i, v] of pair[part].entries())
          expect(Math.abs(v - (b.get(key)![part][i] as number)), key).toBeLessThan(1e-6);
    // The log-probs alone in micro-batches (the KL reference's pass): the same numbers.
    const partLogp = await parts.logProbs({ sequences }, 7);
    const wholeLogp = await parts.logProbs({ sequences });
    for (const [b, lp] of partLogp.entries())
      for (const [t, v] of lp.entries())
        expect(Math.abs(v - (wholeLogp[b]![t] as number))).toBeLessThan(1e-6);
    // The budget decides: a whole batch's activations fit a generous budget, not a tiny one.
    expect(whole.rowsPerMicroBatch(2 ** 30, 7)).toBeGreaterThan(35);
    expect(whole.rowsPerMicroBatch(1, 7)).toBe(7);
    whole.free();
    parts.free();
  }, 240_000);

  it('the head in row chunks (a device whose binding limit holds fewer rows of logits) gives the same log-probs and gradients', async (ctx) => {
    const rt = needRuntime(h, ctx);
    const { config, whole, chunked } = qwen2Policies(rt, ['whole', 'chunked'], {
      baseSeed: 41,
      adapterSeed: 8,
      contextLength: 8,
    });
    chunked.logitsRows = 64;
    // 12 rows of 8 positions: 96 rows of logits, in chunks of 64 and 32.
    const rng = new Rng(5);
    const sequences = Array.from({ length: 12 }, (_, b) =>
      Array.from({ length: 8 - (b % 3) }, () => rng.int(0, config.vocabSize - 1)),
    );
    const dlogp = sequences.map((q, b) =>
      Array.from({ length: q.length - 1 }, (_, t) => Math.sin(3 * b + t)),
    );
    const one = await whole.adapterGradients({ sequences }, dlogp);
    const two = await chunked.adapterGradients({ sequences }, dlogp);
    for (const [b, lp] of two.logp.entries())
      for (const [t, v] of lp.entries())
        expect(Math.abs(v - (one.logp[b]![t] as number))).toBeLessThan(1e-6);
    for (const [key, pair] of one.grads)
      for (const part of ['A', 'B'] as const) {
        const big = Math.max(...[...pair[part]].map(Math.abs));
        for (const [i, v] of pair[part].entries())
          expect(Math.abs(v - (two.grads.get(key)![part][i] as number)), key).toBeLessThan(
            1e-5 * big,
          );
      }
    whole.free();
    chunked.free();
  }, 240_000);

  it("the head on the scored positions only (GRPO: the completion) gives their log-probs and the full head's gradients, in one shot, in chunks and in micro-batches", async (ctx) => {
    const rt = needRuntime(h, ctx);
    const { config, full, scored, chunked } = qwen2Policies(rt, ['full', 'scored', 'chunked'], {
      baseSeed: 43,
      adapterSeed: 9,
      contextLength: 16,
    });
    chunked.logitsRows = 64;
    // 12 sequences of 11–16 tokens, each scored from its own "prompt" end: 70–100 scored rows,
    // more than one chunk of 64.
    const rng = new Rng(8);
    const sequences = Array.from({ length: 12 }, (_, b) =>
      Array.from({ length: 16 - (b % 6) }, () => rng.int(0, config.vocabSize - 1)),
    );
    const scoredFrom = sequences.map((_, b) => 2 + (b % 5));
    const dlogp = sequences.map((q, b) =>
      Array.from({ length: q.length - 1 }, (_, t) =>
        t >= (scoredFrom[b] as number) ? Math.sin(3 * b + t) : 0,
      ),
    );
    expect(sequences.reduce((n, q, b) => n + q.length - 1 - scoredFrom[b]!, 0)).toBeGreaterThan(64);
    const want = await full.adapterGradients({ sequences }, dlogp);
    for (const [label, policy] of [
      ['one shot', scored],
      ['chunks of 64', chunked],
    ] as const) {
      const got = await policy.adapterGradients({ sequences, scoredFrom }, dlogp);
      for (const [b, lp] of got.logp.entries())
        for (const [t, v] of lp.entries())
          if (t >= scoredFrom[b]!)
            expect(Math.abs(v - (want.logp[b]![t] as number)), `${label} ${b} ${t}`).toBeLessThan(
              1e-6,
            );
          else expect(v, `${label}: an unscored position reads 0`).toBe(0);
      for (const [key, pair] of want.grads)
        for (const part of ['A', 'B'] as const) {
          const big = Math.max(...[...pair[part]].map(Math.abs));
          expect(big).toBeGreaterThan(0);
          for (const [i, v] of pair[part].entries())
            expect(
              Math.abs(v - (got.grads.get(key)![part][i] as number)),
              `${label} ${key}`,
            ).toBeLessThan(1e-5 * big);
        }
    }
    // A step in micro-batches (scoredFrom split with the sequences) takes the one-batch step.
    const lossFn = (logp: Float32Array[]) => ({
      loss: logp.reduce(
        (sum, lp, b) => sum + lp.reduce((s2, v, t) => s2 + v * dlogp[b]![t]!, 0),
        0,
      ),
      dlogp,
    });
    const one = await scored.step({ sequences, scoredFrom }, lossFn, { lr: 1e-2 });
    const split = await chunked.step({ sequences, scoredFrom }, lossFn, { lr: 1e-2 }, 48);
    expect([one.microBatches, split.microBatches]).toEqual([1, 4]);
    expect(Math.abs(split.loss - one.loss)).toBeLessThan(1e-5 * Math.max(1, Math.abs(one.loss)));
    expect(Math.abs(split.gradNorm - one.gradNorm)).toBeLessThan(1e-5 * one.gradNorm);
    for (const p of [full, scored, chunked]) p.free();
  }, 240_000);

  it('GRPO groups that share a prompt run it once (packed rows): the log-probs and gradients of each sequence alone, in one shot and in micro-batches', async (ctx) => {
    const rt = needRuntime(h, ctx);
    const { config, alone, packed, split } = qwen2Policies(rt, ['alone', 'packed', 'split'], {
      baseSeed: 44,
      adapterSeed: 10,
      contextLength: 16,
    });
    // Three prompts (6, 9 and 4 tokens), four completions each (1–6 tokens), interleaved as a
    // GRPO batch need not be; one more sequence alone.
    const rng = new Rng(12);
    const tokens = (n: number) => Array.from({ length: n }, () => rng.int(0, config.vocabSize - 1));
    const prompts = [tokens(6), tokens(9), tokens(4)];
    const sequences: number[][] = [];
    const scoredFrom: number[] = [];
    for (let j = 0; j < 4; j++)
      for (const prompt of prompts) {
        sequences.push([...prompt, ...tokens(1 + ((j * 5 + prompt.length) % 6))]);
        scoredFrom.push(prompt.length - 1);
      }
    sequences.push(tokens(7));
    scoredFrom.push(3);
    const batch = { sequences, scoredFrom };
    expect(packBatch(batch).map((p) => p.B)).toEqual([4]);
    const dlogp = sequences.map((q, b) =>
      Array.from({ length: q.length - 1 }, (_, t) =>
        t >= (scoredFrom[b] as number) ? Math.cos(2 * b + t) : 0,
      ),
    );
    const want = await alone.adapterGradients({ sequences }, dlogp);
    const got = await packed.adapterGradients(batch, dlogp);
    for (const [b, lp] of got.logp.entries())
      for (const [t, v] of lp.entries())
        if (t >= scoredFrom[b]!)
          expect(Math.abs(v - want.logp[b]![t]!), `${b} ${t}`).toBeLessThan(1e-6);
        else expect(v).toBe(0);
    for (const [key, pair] of want.grads)
      for (const part of ['A', 'B'] as const) {
        const big = Math.max(...[...pair[part]].map(Math.abs));
        expect(big).toBeGreaterThan(0);
        for (const [i, v] of pair[part].entries())
          expect(Math.abs(v - got.grads.get(key)![part][i]!), key).toBeLessThan(1e-5 * big);
      }
    // The step in micro-batches of whole rows (a row of 20+ positions each) takes the one-shot's.
    const lossFn = (logp: Float32Array[]) => ({
      loss: logp.reduce(
        (sum, lp, b) => sum + lp.reduce((s2, v, t) => s2 + v * dlogp[b]![t]!, 0),
        0,
      ),
      dlogp,
    });
    const one = await packed.step(batch, lossFn, { lr: 1e-2 });
    const parts = await split.step(batch, lossFn, { lr: 1e-2 }, 40);
    expect([one.microBatches, parts.microBatches]).toEqual([1, packBatch(batch, 40).length]);
    expect(parts.microBatches).toBeGreaterThan(1);
    expect(Math.abs(parts.loss - one.loss)).toBeLessThan(1e-5 * Math.max(1, Math.abs(one.loss)));
    expect(Math.abs(parts.gradNorm - one.gradNorm)).toBeLessThan(1e-5 * one.gradNorm);
    for (const p of [alone, packed, split]) p.free();
  }, 240_000);

  it('Llama-like (F16, untied, GQA 4:1): prefill and decode with the adapters attached equal the merged float64 forward; detach returns the base', async (ctx) => {
    const rt = needRuntime(h, ctx);
    const config = llamaConfig({
      numHeads: 8,
      numKvHeads: 2,
      headDim: 4,
      tieWordEmbeddings: false,
    });
    const base = randomLlama(config, 'F16', 8);
    const model = new DeviceTransformer(rt, llamaTransformerConfig(config), base, {
      contextLength: 8,
    });
    const policy = new DevicePolicy(rt, model, {
      rank: 3,
      alpha: 6,
      targets: LORA_TARGETS,
      rslora: true,
    });
    const adapters = randomAdapters(policy, 9);
    policy.importAdapters(adapters);
    const withLora = merged(base, adapters, policy.scale, 3);
    const ids = [4, 90, 2, 33, 7];
    const close = (got: Float32Array, want: Float64Array) => {
      let err = 0;
      let top = 0;
      want.forEach((v, i) => {
        err = Math.max(err, Math.abs((got[i] as number) - v));
        top = Math.max(top, Math.abs(v));
      });
      return err / top;
    };
    await model.prefill(ids.slice(0, 3)); // the base's decode program, built before attach
    policy.attach();
    const [want] = llamaReferenceLogits(config, withLora, ids.slice(0, 3));
    expect(close(await model.prefill(ids.slice(0, 3)), want as Float64Array)).toBeLessThan(1e-4);
    for (let t = 3; t < ids.length; t++) {
      const [ref] = llamaReferenceLogits(config, withLora, ids.slice(0, t + 1));
      expect(close(await model.step(ids[t] as number), ref as Float64Array)).toBeLessThan(1e-4);
    }
    policy.detach();
    const [plain] = llamaReferenceLogits(config, base, ids.slice(0, 2));
    expect(close(await model.prefill(ids.slice(0, 2)), plain as Float64Array)).toBeLessThan(1e-4);
    policy.free();
  });

  it('Qwen3-like (BF16, q/k norms, RoPE, GQA 2:1): the base with its adapter merged (mergeLora into an f32 copy, as a LoRA role samples) decodes each layer in one dispatch to the merged float64 forward', async (ctx) => {
    const rt = needRuntime(h, ctx);
    const config = llamaConfig({ modelType: 'qwen3', qkNorm: true, headDim: 16, numHeads: 4 });
    const base = randomLlama(config, 'BF16', 11);
    const frozen = new DeviceTransformer(rt, llamaTransformerConfig(config), base, {
      contextLength: 8,
    });
    const policy = new DevicePolicy(rt, frozen, { rank: 2, alpha: 5, targets: LORA_TARGETS });
    const adapters = randomAdapters(policy, 12);
    const copy = new Map(base);
    for (const [key, { A, B }] of adapters) {
      const [l, t] = key.split('.') as [string, LoraTarget];
      const name = weightName(Number(l), t);
      const w = base.get(name) as WeightTensor;
      const [out, inn] = w.shape as [number, number];
      const data = Float32Array.from(decoded(w));
      mergeLora(data, inn, out, A, B, 2, policy.scale, 'out-in');
      copy.set(name, { dtype: 'F32', shape: w.shape, data });
    }
    const model = new DeviceTransformer(rt, llamaTransformerConfig(config), copy, {
      contextLength: 8,
      trainable: true,
      decodeThreads: 16,
    });
    expect(model.decodesFused).toBe(true);
    const withLora = merged(base, adapters, policy.scale, 2);
    const ids = [4, 90, 2, 33, 7, 61];
    const [want] = llamaReferenceLogits(config, withLora, ids.slice(0, 3));
    expect(relativeToLargest(await model.prefill(ids.slice(0, 3)), want!)).toBeLessThan(1e-4);
    for (let t = 3; t < ids.length; t++) {
      const [ref] = llamaReferenceLogits(config, withLora, ids.slice(0, t + 1));
      expect(
        relativeToLargest(await model.step(ids[t] as number), ref!),
        `position ${t}`,
      ).toBeLessThan(1e-4);
    }
    policy.free();
  });

  it('refuses in words: a missing adapter, a wrong shape, a bad target, a short batch', async (ctx) => {
    const rt = needRuntime(h, ctx);
    const config = llamaConfig({});
    const model = new DeviceTransformer(
      rt,
      llamaTransformerConfig(config),
      randomLlama(config, 'BF16', 2),
      { contextLength: 4 },
    );
    const lora = { rank: 2, alpha: 4, targets: ['q_proj', 'v_proj'] as LoraTarget[] };
    const policy = new DevicePolicy(rt, model, lora);
    const adapters = await policy.exportAdapters();
    expect([...adapters.keys()]).toEqual(['0.q_proj', '0.v_proj', '1.q_proj', '1.v_proj']);
    expect(adapters.get(adapterKey(0, 'v_proj'))?.B.every((v) => v === 0)).toBe(true);
    const missing = new Map(adapters);
    missing.delete('1.v_proj');
    expect(() => policy.importAdapters(missing)).toThrow('no LoRA adapter for layer 1 v_proj');
    const wrong = new Map(adapters);
    wrong.set('0.q_proj', { A: new Float32Array(3), B: new Float32Array(64) });
    expect(() => policy.importAdapters(wrong)).toThrow('expected [2, 32] and [32, 2]');
    expect(
      () => new DevicePolicy(rt, model, { ...lora, targets: ['c_attn' as LoraTarget] }),
    ).toThrow('LoRA target c_attn is not one of');
    await expect(policy.logProbs({ sequences: [[1]] })).rejects.toThrow('at least 2 tokens');
    await expect(policy.logProbs({ sequences: [[1, 2, 3, 4, 5]] })).rejects.toThrow(
      'exceeds the context of 4',
    );
    await expect(policy.adapterGradients({ sequences: [[1, 2, 3]] }, [[1]])).rejects.toThrow(
      'dlogp of sequence 0 must hold 2 values',
    );
    policy.free();
  });
});
