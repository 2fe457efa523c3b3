// The self-check's entries for the one model's switches beyond the start's (the start checks
// what the lab's GPT-2 trained in full runs: LayerNorm, GELU in fc's epilogue, learned
// positions, f32 weights, its attention, decode and update). Each says which configs need it:
// RMSNorm and its backward (norm 'rmsnorm'), per head (qkNorm: Qwen3's q/k norm), RoPE and its
// inverse (positions 'rope'), SwiGLU (mlp 'swiglu'), GELU on its own (mlp 'gelu' under an
// adapter: fc's adapter adds to the pre-activation first), a decode layer in one dispatch with
// those switches (decode_layer.wgsl). Every model under an adapter (a frozen base) needs the
// 16-bit-weight matmul (F16, BF16) and its transpose (v6_b16t, the backward's input
// gradients), the embedding's lookup (a 16-bit table in row ranges, learned positions added),
// grouped-query attention (forward, backward, cache store + decode) at both builds' head sizes
// and at its own, LoRA's B side (lora.wgsl), and the sampler's draw and feed (decode.wgsl's
// pick, feed). A full-parameter run never reaches them, so its start does not pay for them:
// kernelEngine.ts' engineFor runs those a config needs when a role of it first reaches the
// engine, once per engine, and deviceCalls.ts before `model logits --backend kernels`. Fixed
// odd sizes, off every workgroup.

import { ropeInverseFrequencies, ropeTable } from '../../../model/families/rope';
import { f32ToHalf, type HalfDtype, halfToF32 } from '../../../model/halfFloat';
import type { TransformerConfig } from '../../../model/transformerConfig';
import { pickToken } from '../../../rollout/pick';
import { Rng } from '../../../tasks/random';
import {
  attentionBackwardRef,
  attentionDecodeRef,
  attentionRef,
  geluGradRef,
  geluRef,
  loraBSideRef,
  matmulRef,
  rmsNormBackwardRef,
  rmsNormRef,
  ropeRef,
  swigluBackwardRef,
  swigluRef,
} from '../../kernels/referenceOps';
import { initialRowStates, pickSpec, rowStreamState } from '../deviceDraw';
import * as op from '../ops';
import { type GpuRuntime, uniforms } from '../runtime';
import { SELF_CHECK_SEED } from './index';
import { type KernelCheck, packedRows, randoms } from './registry';
import { runChecks } from './run';
import type { CheckResult } from './types';

const TOL = { atol: 1e-4, rtol: 1e-3 };

type Arrays = { x: Float32Array; w: Float32Array; dy: Float32Array; R: number; D: number };

const rmsnormCheck: KernelCheck<Arrays> = {
  name: 'rmsnorm/forward+backward',
  indispensable: false,
  tolerance: TOL,
  sized: false,
  inputs: (_s, rng) => ({
    x: randoms(rng, 70 * 100, 3),
    w: randoms(rng, 100).map((v) => 1 + v / 2),
    dy: randoms(rng, 70 * 100),
    R: 70,
    D: 100,
  }),
  async gpu(ctx, i) {
    const [X, Wb, DY] = [i.x, i.w, i.dy].map((t) => ctx.upload(t)) as GPUBuffer[];
    const y = ctx.buffer(i.R * i.D);
    const rstd = ctx.buffer(i.R);
    const dx = ctx.buffer(i.R * i.D);
    const dw = ctx.buffer(i.D);
    await ctx.run([
      op.rmsNormForward(X!, Wb!, y, rstd, i.R, i.D, 1e-6, ctx.rt.dummy),
      ...op.rmsNormBackward(X!, Wb!, DY!, rstd, dx, dw, i.R, i.D, false),
    ]);
    return {
      y: await ctx.read(y, i.R * i.D),
      dx: await ctx.read(dx, i.R * i.D),
      dw: await ctx.read(dw, i.D),
    };
  },
  reference(i) {
    const b = rmsNormBackwardRef(i.x, i.w, i.dy, i.R, i.D, 1e-6);
    return { y: rmsNormRef(i.x, i.w, i.R, i.D, 1e-6).y, dx: b.dx, dw: b.dw };
  },
};

/**
 * Qwen3's q/k norm: RMSNorm over each head of the q|k|v rows, in place (rows W apart), and its
 * backward over the same layout (each head's dx from the pre-norm rows; the q and k weights'
 * gradients summed over rows and heads, as a model trained in full takes them).
 */
const QK = { R: 9, H: 6, kvH: 2, hd: 12 };
const QK_W = (QK.H + 2 * QK.kvH) * QK.hd;

type QkInputs = { qkv: Float32Array; dy: Float32Array; wq: Float32Array; wk: Float32Array };

