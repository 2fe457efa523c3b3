// attention.wgsl's _h16 versions (heads ≤ 16 in structs of vec4s) against its general passes
// (heads in arrays) on the same inputs: the same bits, every pass, with grouped heads and
// shared-prompt segments. Both are checked against the float64 references in
// kernels.llama.test.ts and kernels.layers.test.ts; this says the _h16 version is the general
// one, not merely close to it.
import { describe, expect, it } from 'vitest';
import {
  attentionBackward,
  attentionBlock,
  attentionDecode,
  attentionEntry,
  attentionForward,
} from '../../src/gpu/engine/ops';
import type { DispatchSpec } from '../../src/gpu/engine/runtime';
import { packedRows } from '../../src/gpu/engine/selfCheck/registry';
import { kernelRuntime, needRuntime, randoms, readBack, run, upload } from './kernels-harness';

const h = kernelRuntime();

/** The same pass in its general version (arrays), with the block the _h16 version runs. */
function onGeneralKernel(spec: DispatchSpec): DispatchSpec {
  const entry = spec.entry.replace(/_h16$/, '') as
    | 'forward'
    | 'backward_dq'
    | 'backward_dkdv'
    | 'decode';
  const hd = (spec.constants as { HD: number }).HD;
  return {
    ...spec,
    entry,
    constants: entry === 'decode' ? { HD: hd } : { HD: hd, QB: attentionBlock(entry, hd) },
  };
}

const bits = (x: Float32Array) => new Uint32Array(x.buffer, x.byteOffset, x.length);

describe('attention.wgsl for heads up to 16: the _h16 versions give the general passes’ bits', () => {
  for (const [B, T, H, kvH, hd, shared] of [
    [2, 13, 4, 2, 8, false],
    [2, 19, 4, 2, 8, true],
    [1, 9, 3, 3, 16, false],
    [2, 14, 2, 1, 12, true],
    [3, 7, 2, 2, 4, false],
  ] as [number, number, number, number, number, boolean][])
    it(`forward, backward and decode at B=${B}, T=${T}, H=${H}, kvH=${kvH}, hd=${hd}${shared ? ', shared prompts' : ''}`, async (ctx) => {
      const rt = needRuntime(h, ctx);
      expect(attentionEntry('forward', hd)).toBe('forward_h16');
      const W = (H + 2 * kvH) * hd;
      const D = H * hd;
      const shape = { B, T, H, hd, kvH };
      const QKV = upload(rt, randoms(B * T * W, T + hd, 2));
      const DY = upload(rt, randoms(B * T * D, 3 * T + hd));
      const SEG = shared ? upload(rt, packedRows(B, T).segments) : undefined;
      const lens = upload(
        rt,
        Uint32Array.from({ length: B }, (_, b) => T - b),
      );
      const KC = upload(rt, randoms(B * T * kvH * hd, 5 * T + hd, 2));
      const VC = upload(rt, randoms(B * T * kvH * hd, 7 * T + hd));
      const outputs = async (general: boolean) => {
        const Y = rt.buffer(B * T * D);
        const lse = rt.buffer(B * H * T);
        const dqkv = rt.buffer(B * T * W);
        const dsum = rt.buffer(B * H * T);
        const yd = rt.buffer(B * D);
        // Decode: each row's first query (read from qkv rows) against a cache of T positions.
        const decode = attentionDecode(B, H, hd, T, QKV, KC, VC, lens, yd, { kvH, qStride: W });
        const specs = [
          attentionForward(shape, QKV, Y, lse, SEG),
          ...attentionBackward(shape, QKV, Y, DY, lse, dqkv, dsum, SEG),
        ];
        await run(rt, general ? specs.map(onGeneralKernel) : specs);
        const decoded = await decodeAt(rt, decode, general, yd, B * D);
        return [
          await readBack(rt, Y, B * T * D),
          await readBack(rt, lse, B * H * T),
          await readBack(rt, dqkv, B * T * W),
          await readBack(rt, dsum, B * H * T),
          decoded,
        ];
      };
      const small = await outputs(false);
      const general = await outputs(true);
      for (const [i, name] of ['y', 'lse', 'dqkv', 'dsum', 'decode y'].entries())
        expect(bits(small[i] as Float32Array), name).toEqual(bits(general[i] as Float32Array));
    });
});

async function decodeAt(
  rt: ReturnType<typeof needRuntime>,
  spec: DispatchSpec,
  general: boolean,
  yd: GPUBuffer,
  n: number,
): Promise<Float32Array> {
  await run(rt, [general ? onGeneralKernel(spec) : spec]);
  return readBack(rt, yd, n);
}
