// The Llama family's kernels against their float64 references on fresh seeded inputs, at odd
// sizes: rmsnorm.wgsl (rows and per-head layouts, in place), rope.wgsl (offsets, per-sequence
// positions, the inverse as backward), swiglu.wgsl, attention.wgsl with grouped-query heads
// (forward, both backward passes, the cache store and decode), matmul.wgsl's v5_b16 over F16
// and BF16 weights, embedding.wgsl's lookup over 16-bit rows split in ranges.
import { describe, expect, it } from 'vitest';
import {
  attentionBackward,
  attentionCacheStore,
  attentionDecode,
  attentionForward,
  embeddingLookup,
  matmul16,
  rmsNormBackward,
  rmsNormForward,
  rope,
  swigluBackward,
  swigluForward,
} from '../../src/gpu/engine/ops';
import {
  attentionBackwardRef,
  attentionDecodeRef,
  attentionRef,
  matmulRef,
  rmsNormBackwardRef,
  rmsNormRef,
  ropeRef,
  swigluBackwardRef,
  swigluRef,
} from '../../src/gpu/kernels/referenceOps';
import { ropeInverseFrequencies, ropeTable } from '../../src/model/families/rope';
import {
  bf16ToF32,
  f16ToF32,
  f32ToBf16,
  f32ToF16,
  f32ToHalf,
  type HalfDtype,
  halfToF32,
} from '../../src/model/halfFloat';
import {
  expectClose,
  ints,
  kernelRuntime,
  needRuntime,
  randoms,
  readBack,
  run,
  upload,
} from './kernels-harness';

const h = kernelRuntime();

/** Uint16 data as the u32 words the kernels read (length padded to even). */
const words = (bits: Uint16Array) =>
  new Uint32Array(bits.buffer, bits.byteOffset, Math.ceil(bits.length / 2));

function halves(dtype: HalfDtype, values: Float32Array): Uint16Array {
  const out = new Uint16Array(values.length + (values.length % 2));
  values.forEach((v, i) => {
    out[i] = f32ToHalf(dtype, v);
  });
  return out;
}

describe('halfFloat', () => {
  it('F16 and BF16 round to nearest even and decode back, subnormals and infinities too', () => {
    expect(f32ToF16(1)).toBe(0x3c00);
    expect(f32ToF16(65504)).toBe(0x7bff);
    expect(f32ToF16(1e6)).toBe(0x7c00);
    expect(f16ToF32(0x0001)).toBe(2 ** -24);
    expect(f32ToF16(2 ** -24)).toBe(1);
    expect(f32ToF16(2 ** -26)).toBe(0);
    expect(f32ToF16(1 + 2 ** -11)).toBe(0x3c00); // a tie to even
    expect(f32ToF16(1 + 3 * 2 ** -11)).toBe(0x3c02);
    expect(f32ToBf16(1 + 2 ** -8)).toBe(0x3f80); // a tie to even
    expect(bf16ToF32(f32ToBf16(-3.5))).toBe(-3.5);
    for (const v of randoms(2000, 7, 100)) {
      for (const dtype of ['F16', 'BF16'] as const) {
        const back = halfToF32(dtype, f32ToHalf(dtype, v));
        expect(Math.abs(back - v)).toBeLessThanOrEqual(
          Math.abs(v) * (dtype === 'F16' ? 2 ** -11 : 2 ** -8),
        );
      }
    }
  });
});