const qkNormCheck: KernelCheck<QkInputs> = {
  name: 'rmsnorm/per-head (q/k norm)',
  indispensable: false,
  tolerance: TOL,
  sized: false,
  inputs: (_s, rng) => ({
    qkv: randoms(rng, QK.R * QK_W, 3),
    dy: randoms(rng, QK.R * QK_W),
    wq: randoms(rng, QK.hd).map((v) => 1 + v / 2),
    wk: randoms(rng, QK.hd).map((v) => 1 + v / 2),
  }),
  async gpu(ctx, i) {
    const [qkv, pre, dy, wq, wk] = [i.qkv, i.qkv, i.dy, i.wq, i.wk].map((t) =>
      ctx.upload(t),
    ) as GPUBuffer[];
    const { R, H, kvH, hd } = QK;
    const [qRstd, kRstd] = [ctx.buffer(R * H), ctx.buffer(R * kvH)];
    const [dx, dwq, dwk] = [ctx.buffer(R * QK_W), ctx.buffer(hd), ctx.buffer(hd)];
    const q = { group: H, stride: QK_W };
    const k = { group: kvH, stride: QK_W, off: H * hd };
    await ctx.run([
      op.rmsNormForward(null, wq!, qkv!, qRstd, R * H, hd, 1e-6, ctx.rt.dummy, q),
      op.rmsNormForward(null, wk!, qkv!, kRstd, R * kvH, hd, 1e-6, ctx.rt.dummy, k),
      ...op.rmsNormBackward(pre!, wq!, dy!, qRstd, dx, dwq, R * H, hd, false, q),
      ...op.rmsNormBackward(pre!, wk!, dy!, kRstd, dx, dwk, R * kvH, hd, false, k),
    ]);
    return {
      qkv: await ctx.read(qkv!, R * QK_W),
      dx: await ctx.read(dx, R * QK_W),
      dwq: await ctx.read(dwq, hd),
      dwk: await ctx.read(dwk, hd),
    };
  },
  reference(i) {
    const { R, H, kvH, hd } = QK;
    const out = Float64Array.from(i.qkv);
    const dx = new Float64Array(R * QK_W);
    const [dwq, dwk] = [new Float64Array(hd), new Float64Array(hd)];
    for (let r = 0; r < R; r++)
      for (let h = 0; h < H + kvH; h++) {
        const at = r * QK_W + h * hd;
        const x = i.qkv.subarray(at, at + hd);
        const w = h < H ? i.wq : i.wk;
        out.set(rmsNormRef(x, w, 1, hd, 1e-6).y, at);
        const b = rmsNormBackwardRef(x, w, i.dy.subarray(at, at + hd), 1, hd, 1e-6);
        dx.set(b.dx, at);
        const dw = h < H ? dwq : dwk;
        b.dw.forEach((g, j) => {
          dw[j] = (dw[j] as number) + g;
        });
      }
    return { qkv: out, dx, dwq, dwk };
  },
};

const ROPE = { R: 13, T: 13, H: 6, kvH: 2, hd: 12, start: 5, theta: 10000 };

const ropeCheck: KernelCheck<{ qkv: Float32Array }> = {
  name: 'rope/forward+inverse',
  indispensable: false,
  tolerance: TOL,
  sized: false,
  inputs: (_s, rng) => ({ qkv: randoms(rng, ROPE.R * (ROPE.H + 2 * ROPE.kvH) * ROPE.hd, 2) }),
  async gpu(ctx, i) {
    const n = i.qkv.length;
    const table = ctx.upload(
      ropeTable(
        ROPE.start + ROPE.T,
        ropeInverseFrequencies({ headDim: ROPE.hd, ropeTheta: ROPE.theta }),
      ),
    );
    const fwd = ctx.upload(i.qkv);
    const inv = ctx.upload(i.qkv);
    await ctx.run([
      op.rope(ROPE, table, fwd, ROPE.start, ctx.rt.dummy),
      op.rope(ROPE, table, inv, ROPE.start, ctx.rt.dummy, true),
    ]);
    return { forward: await ctx.read(fwd, n), inverse: await ctx.read(inv, n) };
  },
  reference(i) {
    const pos = (r: number) => ROPE.start + (r % ROPE.T);
    const args = [i.qkv, ROPE.R, ROPE.H, ROPE.kvH, ROPE.hd, ROPE.theta, pos] as const;
    return { forward: ropeRef(...args), inverse: ropeRef(...args, true) };
  },
};

