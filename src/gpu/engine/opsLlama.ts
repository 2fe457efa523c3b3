// DispatchSpecs for the Llama family's kernels (rmsnorm.wgsl, rope.wgsl, swiglu.wgsl, matmul.wgsl's
// v5_b16 over 16-bit weights, embedding.wgsl's lookup), shapes checked here as in ops.ts.
import { grid2d } from '../kernels/runKernel';
import { asSlice, type Bindable, type DispatchSpec, type Dummies, u32s, uniforms } from './runtime';

/** Where RMSNorm's rows lie: row r at off + (r / group)·stride + (r % group)·D (default: [R, D]). */
export interface RowLayout {
  group?: number;
  stride?: number;
  off?: number;
}

const rmsUniforms = (R: number, D: number, eps: number, flags: number, l: RowLayout) =>
  uniforms([
    ['u', R],
    ['u', D],
    ['f', eps],
    ['u', flags],
    ['u', l.group ?? 1],
    ['u', l.stride ?? D],
    ['u', l.off ?? 0],
    ['u', 0],
  ]);

/** y = RMSNorm(x)·w (x null: in place on y); rstd [R] saved for the backward. */
export function rmsNormForward(
  x: Bindable | null,
  w: Bindable,
  y: Bindable,
  rstd: Bindable,
  R: number,
  D: number,
  eps: number,
  dummy: Dummies,
  layout: RowLayout = {},
): DispatchSpec {
  return {
    shader: 'rmsnorm.wgsl',
    entry: 'forward',
    bindings: [
      ['r', x ?? dummy.r],
      ['r', w],
      ['w', y],
      ['w', rstd],
    ],
    uniforms: rmsUniforms(R, D, eps, x ? 0 : 1, layout),
    workgroups: grid2d(Math.ceil(R / 64)),
    label: 'rmsnorm',
  };
}

/** dx (+)= ∂/∂x and dw += ∂/∂w, from the forward's x and rstd. */
export function rmsNormBackward(
  x: Bindable,
  w: Bindable,
  dy: Bindable,
  rstd: Bindable,
  dx: Bindable,
  dw: Bindable,
  R: number,
  D: number,
  accumulate: boolean,
  layout: RowLayout = {},
): DispatchSpec[] {
  return [
    {
      shader: 'rmsnorm.wgsl',
      entry: 'backward_dx',
      bindings: [
        ['r', x],
        ['r', w],
        ['r', dy],
        ['r', rstd],
        ['w', dx],
      ],
      uniforms: rmsUniforms(R, D, 0, accumulate ? 4 : 0, layout),
      workgroups: grid2d(Math.ceil(R / 64)),
      label: 'rmsnorm_bwd_dx',
    },
    {
      shader: 'rmsnorm.wgsl',
      entry: 'backward_dw',
      bindings: [
        ['r', x],
        ['r', dy],
        ['r', rstd],
        ['w', dw],
      ],
      uniforms: rmsUniforms(R, D, 0, 0, layout),
      workgroups: [Math.ceil(D / 64)],
      label: 'rmsnorm_bwd_dw',
    },
  ];
}

export interface RopeShape {
  /** Rows of qkv. */
  R: number;
  /** Rows per sequence: row r is position (start) + r % T. */
  T: number;
  H: number;
  kvH: number;
  hd: number;
}

/**
 * RoPE in place on qkv's q and k heads. table: ropeTable's [positions, hd]; start: the first
 * position, a number or a buffer of one per sequence (decode steps). inverse: the backward.
 */
