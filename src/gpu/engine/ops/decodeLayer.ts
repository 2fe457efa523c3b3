import { type Bindable, type DispatchSpec, type Dummies, uniforms } from '../runtime';

/** Where a fused decode layer reads its weights in the flat buffer (floats), and its switches. */
export interface DecodeLayerWeights {
  ln1: [number, number];
  qkv: [number, number];
  o: [number, number];
  ln2: [number, number];
  up: [number, number];
  down: [number, number];
  /** Qwen3's q and k norms' weights, or null. */
  qkNorm: [number, number] | null;
  layerNorm: boolean;
  swiglu: boolean;
  qkvBias: boolean;
  projBias: boolean;
  fcBias: boolean;
}

/** decode_layer.wgsl's workgroup arrays, in vec4s. */
function decodeLayerSizes(
  s: { D: number; H: number; kvH: number; hd: number; I: number },
  swiglu: boolean,
) {
  const W = (s.H + 2 * s.kvH) * s.hd;
  return {
    MD4: s.D / 4,
    MK4: Math.max(s.D, s.H * s.hd, s.I) / 4,
    MN4: Math.max(W, s.D, swiglu ? 2 * s.I : s.I) / 4,
  };
}

/**
 * decode_layer.wgsl: one layer of a decode step for B rows, four rows a workgroup: x [B, D] in
 * place, the layer's k, v caches [B, C, kvH·hd] written at pos[b], attention over 0..pos[b].
 */
export function decodeLayer(
  s: {
    B: number;
    D: number;
    H: number;
    kvH: number;
    hd: number;
    C: number;
    I: number;
    eps: number;
  },
  o: DecodeLayerWeights,
  b: { weights: Bindable; x: Bindable; k: Bindable; v: Bindable; pos: Bindable },
  /** RoPE's table (rope.wgsl's), or null: no RoPE. */
  ropeTable: Bindable | null,
  threads: number,
  dummy: Dummies,
): DispatchSpec {
  if (ropeTable && s.hd % 8 !== 0)
    throw new Error(`decodeLayer: RoPE needs a head size ×8, not ${s.hd}`);
  const flags =
    (o.layerNorm ? 1 : 0) |
    (o.swiglu ? 2 : 0) |
    (o.qkvBias ? 4 : 0) |
    (o.projBias ? 8 : 0) |
    (o.fcBias ? 16 : 0) |
    (ropeTable ? 32 : 0) |
    (o.qkNorm ? 64 : 0);
  return {
    shader: 'decode_layer.wgsl',
    entry: 'layer',
    bindings: [
      ['r', b.weights],
      ['w', b.x],
      ['w', b.k],
      ['w', b.v],
      ['r', b.pos],
      ['r', ropeTable ?? dummy.r],
    ],
    uniforms: uniforms([
      ['u', s.B],
      ['u', s.D],
      ['u', s.H],
      ['u', s.kvH],
      ['u', s.hd],
      ['u', s.C],
      ['u', s.I],
      ['u', flags],
      ['f', s.eps],
      ['f', 1 / Math.sqrt(s.hd)],
      ...[o.ln1, o.qkv, o.o, o.ln2, o.up, o.down].flatMap(([weight, bias]): ['u', number][] => [
        ['u', weight],
        ['u', bias],
      ]),
      ['u', o.qkNorm?.[0] ?? 0],
      ['u', o.qkNorm?.[1] ?? 0],
    ]),
    constants: { WG: threads, ...decodeLayerSizes(s, o.swiglu) },
    workgroups: [Math.ceil(s.B / 4)],
    label: 'decode_layer',
  };
}

/** Bytes of workgroup memory decode_layer.wgsl takes at these sizes. */
export function decodeLayerBytes(
  s: { D: number; H: number; kvH: number; hd: number; I: number },
  swiglu: boolean,
): number {
  const m = decodeLayerSizes(s, swiglu);
  // Four rows of each array's vec4s, and four rows' (mean, 1/σ).
  return 16 * 4 * (m.MD4 + m.MK4 + m.MN4) + 8 * 4;
}