const swigluCheck: KernelCheck<{ gu: Float32Array; dh: Float32Array; R: number; I: number }> = {
  name: 'swiglu/forward+backward',
  indispensable: false,
  tolerance: TOL,
  sized: false,
  inputs: (_s, rng) => ({
    gu: randoms(rng, 37 * 2 * 76, 6),
    dh: randoms(rng, 37 * 76),
    R: 37,
    I: 76,
  }),
  async gpu(ctx, i) {
    const GU = ctx.upload(i.gu);
    const h = ctx.buffer(i.R * i.I);
    const dgu = ctx.buffer(i.R * 2 * i.I);
    await ctx.run([
      op.swigluForward(GU, h, i.R, i.I),
      op.swigluBackward(GU, ctx.upload(i.dh), dgu, i.R, i.I),
    ]);
    return { h: await ctx.read(h, i.R * i.I), dgu: await ctx.read(dgu, i.R * 2 * i.I) };
  },
  reference: (i) => ({
    h: swigluRef(i.gu, i.R, i.I),
    dgu: swigluBackwardRef(i.gu, i.dh, i.R, i.I),
  }),
};

/** gelu.wgsl: GPT-2's GELU on its own (a LoRA adapter on fc adds before it) and its backward. */
const geluCheck: KernelCheck<{ pre: Float32Array; dh: Float32Array }> = {
  name: 'gelu/forward+backward',
  indispensable: false,
  tolerance: TOL,
  sized: false,
  inputs: (_s, rng) => ({ pre: randoms(rng, 4 * 75, 3), dh: randoms(rng, 4 * 75) }),
  async gpu(ctx, i) {
    const n = i.pre.length;
    const PRE = ctx.upload(i.pre);
    const h = ctx.buffer(n);
    const dpre = ctx.buffer(n);
    await ctx.run([op.geluForward(PRE, h, n), op.geluBackward(PRE, ctx.upload(i.dh), dpre, n)]);
    return { h: await ctx.read(h, n), dpre: await ctx.read(dpre, n) };
  },
  reference: (i) => ({
    h: Float64Array.from(i.pre, (x) => geluRef(x)),
    dpre: Float64Array.from(i.pre, (x, k) => (i.dh[k] as number) * geluGradRef(x)),
  }),
};

const EMB = { V: 23, D: 20, C: 12, B: 3, T: 3, split: 12 };

/**
 * embedding.wgsl's lookup: the tokens' rows of a table split in two row ranges (BF16, as a large
 * vocabulary is held), then learned positions added from each sequence's first position (GPT-2's
 * wpe, F32): x[b·T + t] = E[ids] + P[start_b + t].
 */
const embeddingCheck: KernelCheck<{
  e: Uint16Array;
  p: Float32Array;
  ids: Uint32Array;
  starts: Uint32Array;
}> = {
  name: 'embedding/lookup (+ learned positions)',
  indispensable: false,
  tolerance: { atol: 0, rtol: 0 },
  sized: false,
  inputs: (_s, rng) => ({
    e: Uint16Array.from(randoms(rng, EMB.V * EMB.D, 2), (v) => f32ToHalf('BF16', v)),
    p: randoms(rng, EMB.C * EMB.D),
    ids: Uint32Array.from({ length: EMB.B * EMB.T }, () => Math.floor(rng.next() * EMB.V)),
    starts: Uint32Array.from([0, 5, EMB.C - EMB.T]),
  }),
  async gpu(ctx, i) {
    const { V, D, C, B, T, split } = EMB;
    const R = B * T;
    const half = (from: number, to: number) =>
      ctx.upload(new Float32Array(Uint16Array.from(i.e.subarray(from * D, to * D)).buffer));
    const x = ctx.buffer(R * D);
    const ids = ctx.upload(i.ids);
    await ctx.run([
      op.embeddingLookup(ids, half(0, split), x, R, D, 'BF16', 0, split),
      op.embeddingLookup(ids, half(split, V), x, R, D, 'BF16', split, V),
      op.embeddingLookup(ctx.upload(i.starts), ctx.upload(i.p), x, R, D, 'F32', 0, C, {
        add: true,
        fromStarts: T,
      }),
    ]);
    return { x: await ctx.read(x, R * D) };
  },
  reference: (i) => {
    const { D, B, T } = EMB;
    const x = new Float64Array(B * T * D);
    for (let r = 0; r < B * T; r++) {
      const position = (i.starts[Math.floor(r / T)] as number) + (r % T);
      for (let c = 0; c < D; c++)
        x[r * D + c] = Math.fround(
          halfToF32('BF16', i.e[(i.ids[r] as number) * D + c] as number) +
            (i.p[position * D + c] as number),
        );
    }
    return { x };
  },
};

/**
 * Heads of 16 run attention.wgsl's _h16 versions (the test checkpoints'); heads of 64 its general
 * passes (Qwen2.5's, Llama 3.2's): each is checked.
 */
const HEAD_SIZES = [16, 64] as const;
const headsOf = (hd: number) => (hd === 16 ? '' : ` (heads of ${hd})`);