describe('rmsnorm', () => {
  for (const [R, D] of [
    [1, 4],
    [37, 64],
    [9, 132],
  ] as [number, number][]) {
    it(`forward, backward dx (accumulating) and dw at R=${R}, D=${D}`, async (ctx) => {
      const rt = needRuntime(h, ctx);
      const x = randoms(R * D, R + D, 3);
      const w = randoms(D, 2 * D).map((v) => 1 + v * 0.5);
      const dy = randoms(R * D, 4 * D);
      const dx0 = randoms(R * D, 5 * D);
      const dw0 = randoms(D, 6 * D);
      const [X, Wb, DY] = [x, w, dy].map((t) => upload(rt, t));
      const Y = rt.buffer(R * D);
      const rstd = rt.buffer(R);
      const DX = upload(rt, dx0);
      const DW = upload(rt, dw0);
      await run(rt, [
        rmsNormForward(X!, Wb!, Y, rstd, R, D, 1e-6, rt.dummy),
        ...rmsNormBackward(X!, Wb!, DY!, rstd, DX, DW, R, D, true),
      ]);
      const ref = rmsNormRef(x, w, R, D, 1e-6);
      const bwd = rmsNormBackwardRef(x, w, dy, R, D, 1e-6);
      expectClose(await readBack(rt, Y, R * D), ref.y, 1e-5, 1e-4, 'y');
      expectClose(
        await readBack(rt, DX, R * D),
        bwd.dx.map((v, i) => v + (dx0[i] ?? 0)),
        1e-4,
        1e-4,
        'dx',
      );
      expectClose(
        await readBack(rt, DW, D),
        bwd.dw.map((v, j) => v + (dw0[j] ?? 0)),
        1e-4,
        1e-4,
        'dw',
      );
    });
  }

  it("in place on each head of qkv rows (Qwen3's k norm), other columns untouched", async (ctx) => {
    const rt = needRuntime(h, ctx);
    const [T, H, kvH, hd] = [5, 6, 2, 12];
    const W = (H + 2 * kvH) * hd;
    const qkv = randoms(T * W, 17, 2);
    const w = randoms(hd, 18).map((v) => 1 + v * 0.5);
    const QKV = upload(rt, qkv);
    const rstd = rt.buffer(T * kvH);
    const layout = { group: kvH, stride: W, off: H * hd };
    await run(rt, [
      rmsNormForward(null, upload(rt, w), QKV, rstd, T * kvH, hd, 1e-6, rt.dummy, layout),
    ]);
    const heads = Float64Array.from({ length: T * kvH * hd }, (_, e) => {
      const r = Math.floor(e / hd);
      return qkv[Math.floor(r / kvH) * W + H * hd + (r % kvH) * hd + (e % hd)] ?? 0;
    });
    const ref = rmsNormRef(heads, w, T * kvH, hd, 1e-6).y;
    const want = Float64Array.from(qkv);
    ref.forEach((v, e) => {
      const r = Math.floor(e / hd);
      want[Math.floor(r / kvH) * W + H * hd + (r % kvH) * hd + (e % hd)] = v;
    });
    expectClose(await readBack(rt, QKV, T * W), want, 1e-5, 1e-4, 'qkv');
  });
});

