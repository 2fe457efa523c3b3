// shaders/layernorm.wgsl, embedding.wgsl (lookup and backward) and attention.wgsl (forward and backward, and the
// decode step over a KV cache) against their float64 references; rows.wgsl's gather and
// scatter against plain copies.
import { describe, expect, it } from 'vitest';
import {
  attentionBackward,
  attentionDecode,
  attentionForward,
  embeddingBackward,
  embeddingLookup,
  gatherRows,
  layerNormBackwardDx,
  layerNormBackwardParams,
  layerNormForward,
  scatterRows,
} from '../../src/gpu/engine/ops';
import {
  attentionBackwardRef,
  attentionDecodeRef,
  attentionRef,
  embeddingBackwardRef,
  embeddingRef,
  layerNormBackwardRef,
  layerNormRef,
} from '../../src/gpu/kernels/referenceOps';
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

describe('layernorm', () => {
  for (const [R, D] of [
    [1, 8],
    [37, 64],
    [70, 100],
  ] as [number, number][]) {
    it(`forward, backward dx (accumulating) and dγ, dβ at R=${R}, D=${D}`, async (ctx) => {
      const rt = needRuntime(h, ctx);
      const x = randoms(R * D, R + D, 3);
      const g = randoms(D, 2 * D).map((v) => 1 + v * 0.5);
      const b = randoms(D, 3 * D);
      const dy = randoms(R * D, 4 * D);
      const dx0 = randoms(R * D, 5 * D);
      const grads0 = randoms(384, 6 * D);
      const [X, G, B, DY] = [x, g, b, dy].map((t) => upload(rt, t));
      const Y = rt.buffer(R * D);
      const stats = rt.buffer(2 * R);
      const DX = upload(rt, dx0);
      const grads = upload(rt, grads0);
      const gOff = 128;
      const bOff = 256;
      await run(rt, [
        layerNormForward(X!, G!, B!, Y, stats, R, D, 1e-5),
        layerNormBackwardDx(X!, G!, DY!, stats, DX, R, D, true),
        layerNormBackwardParams(X!, DY!, stats, grads, gOff, bOff, R, D),
      ]);
      const ref = layerNormRef(x, g, b, R, D, 1e-5);
      const bwd = layerNormBackwardRef(x, g, dy, R, D, 1e-5);
      expectClose(await readBack(rt, Y, R * D), ref.y, 1e-5, 1e-4, 'y');
      expectClose(
        await readBack(rt, DX, R * D),
        bwd.dx.map((v, i) => v + (dx0[i] ?? 0)),
        1e-4,
        1e-4,
        'dx',
      );
      const gr = await readBack(rt, grads, grads0.length);
      expectClose(
        gr.subarray(gOff, gOff + D),
        bwd.dg.map((v, j) => v + (grads0[gOff + j] ?? 0)),
        1e-4,
        1e-4,
        'dγ',
      );
      expectClose(
        gr.subarray(bOff, bOff + D),
        bwd.db.map((v, j) => v + (grads0[bOff + j] ?? 0)),
        1e-4,
        1e-4,
        'dβ',
      );
      expectClose(gr.subarray(0, gOff), grads0.subarray(0, gOff), 0, 0, 'untouched');
    });
  }
});

describe('embedding (tokens + positions)', () => {
  for (const packed of [false, true])
    it(`forward and backward (wte rows summed over repeated ids, wpe over the batch)${packed ? ', positions per row (packed rows)' : ''}`, async (ctx) => {
      const rt = needRuntime(h, ctx);
      const [B, T, D, V] = [3, 11, 24, 13];
      const wteOff = 0;
      const wpeOff = Math.ceil((V * D) / 64) * 64;
      const total = wpeOff + T * D;
      const params = randoms(total, 41);
      const ids = ints(B * T, V, 42);
      const dx = randoms(B * T * D, 43);
      const grads0 = randoms(total, 44);
      const P = upload(rt, params);
      const I = upload(rt, ids);
      const DX = upload(rt, dx);
      const X = rt.buffer(B * T * D);
      const grads = upload(rt, grads0);
      // Packed rows: positions repeat and skip (a prompt's, then each completion's from its end).
      const positions = packed ? ints(B * T, T, 45) : undefined;
      const R = B * T;
      const POS = upload(rt, positions ?? Uint32Array.from({ length: R }, (_, r) => r % T));
      await run(rt, [
        embeddingLookup(I, P, X, R, D, 'F32'),
        embeddingLookup(POS, { buffer: P, offset: wpeOff }, X, R, D, 'F32', 0, 0xffffffff, {
          add: true,
        }),
        ...embeddingBackward(I, DX, grads, R, D, wteOff, { buffer: POS, wpeOff }),
      ]);
      const wte = params.subarray(wteOff, wteOff + V * D);
      const wpe = params.subarray(wpeOff, wpeOff + T * D);
      expectClose(
        await readBack(rt, X, B * T * D),
        embeddingRef(ids, wte, wpe, B, T, D, positions),
      );
      const ref = embeddingBackwardRef(ids, dx, V, B, T, D, positions);
      const gr = await readBack(rt, grads, total);
      expectClose(
        gr.subarray(wteOff, wteOff + V * D),
        ref.dwte.map((v, i) => v + (grads0[wteOff + i] ?? 0)),
      );
      expectClose(
        gr.subarray(wpeOff, wpeOff + T * D),
        ref.dwpe.map((v, i) => v + (grads0[wpeOff + i] ?? 0)),
      );
    });
});