/** Grouped-query attention; `packed`: rows that share a prompt (the update's GRPO groups). */
const gqaCheck = (
  packed: boolean,
  hd: number,
): KernelCheck<{ qkv: Float32Array; dy: Float32Array; segments?: Uint32Array }> => {
  const GQA = { B: 2, T: 13, H: 6, kvH: 2, hd };
  const W = (GQA.H + 2 * GQA.kvH) * GQA.hd;
  return {
    name: `${packed ? 'attention/gqa (packed rows: shared prompts)' : 'attention/gqa'}${headsOf(hd)}`,
    indispensable: false,
    tolerance: TOL,
    sized: false,
    inputs: (_s, rng) => ({
      qkv: randoms(rng, GQA.B * GQA.T * W, 2),
      dy: randoms(rng, GQA.B * GQA.T * GQA.H * GQA.hd),
      ...(packed ? { segments: packedRows(GQA.B, GQA.T).segments } : {}),
    }),
    async gpu(ctx, i) {
      const { B, T, H } = GQA;
      const QKV = ctx.upload(i.qkv);
      const y = ctx.buffer(B * T * H * GQA.hd);
      const lse = ctx.buffer(B * H * T);
      const dqkv = ctx.buffer(B * T * W);
      const seg = i.segments ? ctx.upload(i.segments) : undefined;
      await ctx.run([
        op.attentionForward(GQA, QKV, y, lse, seg),
        ...op.attentionBackward(
          GQA,
          QKV,
          y,
          ctx.upload(i.dy),
          lse,
          dqkv,
          ctx.buffer(B * H * T),
          seg,
        ),
      ]);
      return { y: await ctx.read(y, B * T * H * GQA.hd), dqkv: await ctx.read(dqkv, B * T * W) };
    },
    reference: (i) => ({
      y: attentionRef(i.qkv, GQA.B, GQA.T, GQA.H, GQA.hd, GQA.kvH, i.segments).y,
      dqkv: attentionBackwardRef(i.qkv, i.dy, GQA.B, GQA.T, GQA.H, GQA.hd, GQA.kvH, i.segments),
    }),
  };
};

const gqaDecodeCheck = (
  hd: number,
): KernelCheck<{ qkv: Float32Array; k: Float32Array; v: Float32Array }> => {
  const DEC = { B: 3, H: 6, kvH: 2, hd, C: 11, pos: [0, 10, 4] };
  return {
    name: `attention/gqa_decode${headsOf(hd)}`,
    indispensable: false,
    tolerance: TOL,
    sized: false,
    inputs: (_s, rng) => {
      const KD = DEC.kvH * DEC.hd;
      const n = DEC.B * DEC.C * KD;
      return {
        qkv: randoms(rng, DEC.B * (DEC.H + 2 * DEC.kvH) * DEC.hd, 2),
        k: randoms(rng, n, 2),
        v: randoms(rng, n),
      };
    },
    async gpu(ctx, i) {
      const { B, H, kvH, hd, C } = DEC;
      const Wd = (H + 2 * kvH) * hd;
      const QKV = ctx.upload(i.qkv);
      const K = ctx.upload(i.k);
      const V = ctx.upload(i.v);
      const y = ctx.buffer(B * H * hd);
      const pos = Uint32Array.from(DEC.pos);
      await ctx.run([
        op.attentionCacheStore({ B, T: 1, H, hd, kvH }, C, QKV, ctx.upload(pos), K, V),
        op.attentionDecode(B, H, hd, C, QKV, K, V, ctx.upload(pos.map((p) => p + 1)), y, {
          kvH,
          qStride: Wd,
        }),
      ]);
      return { y: await ctx.read(y, B * H * hd) };
    },
    reference(i) {
      const { B, H, kvH, hd, C } = DEC;
      const Wd = (H + 2 * kvH) * hd;
      const KD = kvH * hd;
      const k = Float64Array.from(i.k);
      const v = Float64Array.from(i.v);
      DEC.pos.forEach((p, b) => {
        for (let j = 0; j < KD; j++) {
          k[(b * C + p) * KD + j] = i.qkv[b * Wd + H * hd + j] ?? 0;
          v[(b * C + p) * KD + j] = i.qkv[b * Wd + H * hd + KD + j] ?? 0;
        }
      });
      const q = Float64Array.from({ length: B * H * hd }, (_, e) => {
        const b = Math.floor(e / (H * hd));
        return i.qkv[b * Wd + (e % (H * hd))] ?? 0;
      });
      const lens = DEC.pos.map((p) => p + 1);
      return { y: attentionDecodeRef(q, k, v, lens, B, H, hd, C, kvH) };
    },
  };
};

const MM = { M: 19, N: 70, K: 64 };