describe('rope (rotate-half)', () => {
  for (const [B, T, H, kvH, hd, start] of [
    [1, 1, 1, 1, 4, 0],
    [2, 7, 6, 2, 12, 3],
    [1, 13, 4, 1, 64, 1000],
  ] as number[][]) {
    it(`forward and inverse at B=${B}, T=${T}, H=${H}, kvH=${kvH}, hd=${hd}, from ${start}`, async (ctx) => {
      const rt = needRuntime(h!, ctx);
      const [b, t, hq, hk, d, s] = [B!, T!, H!, kvH!, hd!, start!];
      const R = b * t;
      const W = (hq + 2 * hk) * d;
      const theta = 10000 + s;
      const qkv = randoms(R * W, R + W, 2);
      const table = upload(
        rt,
        ropeTable(s + t, ropeInverseFrequencies({ headDim: d, ropeTheta: theta })),
      );
      const QKV = upload(rt, qkv);
      const shape = { R, T: t, H: hq, kvH: hk, hd: d };
      await run(rt, [rope(shape, table, QKV, s, rt.dummy)]);
      const ref = ropeRef(qkv, R, hq, hk, d, theta, (r) => s + (r % t));
      expectClose(await readBack(rt, QKV, R * W), ref, 1e-5, 1e-4, 'rotated');
      // The backward is the inverse rotation: dx = Rᵀ·dy; applied to R·x it gives x back.
      await run(rt, [rope(shape, table, QKV, s, rt.dummy, true)]);
      expectClose(await readBack(rt, QKV, R * W), qkv, 1e-5, 1e-4, 'inverse');
      const dy = randoms(R * W, 99);
      const DY = upload(rt, dy);
      await run(rt, [rope(shape, table, DY, s, rt.dummy, true)]);
      const dref = ropeRef(dy, R, hq, hk, d, theta, (r) => s + (r % t), true);
      expectClose(await readBack(rt, DY, R * W), dref, 1e-5, 1e-4, 'backward');
    });
  }

  it('positions from a buffer: each sequence from its own length (decode rows)', async (ctx) => {
    const rt = needRuntime(h, ctx);
    const [B, H, kvH, hd] = [4, 4, 2, 8];
    const W = (H + 2 * kvH) * hd;
    const lens = Uint32Array.from([0, 5, 17, 2]);
    const qkv = randoms(B * W, 31, 2);
    const QKV = upload(rt, qkv);
    const table = upload(
      rt,
      ropeTable(20, ropeInverseFrequencies({ headDim: hd, ropeTheta: 500000 })),
    );
    await run(rt, [rope({ R: B, T: 1, H, kvH, hd }, table, QKV, upload(rt, lens), rt.dummy)]);
    const ref = ropeRef(qkv, B, H, kvH, hd, 500000, (r) => lens[r] ?? 0);
    expectClose(await readBack(rt, QKV, B * W), ref, 1e-5, 1e-4);
  });
});

describe('swiglu', () => {
  for (const [R, I] of [
    [1, 4],
    [13, 36],
    [3, 4864 / 4],
  ] as [number, number][]) {
    it(`forward and backward at R=${R}, I=${I}`, async (ctx) => {
      const rt = needRuntime(h, ctx);
      const gu = randoms(R * 2 * I, R + I, 6);
      const dh = randoms(R * I, R + 2 * I);
      const GU = upload(rt, gu);
      const Hb = rt.buffer(R * I);
      const dgu = rt.buffer(R * 2 * I);
      await run(rt, [swigluForward(GU, Hb, R, I), swigluBackward(GU, upload(rt, dh), dgu, R, I)]);
      expectClose(await readBack(rt, Hb, R * I), swigluRef(gu, R, I), 1e-5, 1e-4, 'h');
      expectClose(
        await readBack(rt, dgu, R * 2 * I),
        swigluBackwardRef(gu, dh, R, I),
        1e-5,
        1e-4,
        'dgu',
      );
    });
  }
});

