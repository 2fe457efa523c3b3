// shaders/matmul.wgsl, every version and epilogue, against the float64 reference.
import { describe, expect, it } from 'vitest';
import {
  biasGrad,
  MATMUL_VERSIONS,
  MM_ACCUMULATE,
  MM_GELU,
  MM_GELU_GRAD,
  matmul,
} from '../../src/gpu/engine/ops';
import { geluRef, matmulRef, transposeRef } from '../../src/gpu/kernels/referenceOps';
import {
  expectClose,
  kernelRuntime,
  needRuntime,
  randoms,
  readBack,
  run,
  upload,
} from './kernels-harness';

const h = kernelRuntime();
// [M, N, K]: off the 32-tiles, a single row (decode), K = 1.
const SHAPES: [number, number, number][] = [
  [1, 7, 5],
  [33, 65, 17],
  [64, 192, 64],
  [5, 3, 1],
];

describe('matmul (C = A·B with bias, residual, GELU, accumulation, strided operands)', () => {
  for (const version of MATMUL_VERSIONS) {
    it(`${version}: plain, bias + residual, accumulate`, async (ctx) => {
      const rt = needRuntime(h, ctx);
      let seed = 1;
      for (const [M, N, K] of SHAPES) {
        const a = randoms(M * K, seed++);
        const b = randoms(K * N, seed++);
        const bias = randoms(N, seed++);
        const res = randoms(M * N, seed++);
        const c0 = randoms(M * N, seed++);
        const [A, B, Bias, Res] = [a, b, bias, res].map((x) => upload(rt, x));
        const C1 = rt.buffer(M * N);
        const C2 = rt.buffer(M * N);
        const C3 = upload(rt, c0);
        const base = { M, N, K, a: A!, b: B!, dummy: rt.dummy, version };
        await run(rt, [
          matmul({ ...base, c: C1 }),
          matmul({ ...base, bias: Bias!, residual: Res!, c: C2 }),
          matmul({ ...base, c: C3, flags: MM_ACCUMULATE }),
        ]);
        expectClose(await readBack(rt, C1, M * N), matmulRef(a, b, M, N, K), 1e-5, 1e-4, 'plain');
        expectClose(
          await readBack(rt, C2, M * N),
          matmulRef(a, b, M, N, K, { bias, residual: res }),
          1e-5,
          1e-4,
          'bias',
        );
        expectClose(
          await readBack(rt, C3, M * N),
          matmulRef(a, b, M, N, K, { accumulate: c0 }),
          1e-5,
          1e-4,
          'acc',
        );
      }
    });

    it(`${version}: GELU forward saves the pre-activation; GELU backward multiplies by gelu'`, async (ctx) => {
      const rt = needRuntime(h, ctx);
      const [M, N, K] = [37, 70, 24];
      const a = randoms(M * K, 11, 2);
      const b = randoms(K * N, 12);
      const bias = randoms(N, 13);
      const pre = randoms(M * N, 14, 4);
      const [A, B, Bias, Pre] = [a, b, bias, pre].map((x) => upload(rt, x));
      const C = rt.buffer(M * N);
      const Act = rt.buffer(M * N);
      const G = rt.buffer(M * N);
      const base = { M, N, K, a: A!, b: B!, dummy: rt.dummy, version };
      await run(rt, [
        matmul({ ...base, bias: Bias!, c: C, aux: Act, flags: MM_GELU }),
        matmul({ ...base, c: G, aux: Pre!, flags: MM_GELU_GRAD }),
      ]);
      const ref = matmulRef(a, b, M, N, K, { bias });
      expectClose(await readBack(rt, C, M * N), ref, 1e-5, 1e-4, 'pre');
      expectClose(await readBack(rt, Act, M * N), ref.map(geluRef), 1e-5, 1e-4, 'gelu');
      expectClose(
        await readBack(rt, G, M * N),
        matmulRef(a, b, M, N, K, { geluGradOf: pre }),
        1e-5,
        1e-4,
        'gelu grad',
      );
    });

    it(`${version}: strided operands give X·Eᵀ and Xᵀ·dY`, async (ctx) => {
      const rt = needRuntime(h, ctx);
      const [R, D, V] = [45, 24, 37];
      const x = randoms(R * D, 21);
      const e = randoms(V * D, 22);
      const dy = randoms(R * V, 23);
      const [X, E, DY] = [x, e, dy].map((t) => upload(rt, t));
      const logits = rt.buffer(R * V);
      const dE = rt.buffer(V * D);
      await run(rt, [
        // logits[R,V] = X·Eᵀ: B(k,j) = e[j·D + k]
        matmul({
          M: R,
          N: V,
          K: D,
          a: X!,
          b: E!,
          bStride: [1, D],
          c: logits,
          dummy: rt.dummy,
          version,
        }),
        // dE[V,D] = dYᵀ·X: A(i,k) = dy[k·V + i]
        matmul({
          M: V,
          N: D,
          K: R,
          a: DY!,
          aStride: [1, V],
          b: X!,
          c: dE,
          dummy: rt.dummy,
          version,
        }),
      ]);
      expectClose(await readBack(rt, logits, R * V), matmulRef(x, transposeRef(e, V, D), R, V, D));
      expectClose(
        await readBack(rt, dE, V * D),
        matmulRef(transposeRef(dy, R, V), x, V, D, R),
        1e-5,
        1e-4,
      );
    });
  }

  // Multiples of 4 off its 64×64 workgroup tile and 8×8 blocks (the clamped edges are read),
  // then sizes that are not, in rows padded to a multiple of 4 with NaN (never to reach C).
  for (const [M, N, K] of [
    [44, 36, 28],
    [45, 37, 29],
  ] as [number, number, number][]) {
    it(`v4_vec4, ${M}×${K}·${K}×${N}: every layout it reads four at a time, every epilogue`, async (ctx) => {
      const rt = needRuntime(h, ctx);
      const up4 = (n: number) => Math.ceil(n / 4) * 4;
      /** rows × cols values in rows `stride` apart, NaN in the padding. */
      const padded = (x: ArrayLike<number>, rows: number, cols: number, stride: number) => {
        const out = new Float32Array(rows * stride).fill(Number.NaN);
        for (let r = 0; r < rows; r++)
          for (let c = 0; c < cols; c++) out[r * stride + c] = x[r * cols + c] ?? 0;
        return out;
      };
      const unpadded = (x: Float32Array, rows: number, cols: number, stride: number) =>
        Float32Array.from(
          { length: rows * cols },
          (_, e) => x[Math.floor(e / cols) * stride + (e % cols)] ?? 0,
        );
      const [KP, MP, NP] = [up4(K), up4(M), up4(N)];
      const a = randoms(M * K, 41);
      const b = randoms(K * N, 42);
      const bias = randoms(N, 43);
      const res = randoms(M * N, 44);
      const pre = randoms(M * N, 45, 4);
      const c0 = randoms(M * N, 46);
      const A = upload(rt, padded(a, M, K, KP)); // A along k: A(i,k) = a[i·KP + k]
      const AT = upload(rt, padded(transposeRef(a, M, K), K, M, MP)); // along i: aᵀ[k·MP + i]
      const B = upload(rt, padded(b, K, N, NP)); // B along j: b[k·NP + j]
      const BT = upload(rt, padded(transposeRef(b, K, N), N, K, KP)); // along k: bᵀ[j·KP + k]
      const [Bias, Res, Pre] = [bias, padded(res, M, N, NP), padded(pre, M, N, NP)].map((x) =>
        upload(rt, x),
      );
      const version = 'v4_vec4' as const;
      const base = { M, N, K, cStride: NP, dummy: rt.dummy, version };
      const layouts = [
        { a: A!, aStride: [KP, 1], b: B!, bStride: [NP, 1], aAlongK: true, bAlongK: false },
        { a: A!, aStride: [KP, 1], b: BT!, bStride: [1, KP], aAlongK: true, bAlongK: true },
        { a: AT!, aStride: [1, MP], b: B!, bStride: [NP, 1], aAlongK: false, bAlongK: false },
        { a: AT!, aStride: [1, MP], b: BT!, bStride: [1, KP], aAlongK: false, bAlongK: true },
      ] as const;
      const ref = matmulRef(a, b, M, N, K);
      for (const { aAlongK, bAlongK, aStride, bStride, ...operands } of layouts) {
        const ops = {
          ...base,
          ...operands,
          aStride: [...aStride] as [number, number],
          bStride: [...bStride] as [number, number],
        };
        const spec = matmul({ ...ops, c: rt.buffer(M * NP) });
        expect(spec.entry).toBe('v4_vec4');
        expect(spec.constants).toEqual({ A_ALONG_K: Number(aAlongK), B_ALONG_K: Number(bAlongK) });
        const C = rt.buffer(M * NP);
        const CB = rt.buffer(M * NP);
        const CA = upload(rt, padded(c0, M, N, NP));
        const Act = rt.buffer(M * NP);
        const G = rt.buffer(M * NP);
        await run(rt, [
          matmul({ ...ops, c: C }),
          matmul({ ...ops, bias: Bias!, residual: Res!, c: CB }),
          matmul({ ...ops, c: CA!, flags: MM_ACCUMULATE }),
          matmul({ ...ops, bias: Bias!, c: rt.buffer(M * NP), aux: Act, flags: MM_GELU }),
          matmul({ ...ops, c: G, aux: Pre!, flags: MM_GELU_GRAD }),
        ]);
        const read = async (x: GPUBuffer) => unpadded(await readBack(rt, x, M * NP), M, N, NP);
        const what = `A along ${aAlongK ? 'k' : 'i'}, B along ${bAlongK ? 'k' : 'j'}`;
        expectClose(await read(C), ref, 1e-5, 1e-4, what);
        expectClose(
          await read(CB),
          matmulRef(a, b, M, N, K, { bias, residual: res }),
          1e-5,
          1e-4,
          `${what}, bias + residual`,
        );
        expectClose(
          await read(CA!),
          matmulRef(a, b, M, N, K, { accumulate: c0 }),
          1e-5,
          1e-4,
          `${what}, accumulate`,
        );
        expectClose(
          await read(Act),
          matmulRef(a, b, M, N, K, { bias }).map(geluRef),
          1e-5,
          1e-4,
          `${what}, gelu`,
        );
        expectClose(
          await read(G),
          matmulRef(a, b, M, N, K, { geluGradOf: pre }),
          1e-5,
          1e-4,
          `${what}, gelu grad`,
        );
      }
    });
  }

  it('v4_vec4 falls back to v1_regblock where a stride, an offset or C’s rows are not ×4', (ctx) => {
    const rt = needRuntime(h, ctx);
    const [M, N, K] = [44, 36, 28];
    const A = rt.buffer(M * K);
    const odd = { M, N, K, dummy: rt.dummy, version: 'v4_vec4' as const, a: A, b: A, c: A };
    expect(matmul({ ...odd, N: 35 }).entry).toBe('v1_regblock'); // C's rows 35 apart
    expect(matmul({ ...odd, N: 35, cStride: 36, bStride: [36, 1] }).entry).toBe('v4_vec4');
    expect(matmul({ ...odd, aStride: [K + 1, 1] }).entry).toBe('v1_regblock');
    expect(matmul({ ...odd, bStride: [1, K + 2] }).entry).toBe('v1_regblock');
    expect(matmul({ ...odd, a: { buffer: A, offset: 2 } }).entry).toBe('v1_regblock');
    expect(matmul({ ...odd, aStride: [3, 5] }).entry).toBe('v1_regblock'); // neither contiguous
  });

  // 130 columns: bias_grad; 132 (and 1 row, 3 rows, more than one workgroup): bias_grad4.
  for (const [M, N, entry] of [
    [77, 130, 'bias_grad'],
    [77, 132, 'bias_grad4'],
    [3, 68, 'bias_grad4'],
    [1, 4, 'bias_grad4'],
  ] as [number, number, string][]) {
    it(`${entry} sums columns (and accumulates), ${M}×${N}`, async (ctx) => {
      const rt = needRuntime(h, ctx);
      const d = randoms(M * N, 31);
      const db0 = randoms(N, 32);
      const D = upload(rt, d);
      const DB = upload(rt, db0);
      const DB2 = rt.buffer(N);
      const spec = biasGrad(D, M, N, DB, true, rt.dummy);
      expect(spec.entry).toBe(entry);
      await run(rt, [spec, biasGrad(D, M, N, DB2, false, rt.dummy)]);
      const sums = new Float64Array(N);
      for (let i = 0; i < M; i++)
        for (let j = 0; j < N; j++) sums[j] = (sums[j] ?? 0) + (d[i * N + j] ?? 0);
      expectClose(
        await readBack(rt, DB, N),
        sums.map((v, j) => v + (db0[j] ?? 0)),
        1e-5,
        1e-4,
      );
      expectClose(await readBack(rt, DB2, N), sums, 1e-5, 1e-4);
    });
  }
});