describe('attention (fused causal, online softmax)', () => {
  for (const [B, T, H, hd] of [
    [1, 1, 1, 4],
    [2, 13, 4, 16],
    [3, 40, 2, 32],
  ] as [number, number, number, number][]) {
    it(`forward and backward at B=${B}, T=${T}, H=${H}, hd=${hd}`, async (ctx) => {
      const rt = needRuntime(h, ctx);
      const D = H * hd;
      const qkv = randoms(B * T * 3 * D, T + hd, 2);
      const dy = randoms(B * T * D, 7 * T + hd);
      const QKV = upload(rt, qkv);
      const DY = upload(rt, dy);
      const Y = rt.buffer(B * T * D);
      const lse = rt.buffer(B * H * T);
      const dqkv = rt.buffer(B * T * 3 * D);
      const dsum = rt.buffer(B * H * T);
      const shape = { B, T, H, hd };
      await run(rt, [
        attentionForward(shape, QKV, Y, lse),
        ...attentionBackward(shape, QKV, Y, DY, lse, dqkv, dsum),
      ]);
      expectClose(
        await readBack(rt, Y, B * T * D),
        attentionRef(qkv, B, T, H, hd).y,
        1e-5,
        1e-4,
        'y',
      );
      expectClose(
        await readBack(rt, dqkv, B * T * 3 * D),
        attentionBackwardRef(qkv, dy, B, T, H, hd),
        1e-5,
        1e-3,
        'dqkv',
      );
    });
  }

  it('decode: one query per row over its own cache length', async (ctx) => {
    const rt = needRuntime(h, ctx);
    const [B, H, hd, C] = [5, 4, 16, 23];
    const D = H * hd;
    const q = randoms(B * D, 51, 2);
    const k = randoms(B * C * D, 52, 2);
    const v = randoms(B * C * D, 53);
    const lens = Uint32Array.from([1, 23, 7, 12, 2]);
    const [Q, K, Vb, L] = [q, k, v, lens].map((t) => upload(rt, t));
    const Y = rt.buffer(B * D);
    await run(rt, [attentionDecode(B, H, hd, C, Q!, K!, Vb!, L!, Y)]);
    expectClose(await readBack(rt, Y, B * D), attentionDecodeRef(q, k, v, lens, B, H, hd, C));
  });
});

describe('shader loading', () => {
  it('the sources come from the Vite bundle (the page and its Worker have no disk)', async () => {
    const { loadShader, shadersFromBundle } = await import('../../src/gpu/kernels/loadShader');
    const source = await loadShader('token_logprob.wgsl');
    expect(source).toContain('v3_online_per_row');
    expect(shadersFromBundle()).toBeGreaterThan(0);
  });
});

describe('rows: gather and scatter (the head at chosen positions)', () => {
  it('gathers the picked rows and scatters them back, zeros elsewhere; n < R reuses R’s buffers', async (ctx) => {
    const rt = needRuntime(h, ctx);
    const [R, D] = [37, 12];
    const src = randoms(R * D, 61);
    const dst = rt.buffer(R * D);
    const back = upload(rt, randoms(R * D, 62)); // every row is overwritten, picked or not
    const Src = upload(rt, src);
    for (const picked of [[3, 0, 36, 17, 18], Array.from({ length: R }, (_, r) => R - 1 - r), []]) {
      const n = picked.length;
      const inv = new Uint32Array(R).fill(0xffffffff);
      picked.forEach((r, i) => {
        inv[r] = i;
      });
      const Sel = upload(rt, Uint32Array.from(picked.length ? picked : [0]));
      const Inv = upload(rt, inv);
      await run(rt, [gatherRows(Src, Sel, dst, n, R, D), scatterRows(dst, Inv, back, n, R, D)]);
      const gathered = await readBack(rt, dst, R * D);
      const want = Float32Array.from(
        { length: n * D },
        (_, e) => src[(picked[Math.floor(e / D)] ?? 0) * D + (e % D)] ?? 0,
      );
      expect(Array.from(gathered.slice(0, n * D))).toEqual(Array.from(want));
      const scattered = await readBack(rt, back, R * D);
      const wantBack = Float32Array.from({ length: R * D }, (_, e) =>
        inv[Math.floor(e / D)]! < n ? (src[e] ?? 0) : 0,
      );
      expect(Array.from(scattered)).toEqual(Array.from(wantBack));
    }
  });
});