export function rope(
  s: RopeShape,
  table: Bindable,
  qkv: Bindable,
  start: number | Bindable,
  dummy: Dummies,
  inverse = false,
): DispatchSpec {
  if (s.hd % 2 !== 0) throw new Error(`rope: head size ${s.hd} is odd`);
  const fromBuffer = typeof start !== 'number';
  return {
    shader: 'rope.wgsl',
    entry: 'rotate',
    bindings: [
      ['r', table],
      ['r', fromBuffer ? start : dummy.r],
      ['w', qkv],
    ],
    uniforms: u32s(
      s.R,
      s.T,
      s.H,
      s.kvH,
      s.hd,
      fromBuffer ? 0 : start,
      (inverse ? 1 : 0) | (fromBuffer ? 2 : 0),
      (s.H + 2 * s.kvH) * s.hd,
    ),
    workgroups: grid2d(Math.ceil((s.R * (s.H + s.kvH) * (s.hd / 2)) / 64)),
    label: inverse ? 'rope_bwd' : 'rope',
  };
}

function checkI(I: number) {
  if (I % 4 !== 0) throw new Error(`swiglu: width ${I} is not a multiple of 4`);
}

/** h [R, I] = silu(gate)·up, gu [R, 2I]. */
export function swigluForward(gu: Bindable, h: Bindable, R: number, I: number): DispatchSpec {
  checkI(I);
  return {
    shader: 'swiglu.wgsl',
    entry: 'forward',
    bindings: [
      ['r', gu],
      ['w', h],
    ],
    uniforms: u32s(R, I, 0, 0),
    workgroups: grid2d(Math.ceil((R * I) / 4 / 64)),
    label: 'swiglu',
  };
}

/** dgu [R, 2I] from dh [R, I]. */
export function swigluBackward(
  gu: Bindable,
  dh: Bindable,
  dgu: Bindable,
  R: number,
  I: number,
): DispatchSpec {
  checkI(I);
  return {
    shader: 'swiglu.wgsl',
    entry: 'backward',
    bindings: [
      ['r', gu],
      ['r', dh],
      ['w', dgu],
    ],
    uniforms: u32s(R, I, 0, 0),
    workgroups: grid2d(Math.ceil((R * I) / 4 / 64)),
    label: 'swiglu_bwd',
  };
}

export type WeightDtype = 'F32' | 'F16' | 'BF16';

export interface Matmul16Args {
  M: number;
  N: number;
  K: number;
  /** A [M, K] row-major with row stride aStride (default K). */
  a: Bindable;
  aStride?: number;
  /** W [N, K] row-major, 16-bit, two to a u32 word. */
  w: Bindable;
  dtype: 'F16' | 'BF16';
  bias?: Bindable;
  residual?: Bindable;
  /** C (+)= A·Wᵀ, row stride cStride (default N rounded up to 4). */
  c: Bindable;
  cStride?: number;
  accumulate?: boolean;
  /** GELU (tanh): C keeps the pre-activation, this buffer takes gelu(C) (C's layout). */
  gelu?: Bindable;
  dummy: Dummies;
  label?: string;
}

/** matmul.wgsl v5_b16: C (+)= A·Wᵀ (+ bias) (+ residual) (GELU into `gelu`), W 16-bit. */
export function matmul16(x: Matmul16Args): DispatchSpec {
  const aStride = x.aStride ?? x.K;
  const cStride = x.cStride ?? Math.ceil(x.N / 4) * 4;
  const m4 = (n: number) => n % 4 === 0;
  if (!m4(x.K) || !m4(aStride) || !m4(cStride) || cStride < x.N)
    throw new Error(`matmul16: K ${x.K}, A's and C's row strides must be multiples of 4`);
  for (const b of [x.a, x.bias, x.residual, x.c])
    if (b && ((asSlice(b).offset ?? 0) & 3) !== 0) throw new Error('matmul16: unaligned slice');
  const rb = x.M === 1 ? 1 : x.M < 8 ? 4 : 8;
  const flags = (x.bias ? 1 : 0) | (x.residual ? 2 : 0) | (x.accumulate ? 4 : 0) | (x.gelu ? 8 : 0);
  return {
    shader: 'matmul.wgsl',
    entry: 'v5_b16',
    constants: { B_BF16: Number(x.dtype === 'BF16'), RB: rb },
    bindings: [
      ['r', x.a],
      ['r', x.w],
      ['r', x.bias ?? x.dummy.r],
      ['r', x.residual ?? x.dummy.r],
      ['w', x.c],
      ['w', x.gelu ?? x.dummy.w],
    ],
    uniforms: u32s(x.M, x.N, x.K, aStride, 1, 1, x.K, flags, cStride, 0, 0, 0),
    workgroups: [Math.ceil(x.N / 8 / 64), Math.ceil(x.M / rb)],
    label: x.label ?? `matmul16 ${x.M}×${x.K}·${x.N}×${x.K}ᵀ ${x.dtype}`,
  };
}