function matmul16Check(
  dtype: HalfDtype,
): KernelCheck<{ a: Float32Array; bits: Uint16Array; bias: Float32Array }> {
  return {
    name: `matmul/v5_b16_${dtype.toLowerCase()}`,
    indispensable: false,
    tolerance: TOL,
    sized: false,
    inputs: (_s, rng) => ({
      a: randoms(rng, MM.M * MM.K),
      bits: Uint16Array.from(randoms(rng, MM.N * MM.K, 0.5), (v) => f32ToHalf(dtype, v)),
      bias: randoms(rng, MM.N),
    }),
    async gpu(ctx, i) {
      const cs = Math.ceil(MM.N / 4) * 4;
      const c = ctx.buffer(MM.M * cs);
      const words = new Uint32Array(i.bits.buffer, i.bits.byteOffset, i.bits.length / 2);
      await ctx.run([
        op.matmul16({
          ...MM,
          a: ctx.upload(i.a),
          w: ctx.upload(words),
          dtype,
          bias: ctx.upload(i.bias),
          c,
          dummy: ctx.rt.dummy,
        }),
      ]);
      const all = await ctx.read(c, MM.M * cs);
      const out = new Float32Array(MM.M * MM.N);
      for (let r = 0; r < MM.M; r++) out.set(all.subarray(r * cs, r * cs + MM.N), r * MM.N);
      return { c: out };
    },
    reference(i) {
      const { M, N, K } = MM;
      const b = Float64Array.from({ length: K * N }, (_, e) =>
        halfToF32(dtype, i.bits[(e % N) * K + Math.floor(e / N)] ?? 0),
      );
      return { c: matmulRef(i.a, b, M, N, K, { bias: i.bias }) };
    },
  };
}

const MT = { M: 7, N: 36, K: 101 };

/** v6_b16t: C = A·W through a 16-bit W [K, N] (the backward's input gradients), K not ×4. */
function matmul16TCheck(dtype: HalfDtype): KernelCheck<{ a: Float32Array; bits: Uint16Array }> {
  const aStride = Math.ceil(MT.K / 4) * 4;
  return {
    name: `matmul/v6_b16t_${dtype.toLowerCase()}`,
    indispensable: false,
    tolerance: TOL,
    sized: false,
    inputs: (_s, rng) => ({
      a: randoms(rng, MT.M * aStride),
      bits: Uint16Array.from(randoms(rng, MT.K * MT.N, 0.5), (v) => f32ToHalf(dtype, v)),
    }),
    async gpu(ctx, i) {
      const c = ctx.buffer(MT.M * MT.N);
      const words = new Uint32Array(i.bits.buffer, i.bits.byteOffset, i.bits.length / 2);
      await ctx.run([
        op.matmul16T({
          ...MT,
          a: ctx.upload(i.a),
          aStride,
          w: ctx.upload(words),
          dtype,
          c,
          dummy: ctx.rt.dummy,
        }),
      ]);
      return { c: await ctx.read(c, MT.M * MT.N) };
    },
    reference(i) {
      const a = Float64Array.from({ length: MT.M * MT.K }, (_, e) =>
        Number(i.a[Math.floor(e / MT.K) * aStride + (e % MT.K)]),
      );
      const w = Float64Array.from(i.bits, (b) => halfToF32(dtype, b));
      return { c: matmulRef(a, w, MT.M, MT.N, MT.K) };
    },
  };
}

/** A q|k|v site of three adapters, columns with a gap (as when k is not adapted, the rest not). */
const LR = {
  M: 9,
  r: 3,
  rowStride: 29,
  scale: 0.75,
  segments: [
    { offset: 2, width: 5 },
    { offset: 9, width: 3 },
    { offset: 20, width: 6 },
  ],
};
const LR_N = LR.segments.reduce((n, s) => n + s.width, 0);
const LR_NR = LR.segments.length * LR.r;

/** lora.wgsl's up, grad_u and grad_b over a site's column segments inside wider rows. */
const loraCheck: KernelCheck<{ u: Float32Array; b: Float32Array; dy: Float32Array }> = {
  name: 'lora/up+grads',
  indispensable: false,
  tolerance: TOL,
  sized: false,
  inputs: (_s, rng) => ({
    u: randoms(rng, LR.M * LR_NR),
    b: randoms(rng, LR_N * LR.r),
    dy: randoms(rng, LR.M * LR.rowStride),
  }),
  async gpu(ctx, i) {
    const [U, Bb, DY] = [i.u, i.b, i.dy].map((t) => ctx.upload(t)) as GPUBuffer[];
    const [y, du, db] = [
      ctx.buffer(LR.M * LR.rowStride),
      ctx.buffer(LR.M * LR_NR),
      ctx.buffer(LR_N * LR.r),
    ];
    await ctx.run([
      op.loraUp(LR, U!, Bb!, y, false),
      op.loraGradU(LR, DY!, Bb!, du),
      op.loraGradB(LR, DY!, U!, db, false),
    ]);
    return {
      y: await ctx.read(y, LR.M * LR.rowStride),
      du: await ctx.read(du, LR.M * LR_NR),
      db: await ctx.read(db, LR_N * LR.r),
    };
  },
  reference: (i) => loraBSideRef(LR, i.u, i.b, i.dy),
};