describe('grouped-query attention', () => {
  for (const [B, T, H, kvH, hd] of [
    [1, 1, 2, 1, 4],
    [2, 13, 6, 2, 12],
    [1, 21, 8, 2, 64],
    [2, 9, 3, 3, 16],
    [2, 7, 4, 2, 128],
    [1, 6, 2, 2, 68],
  ] as number[][]) {
    it(`forward and backward at B=${B}, T=${T}, H=${H}, kvH=${kvH}, hd=${hd}`, async (ctx) => {
      const rt = needRuntime(h!, ctx);
      const [b, t, hq, hk, d] = [B!, T!, H!, kvH!, hd!];
      const W = (hq + 2 * hk) * d;
      const D = hq * d;
      const qkv = randoms(b * t * W, t + d + hk, 2);
      const dy = randoms(b * t * D, 7 * t + d);
      const QKV = upload(rt, qkv);
      const Y = rt.buffer(b * t * D);
      const lse = rt.buffer(b * hq * t);
      const dqkv = rt.buffer(b * t * W);
      const dsum = rt.buffer(b * hq * t);
      const shape = { B: b, T: t, H: hq, hd: d, kvH: hk };
      await run(rt, [
        attentionForward(shape, QKV, Y, lse),
        ...attentionBackward(shape, QKV, Y, upload(rt, dy), lse, dqkv, dsum),
      ]);
      expectClose(
        await readBack(rt, Y, b * t * D),
        attentionRef(qkv, b, t, hq, d, hk).y,
        1e-5,
        1e-4,
        'y',
      );
      expectClose(
        await readBack(rt, dqkv, b * t * W),
        attentionBackwardRef(qkv, dy, b, t, hq, d, hk),
        1e-5,
        1e-3,
        'dqkv',
      );
    });
  }

  // Rows that hold a prompt once and then several completions (the update's packed GRPO
  // groups): each segment sees the prompt and itself. Reference: each segment's own sequence
  // (prompt rows, then its rows) through the plain causal reference; the prompt's dy goes with
  // the first segment only, so the packed row's dqkv is the sum of the sequences' mapped back.
  for (const [H, kvH, hd] of [
    [4, 2, 8],
    [2, 2, 16],
    [8, 2, 64],
  ] as number[][])
    it(`shared-prompt rows (segments) at H=${H}, kvH=${kvH}, hd=${hd}: each segment as its own sequence`, async (ctx) => {
      const rt = needRuntime(h!, ctx);
      const [hq, hk, d] = [H!, kvH!, hd!];
      const W = (hq + 2 * hk) * d;
      const D = hq * d;
      // Row 0: a prompt of 5, segments of 3, 4 and 2; row 1: a prompt of 3, segments of 5 and 1;
      // row 2 a plain sequence of 6 (pre 0).
      const rows = [
        { pre: 5, segs: [3, 4, 2] },
        { pre: 3, segs: [5, 1] },
        { pre: 0, segs: [6] },
      ];
      const lengths = rows.map((r) => r.pre + r.segs.reduce((a, b) => a + b, 0));
      const T = Math.max(...lengths) + 1; // a padding position too
      const B = rows.length;
      const qkv = randoms(B * T * W, 91 + d, 2);
      const dy = randoms(B * T * D, 92 + d);
      const seg = new Uint32Array(B * T + B);
      rows.forEach((r, b) => {
        seg[B * T + b] = r.pre;
        let at = r.pre;
        for (const n of r.segs) {
          for (let k = 0; k < n; k++) seg[b * T + at + k] = r.pre > 0 ? at : 0;
          at += n;
        }
        for (let t = lengths[b]!; t < T; t++) dy.fill(0, (b * T + t) * D, (b * T + t + 1) * D);
      });
      const QKV = upload(rt, qkv);
      const Y = rt.buffer(B * T * D);
      const lse = rt.buffer(B * hq * T);
      const dqkv = rt.buffer(B * T * W);
      const SEG = rt.buffer(seg.length);
      rt.write(SEG, seg);
      const shape = { B, T, H: hq, hd: d, kvH: hk };
      await run(rt, [
        attentionForward(shape, QKV, Y, lse, SEG),
        ...attentionBackward(shape, QKV, Y, upload(rt, dy), lse, dqkv, rt.buffer(B * hq * T), SEG),
      ]);
      const y = await readBack(rt, Y, B * T * D);
      const dq = await readBack(rt, dqkv, B * T * W);
      const wantY: number[] = [];
      const gotY: number[] = [];
      const wantDq = new Float64Array(B * T * W);
      rows.forEach((r, b) => {
        let at = r.pre;
        r.segs.forEach((n, j) => {
          // The sequence's packed positions: the prompt's, then this segment's.
          const idx = [
            ...Array.from({ length: r.pre }, (_, t) => t),
            ...Array.from({ length: n }, (_, k) => at + k),
          ];
          const sq = new Float32Array(idx.length * W);
          const sdy = new Float32Array(idx.length * D);
          idx.forEach((t, i) => {
            sq.set(qkv.subarray((b * T + t) * W, (b * T + t + 1) * W), i * W);
            if (j === 0 || i >= r.pre)
              sdy.set(dy.subarray((b * T + t) * D, (b * T + t + 1) * D), i * D);
          });
          const ref = attentionRef(sq, 1, idx.length, hq, d, hk).y;
          const dref = attentionBackwardRef(sq, sdy, 1, idx.length, hq, d, hk);
          idx.forEach((t, i) => {
            if (j === 0 || i >= r.pre)
              for (let e = 0; e < D; e++) {
                wantY.push(ref[i * D + e]!);
                gotY.push(y[(b * T + t) * D + e]!);
              }
            for (let e = 0; e < W; e++) wantDq[(b * T + t) * W + e]! += dref[i * W + e]!;
          });
          at += n;
        });
      });
      expectClose(Float32Array.from(gotY), Float64Array.from(wantY), 1e-5, 1e-4, 'y');
      const real = (v: ArrayLike<number>) =>
        Float64Array.from(
          rows.flatMap((_, b) =>
            Array.from({ length: lengths[b]! * W }, (_, e) => v[b * T * W + e]!),
          ),
        );
      expectClose(Float32Array.from(real(dq)), real(wantDq), 1e-5, 1e-3, 'dqkv');
    });

  for (const hd of [16, 128])
    it(`cache store then decode at hd=${hd}: q read from qkv rows, kv heads shared by groups`, async (ctx) => {
      const rt = needRuntime(h, ctx);
      const [B, H, kvH, C] = [3, 6, 2, 11];
      const W = (H + 2 * kvH) * hd;
      const KD = kvH * hd;
      const kc0 = randoms(B * C * KD, 71, 2);
      const vc0 = randoms(B * C * KD, 72);
      const qkv = randoms(B * W, 73, 2);
      const pos = Uint32Array.from([0, 10, 4]);
      const KC = upload(rt, kc0);
      const VC = upload(rt, vc0);
      const QKV = upload(rt, qkv);
      const Y = rt.buffer(B * H * hd);
      const lens = pos.map((p) => p + 1);
      const shape = { B, T: 1, H, hd, kvH };
      await run(rt, [
        attentionCacheStore(shape, C, QKV, upload(rt, pos), KC, VC),
        attentionDecode(B, H, hd, C, QKV, KC, VC, upload(rt, lens), Y, { kvH, qStride: W }),
      ]);
      const kc = Float64Array.from(kc0);
      const vc = Float64Array.from(vc0);
      for (let b = 0; b < B; b++)
        for (let i = 0; i < KD; i++) {
          kc[(b * C + (pos[b] ?? 0)) * KD + i] = qkv[b * W + H * hd + i] ?? 0;
          vc[(b * C + (pos[b] ?? 0)) * KD + i] = qkv[b * W + H * hd + KD + i] ?? 0;
        }
      expectClose(await readBack(rt, KC, B * C * KD), kc, 0, 0, 'k cache');
      expectClose(await readBack(rt, VC, B * C * KD), vc, 0, 0, 'v cache');
      const q = Float64Array.from({ length: B * H * hd }, (_, e) => {
        const b = Math.floor(e / (H * hd));
        return qkv[b * W + (e % (H * hd))] ?? 0;
      });
      expectClose(
        await readBack(rt, Y, B * H * hd),
        attentionDecodeRef(q, kc, vc, lens, B, H, hd, C, kvH),
        1e-5,
        1e-4,
        'y',
      );
    });

  it('a prefill of T rows stores at pos[b] + t', async (ctx) => {
    const rt = needRuntime(h, ctx);
    const [B, T, H, kvH, hd, C] = [2, 3, 2, 1, 8, 9];
    const W = (H + 2 * kvH) * hd;
    const qkv = randoms(B * T * W, 81);
    const KC = rt.buffer(B * C * kvH * hd);
    const VC = rt.buffer(B * C * kvH * hd);
    const pos = Uint32Array.from([0, 5]);
    await run(rt, [
      attentionCacheStore({ B, T, H, hd, kvH }, C, upload(rt, qkv), upload(rt, pos), KC, VC),
    ]);
    const kc = await readBack(rt, KC, B * C * hd);
    for (let b = 0; b < B; b++)
      for (let t = 0; t < T; t++)
        for (let i = 0; i < hd; i++)
          expect(kc[(b * C + (pos[b] ?? 0) + t) * hd + i]).toBe(qkv[(b * T + t) * W + H * hd + i]);
  });
});