export interface Matmul16TArgs {
  M: number;
  /** C's columns: W's row length (a multiple of 4). */
  N: number;
  /** W's rows read (the reduction). */
  K: number;
  /** A [M, K] row-major with row stride aStride (default K rounded up to 4). */
  a: Bindable;
  aStride?: number;
  /** W [K, N] row-major, 16-bit, two to a u32 word (a part of a DeviceMatrix). */
  w: Bindable;
  dtype: 'F16' | 'BF16';
  /** C [M, N] (+)= A·W, row stride N. */
  c: Bindable;
  accumulate?: boolean;
  dummy: Dummies;
  label?: string;
}

/** matmul.wgsl v6_b16t: C (+)= A·W through a 16-bit W [K, N] (input gradients: dX = dY·W). */
export function matmul16T(x: Matmul16TArgs): DispatchSpec {
  const aStride = x.aStride ?? Math.ceil(x.K / 4) * 4;
  const m4 = (n: number) => n % 4 === 0;
  if (!m4(x.N) || !m4(aStride) || aStride < x.K)
    throw new Error(`matmul16T: N ${x.N} and A's row stride ${aStride} must be multiples of 4`);
  for (const b of [x.a, x.c])
    if (((asSlice(b).offset ?? 0) & 3) !== 0) throw new Error('matmul16T: unaligned slice');
  const rb = x.M === 1 ? 1 : x.M < 8 ? 4 : 8;
  return {
    shader: 'matmul.wgsl',
    entry: 'v6_b16t',
    constants: { B_BF16: Number(x.dtype === 'BF16'), RB: rb },
    bindings: [
      ['r', x.a],
      ['r', x.w],
      ['r', x.dummy.r],
      ['r', x.dummy.r],
      ['w', x.c],
      ['w', x.dummy.w],
    ],
    uniforms: u32s(x.M, x.N, x.K, aStride, 1, 1, x.N, x.accumulate ? 4 : 0, x.N, 0, 0, 0),
    workgroups: [Math.ceil(x.N / 8 / 64), Math.ceil(x.M / rb)],
    label: x.label ?? `matmul16T ${x.M}×${x.K}·${x.K}×${x.N} ${x.dtype}`,
  };
}

/**
 * x [R, D] = E[ids − lo] for the ids in [lo, hi): E holds rows lo..hi−1 of the embedding as
 * f32 or 16-bit (two to a u32 word).
 */
export function embeddingLookup(
  ids: Bindable,
  table: Bindable,
  x: Bindable,
  R: number,
  D: number,
  dtype: WeightDtype,
  lo = 0,
  hi = 0xffffffff,
  o: { add?: boolean; fromStarts?: number } = {},
): DispatchSpec {
  // fromStarts = T: ids holds each sequence's first position, row b·T + t takes ids[b] + t.
  const flags = (o.add ? 1 : 0) | (o.fromStarts ? 2 : 0);
  return {
    shader: 'embedding.wgsl',
    entry: 'lookup',
    constants: { E_DTYPE: dtype === 'F32' ? 0 : dtype === 'F16' ? 1 : 2 },
    bindings: [
      ['r', ids],
      ['r', table],
      ['w', x],
    ],
    // embedding.wgsl's B, T, D, wte_off, wpe_off, flags
    uniforms: u32s(R, o.fromStarts ?? 1, D, lo, hi, flags, 0, 0),
    workgroups: grid2d(Math.ceil((R * D) / 64)),
    label: o.add ? 'embedding_add' : 'embedding_lookup',
  };
}