/** decode.wgsl's pick over a padded head's rows (the Llama sampler's draw), then its feed. */
const PK = { B: 6, V: 301, stride: 304, lastPos: 40, maxNew: 4, seed: 77 };

const pickCheck: KernelCheck<{ logits: Float32Array; temperature: number; topK: number }> = {
  name: 'decode/pick+feed',
  indispensable: false,
  tolerance: TOL,
  sized: false,
  // Half the time a top-k draw, at a random temperature; scaled so a few tokens dominate.
  inputs: (_s, rng) => ({
    logits: randoms(rng, PK.B * PK.stride, 6),
    temperature: 0.5 + rng.next(),
    topK: rng.next() < 0.5 ? 0 : 1 + rng.below(20),
  }),
  async gpu(ctx, i) {
    // Rows: 0–3 live at positions 5 + b; row 4 done already; row 5 at the last position.
    const prompts = Array.from({ length: PK.B }, (_, b) => Array.from({ length: 6 + b }, () => b));
    prompts[5] = Array.from({ length: PK.lastPos + 1 }, () => 5);
    const init = initialRowStates(
      prompts,
      prompts.map((_, b) => b),
      PK.seed,
      (p) => (p.length === 10 ? 0 : PK.maxNew),
    );
    const state = ctx.upload(init);
    const logits = ctx.upload(i.logits);
    const out = ctx.buffer(2 * PK.B * PK.maxNew);
    const fed = [ctx.buffer(PK.B), ctx.buffer(PK.B), ctx.buffer(PK.B)] as const;
    const options = { maxNewTokens: PK.maxNew, temperature: i.temperature, topK: i.topK };
    await ctx.run([
      pickSpec({
        B: PK.B,
        vocabSize: PK.V,
        stride: PK.stride,
        lastPos: PK.lastPos,
        maxNew: PK.maxNew,
        options: { ...options, seed: PK.seed, stopId: 0xffffffff },
        threads: ctx.software ? 16 : 64,
        state,
        logits,
        out,
        unused: ctx.rt.dummy.r,
      }),
      {
        shader: 'decode.wgsl',
        entry: 'feed',
        bindings: [['r', state], ...fed.map((b) => ['w', b] as ['w', GPUBuffer])],
        uniforms: uniforms([
          ['u', PK.B],
          ['u', 0],
          ['u', 0],
          ['u', 0],
        ]),
        workgroups: [1],
      },
    ]);
    const o = new Uint32Array((await ctx.read(out, 2 * PK.B * PK.maxNew)).buffer);
    const words = async (b: GPUBuffer) =>
      Float32Array.from(new Uint32Array((await ctx.read(b, PK.B)).buffer));
    return {
      token: Float32Array.from({ length: PK.B }, (_, b) => o[b * PK.maxNew] ?? 0),
      logProb: Float32Array.from({ length: PK.B }, (_, b) =>
        b === 4 ? 0 : (new Float32Array(o.buffer)[PK.B * PK.maxNew + b * PK.maxNew] ?? 0),
      ),
      ids: await words(fed[0]),
      pos: await words(fed[1]),
      lens: await words(fed[2]),
    };
  },
  reference(i) {
    const token = new Float64Array(PK.B);
    const logProb = new Float64Array(PK.B);
    const ids = new Float64Array(PK.B);
    const pos = new Float64Array(PK.B);
    for (let b = 0; b < PK.B; b++) {
      const at = b === 5 ? PK.lastPos : 5 + b;
      if (b === 4) {
        // Done before the draw: nothing written, the state as it was.
        ids[b] = b;
        pos[b] = at;
        continue;
      }
      const row = i.logits.subarray(b * PK.stride, b * PK.stride + PK.V);
      const pick = pickToken(row, i.temperature, i.topK, new Rng(rowStreamState(PK.seed, b)));
      token[b] = ids[b] = pick.id;
      logProb[b] = pick.logProb;
      pos[b] = at + 1;
    }
    return { token, logProb, ids, pos, lens: pos.map((p) => p + 1) };
  },
};

/**
 * decode_layer.wgsl with the Llama family's switches (RMSNorm, a q|k|v bias, Qwen3's q/k norm,
 * RoPE, grouped-query attention, SwiGLU): one layer for B rows at their own positions over
 * caches already holding the earlier positions; the rows, and the caches with each row's new
 * key and value. Weights [out, in] in one flat buffer at offsets ×4, as a trainable model's.
 */
