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

  it('v4_vec4: every layout it reads four at a time, every epilogue; others fall back to v1', async (ctx) => {
    const rt = needRuntime(h, ctx);
    // Multiples of 4 off its 64×64 workgroup tile and 8×8 blocks: the clamped edges are read.
    const [M, N, K] = [44, 36, 28];
    const a = randoms(M * K, 41);
    const b = randoms(K * N, 42);
    const bias = randoms(N, 43);
    const res = randoms(M * N, 44);
    const pre = randoms(M * N, 45, 4);
    const c0 = randoms(M * N, 46);
    const aT = Float32Array.from(transposeRef(a, M, K));
    const bT = Float32Array.from(transposeRef(b, K, N));
    const [A, B, AT, BT, Bias, Res, Pre] = [a, b, aT, bT, bias, res, pre].map((x) => upload(rt, x));
    const version = 'v4_vec4' as const;
    const base = { M, N, K, dummy: rt.dummy, version };
    // A(i,k) from a [M,K] (along k) or aᵀ [K,M] (along i); B(k,j) from b [K,N] (along j) or bᵀ.
    const layouts = [
      { a: A!, b: B!, aAlongK: true, bAlongK: false },
      { a: A!, b: BT!, bStride: [1, K] as [number, number], aAlongK: true, bAlongK: true },
      { a: AT!, aStride: [1, M] as [number, number], b: B!, aAlongK: false, bAlongK: false },
      {
        a: AT!,
        aStride: [1, M] as [number, number],
        b: BT!,
        bStride: [1, K] as [number, number],
        aAlongK: false,
        bAlongK: true,
      },
    ];
    const ref = matmulRef(a, b, M, N, K);
    for (const { aAlongK, bAlongK, ...operands } of layouts) {
      const spec = matmul({ ...base, ...operands, c: rt.buffer(M * N) });
      expect(spec.entry).toBe('v4_vec4');
      expect(spec.constants).toEqual({ A_ALONG_K: Number(aAlongK), B_ALONG_K: Number(bAlongK) });
      const C = rt.buffer(M * N);
      const CB = rt.buffer(M * N);
      const CA = upload(rt, c0);
      const Act = rt.buffer(M * N);
      const G = rt.buffer(M * N);
      await run(rt, [
        matmul({ ...base, ...operands, c: C }),
        matmul({ ...base, ...operands, bias: Bias!, residual: Res!, c: CB }),
        matmul({ ...base, ...operands, c: CA!, flags: MM_ACCUMULATE }),
        matmul({
          ...base,
          ...operands,
          bias: Bias!,
          c: rt.buffer(M * N),
          aux: Act,
          flags: MM_GELU,
        }),
        matmul({ ...base, ...operands, c: G, aux: Pre!, flags: MM_GELU_GRAD }),
      ]);
      const what = `A along ${aAlongK ? 'k' : 'i'}, B along ${bAlongK ? 'k' : 'j'}`;
      expectClose(await readBack(rt, C, M * N), ref, 1e-5, 1e-4, what);
      expectClose(
        await readBack(rt, CB, M * N),
        matmulRef(a, b, M, N, K, { bias, residual: res }),
        1e-5,
        1e-4,
        `${what}, bias + residual`,
      );
      expectClose(
        await readBack(rt, CA!, M * N),
        matmulRef(a, b, M, N, K, { accumulate: c0 }),
        1e-5,
        1e-4,
        `${what}, accumulate`,
      );
      expectClose(
        await readBack(rt, Act, M * N),
        matmulRef(a, b, M, N, K, { bias }).map(geluRef),
        1e-5,
        1e-4,
        `${what}, gelu`,
      );
      expectClose(
        await readBack(rt, G, M * N),
        matmulRef(a, b, M, N, K, { geluGradOf: pre }),
        1e-5,
        1e-4,
        `${what}, gelu grad`,
      );
    }
    // A width, a stride or an offset not a multiple of 4: v1_regblock does it.
    const odd = { dummy: rt.dummy, version, a: A!, b: B!, c: rt.buffer(M * N) };
    expect(matmul({ ...odd, M, N: 35, K }).entry).toBe('v1_regblock');
    expect(matmul({ ...odd, M, N, K: 27 }).entry).toBe('v1_regblock');
    expect(matmul({ ...odd, M, N, K, aStride: [K + 1, 1] }).entry).toBe('v1_regblock');
    expect(matmul({ ...odd, M, N, K, a: { buffer: A!, offset: 2 } }).entry).toBe('v1_regblock');
  });

  it('bias_grad sums columns (and accumulates)', async (ctx) => {
    const rt = needRuntime(h, ctx);
    const [M, N] = [77, 130];
    const d = randoms(M * N, 31);
    const db0 = randoms(N, 32);
    const D = upload(rt, d);
    const DB = upload(rt, db0);
    await run(rt, [biasGrad(D, M, N, DB, true, rt.dummy)]);
    const ref = Float64Array.from(db0);
    for (let i = 0; i < M; i++)
      for (let j = 0; j < N; j++) ref[j] = (ref[j] ?? 0) + (d[i * N + j] ?? 0);
    expectClose(await readBack(rt, DB, N), ref, 1e-5, 1e-4);
  });
});