describe('16-bit weights', () => {
  for (const dtype of ['F16', 'BF16'] as const)
    for (const [M, N, K] of [
      [1, 9, 4],
      [5, 37, 20],
      [19, 70, 64],
      [1, 131, 132],
    ] as [number, number, number][])
      it(`matmul v5_b16 ${dtype}: A [${M},${K}]·W [${N},${K}]ᵀ + bias, accumulating`, async (ctx) => {
        const rt = needRuntime(h, ctx);
        const a = randoms(M * K, M + N + K);
        const bits = halves(dtype, randoms(N * K, N * K + 1, 0.5));
        const wt = Float64Array.from({ length: N * K }, (_, e) => halfToF32(dtype, bits[e] ?? 0));
        const bias = randoms(N, 3);
        const cs = Math.ceil(N / 4) * 4;
        const c0 = randoms(M * cs, 4);
        const C = upload(rt, c0);
        await run(rt, [
          matmul16({
            M,
            N,
            K,
            a: upload(rt, a),
            w: upload(rt, words(bits)),
            dtype,
            bias: upload(rt, bias),
            c: C,
            accumulate: true,
            dummy: rt.dummy,
          }),
        ]);
        const w = Float64Array.from(
          { length: K * N },
          (_, e) => wt[(e % N) * K + Math.floor(e / N)] ?? 0,
        );
        const ref = matmulRef(a, w, M, N, K, { bias });
        // C's rows are padded to a multiple of 4; the padding's values are not the result.
        const all = await readBack(rt, C, M * cs);
        const got = Float64Array.from(
          { length: M * N },
          (_, e) => all[Math.floor(e / N) * cs + (e % N)] ?? 0,
        );
        const want = ref.map((v, e) => v + (c0[Math.floor(e / N) * cs + (e % N)] ?? 0));
        expectClose(got, want, 1e-5, 1e-4, dtype);
      });

  it('embedding lookup over F16, BF16 and f32 rows, the table split in two row ranges', async (ctx) => {
    const rt = needRuntime(h, ctx);
    const [V, D, R] = [37, 12, 9];
    const ids = ints(R, V, 91);
    ids[0] = 0;
    ids[1] = V - 1;
    const values = randoms(V * D, 92);
    const split = 20;
    for (const dtype of ['F16', 'BF16', 'F32'] as const) {
      const X = rt.buffer(R * D);
      const I = upload(rt, ids);
      const part = (lo: number, hi: number) => {
        const slice = values.subarray(lo * D, hi * D);
        return upload(
          rt,
          dtype === 'F32'
            ? new Uint32Array(
                slice.buffer.slice(slice.byteOffset, slice.byteOffset + slice.byteLength),
              )
            : words(halves(dtype, slice)),
        );
      };
      await run(rt, [
        embeddingLookup(I, part(0, split), X, R, D, dtype, 0, split),
        embeddingLookup(I, part(split, V), X, R, D, dtype, split, V),
      ]);
      const want = Float64Array.from({ length: R * D }, (_, e) => {
        const v = values[(ids[Math.floor(e / D)] ?? 0) * D + (e % D)] ?? 0;
        return dtype === 'F32'
          ? v
          : dtype === 'F16'
            ? f16ToF32(f32ToF16(v))
            : bf16ToF32(f32ToBf16(v));
      });
      expectClose(await readBack(rt, X, R * D), want, 0, 0, dtype);
    }
  });
});