const FL = { B: 5, D: 32, H: 4, kvH: 2, hd: 16, I: 24, C: 12, eps: 1e-6, theta: 10000 };
const FL_POS = [0, 3, 7, 11, 5];
const FL_W = (FL.H + 2 * FL.kvH) * FL.hd;
const FL_KV = FL.kvH * FL.hd;
/** The flat buffer's tensors in order, sizes ×4. */
const FL_PARTS = {
  ln1: FL.D,
  qkv: FL_W * FL.D,
  qkvBias: FL_W,
  qNorm: FL.hd,
  kNorm: FL.hd,
  o: FL.D * FL.H * FL.hd,
  ln2: FL.D,
  gateUp: 2 * FL.I * FL.D,
  down: FL.D * FL.I,
};
type FlPart = keyof typeof FL_PARTS;
const flOffsets = (() => {
  let at = 0;
  const offsets = {} as Record<FlPart, number>;
  for (const [name, n] of Object.entries(FL_PARTS)) {
    offsets[name as FlPart] = at;
    at += n;
  }
  return { offsets, size: at };
})();

type FusedInputs = { w: Float32Array; x: Float32Array; k: Float32Array; v: Float32Array };

const fusedLayerCheck: KernelCheck<FusedInputs> = {
  name: 'decode/fused layer (RMSNorm, RoPE, q/k norm, GQA, SwiGLU)',
  indispensable: false,
  tolerance: TOL,
  sized: false,
  inputs: (_s, rng) => {
    const w = randoms(rng, flOffsets.size, 0.3);
    // Norms' weights near 1.
    for (const norm of ['ln1', 'ln2', 'qNorm', 'kNorm'] as const)
      for (let j = 0; j < FL_PARTS[norm]; j++) w[flOffsets.offsets[norm] + j] = 1 + (w[j] ?? 0);
    const cache = FL.B * FL.C * FL_KV;
    return { w, x: randoms(rng, FL.B * FL.D), k: randoms(rng, cache), v: randoms(rng, cache) };
  },
  async gpu(ctx, i) {
    const o = flOffsets.offsets;
    const [w, x, k, v] = [i.w, i.x, i.k, i.v].map((t) => ctx.upload(t)) as GPUBuffer[];
    const inv = ropeInverseFrequencies({ headDim: FL.hd, ropeTheta: FL.theta });
    const table = ctx.upload(ropeTable(FL.C, inv));
    const pos = ctx.upload(Uint32Array.from(FL_POS));
    await ctx.run([
      op.decodeLayer(
        FL,
        {
          ln1: [o.ln1, 0],
          qkv: [o.qkv, o.qkvBias],
          o: [o.o, 0],
          ln2: [o.ln2, 0],
          up: [o.gateUp, 0],
          down: [o.down, 0],
          qkNorm: [o.qNorm, o.kNorm],
          layerNorm: false,
          swiglu: true,
          qkvBias: true,
          projBias: false,
          fcBias: false,
        },
        { weights: w!, x: x!, k: k!, v: v!, pos },
        table,
        ctx.software ? 16 : 64,
        ctx.rt.dummy,
      ),
    ]);
    const cache = FL.B * FL.C * FL_KV;
    return {
      x: await ctx.read(x!, FL.B * FL.D),
      k: await ctx.read(k!, cache),
      v: await ctx.read(v!, cache),
    };
  },
  reference(i) {
    const { B, D, H, kvH, hd, I, C, eps, theta } = FL;
    const o = flOffsets.offsets;
    const part = (name: FlPart) => i.w.subarray(o[name], o[name] + FL_PARTS[name]);
    // y[n] = Σ_k W[n, k]·x[k], W [N, K] (nn.Linear's layout).
    const linear = (W: ArrayLike<number>, x: ArrayLike<number>, N: number, K: number) =>
      Float64Array.from({ length: N }, (_, n) => {
        let s = 0;
        for (let j = 0; j < K; j++) s += (W[n * K + j] ?? 0) * (x[j] ?? 0);
        return s;
      });
    const k = Float64Array.from(i.k);
    const v = Float64Array.from(i.v);
    const x = Float64Array.from(i.x);
    for (let b = 0; b < B; b++) {
      const at = FL_POS[b] as number;
      const row = x.subarray(b * D, (b + 1) * D);
      const qkv = linear(part('qkv'), rmsNormRef(row, part('ln1'), 1, D, eps).y, FL_W, D);
      const bias = part('qkvBias');
      for (let n = 0; n < FL_W; n++) qkv[n] = (qkv[n] ?? 0) + (bias[n] ?? 0);
      for (let h = 0; h < H + kvH; h++) {
        const head = qkv.subarray(h * hd, (h + 1) * hd);
        head.set(rmsNormRef(head, part(h < H ? 'qNorm' : 'kNorm'), 1, hd, eps).y);
      }
      const rotated = ropeRef(qkv, 1, H, kvH, hd, theta, () => at);
      const cacheRow = (b * C + at) * FL_KV;
      k.set(rotated.subarray(H * hd, H * hd + FL_KV), cacheRow);
      v.set(rotated.subarray(H * hd + FL_KV), cacheRow);
      const attended = new Float64Array(H * hd);
      for (let h = 0; h < H; h++) {
        const kvHead = Math.floor(h / (H / kvH)) * hd;
        const scores = Array.from({ length: at + 1 }, (_, t) => {
          let s = 0;
          for (let d = 0; d < hd; d++)
            s += (rotated[h * hd + d] ?? 0) * (k[(b * C + t) * FL_KV + kvHead + d] ?? 0);
          return s / Math.sqrt(hd);
        });
        const top = Math.max(...scores);
        const e = scores.map((s) => Math.exp(s - top));
        const sum = e.reduce((a, c) => a + c, 0);
        for (let t = 0; t <= at; t++)
          for (let d = 0; d < hd; d++)
            attended[h * hd + d] =
              (attended[h * hd + d] ?? 0) +
              ((e[t] ?? 0) / sum) * (v[(b * C + t) * FL_KV + kvHead + d] ?? 0);
      }
      const mid = linear(part('o'), attended, D, H * hd).map((y, j) => y + (row[j] ?? 0));
      const gu = linear(part('gateUp'), rmsNormRef(mid, part('ln2'), 1, D, eps).y, 2 * I, D);
      const out = linear(part('down'), swigluRef(gu, 1, I), D, I);
      row.set(out.map((y, j) => y + (mid[j] ?? 0)));
    }
    return { x, k, v };
  },
};

const always = () => true;

/** Each check with the configs that need it (every one a model under an adapter, or frozen). */
const CONFIG_CHECKS: readonly { check: KernelCheck; needs: (c: TransformerConfig) => boolean }[] = [
  { check: rmsnormCheck, needs: (c) => c.norm === 'rmsnorm' },
  { check: qkNormCheck, needs: (c) => c.qkNorm },
  { check: ropeCheck, needs: (c) => c.positions === 'rope' },
  { check: swigluCheck, needs: (c) => c.mlp === 'swiglu' },
  ...HEAD_SIZES.flatMap((hd) =>
    [gqaCheck(false, hd), gqaCheck(true, hd), gqaDecodeCheck(hd)].map((check) => ({
      check: check as KernelCheck,
      needs: always,
    })),
  ),
  { check: embeddingCheck, needs: always },
  { check: geluCheck, needs: (c) => c.mlp === 'gelu' },
  ...[
    matmul16Check('F16'),
    matmul16Check('BF16'),
    matmul16TCheck('F16'),
    matmul16TCheck('BF16'),
  ].map((check) => ({ check: check as KernelCheck, needs: always })),
  { check: loraCheck, needs: always },
  { check: pickCheck, needs: always },
  {
    check: fusedLayerCheck,
    needs: (c) =>
      c.norm === 'rmsnorm' ||
      c.positions === 'rope' ||
      c.mlp === 'swiglu' ||
      c.qkNorm ||
      c.kvHeads < c.heads,
  },
] as { check: KernelCheck; needs: (c: TransformerConfig) => boolean }[];

/**
 * The attention checks at a model's own head size where it is not one of HEAD_SIZES (Qwen3's
 * 128 runs attention.wgsl?MAX_V4=32, another build of the general passes).
 */
export function headSizeChecks(hd: number): KernelCheck[] {
  if ((HEAD_SIZES as readonly number[]).includes(hd)) return [];
  return [gqaCheck(false, hd), gqaCheck(true, hd), gqaDecodeCheck(hd)];
}

/**
 * The checks a model of this config needs beyond the start's, under an adapter or frozen: its
 * switches', and the attention at its head size. No config: every switch's (the GPU report's).
 */
export function checksFor(c: TransformerConfig | null): KernelCheck[] {
  if (!c) return CONFIG_CHECKS.map((e) => e.check);
  return [
    ...CONFIG_CHECKS.filter((e) => e.needs(c)).map((e) => e.check),
    ...headSizeChecks(c.headDim),
  ];
}

/** These checks on this device, each result as the start's checks report theirs. */
export function runConfigChecks(
  rt: GpuRuntime,
  software: boolean,
  checks: readonly KernelCheck[],
): Promise<CheckResult[]> {
  return runChecks(checks, {
    rt,
    sizes: { nEmbd: 0, nHead: 0, nInner: 0, vocabSize: 0, label: 'fixed sizes' },
    matmul: 'v1_regblock',
    software,
    seed: SELF_CHECK_SEED,
  });
}
