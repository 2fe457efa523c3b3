import { asSlice, type Bindable, type DispatchSpec, type Dummies, u32s } from '../runtime';

export const MATMUL_VERSIONS = ['v1_regblock', 'v2_tiled', 'v3_colblock', 'v4_vec4'] as const;
export type MatmulVersion = (typeof MATMUL_VERSIONS)[number];

export const MM_BIAS = 1;
export const MM_RESIDUAL = 2;
export const MM_ACCUMULATE = 4;
export const MM_GELU = 8;
export const MM_GELU_GRAD = 16;

/** A binding that starts on a vec4 boundary (a whole buffer, or a slice at a multiple of 4 floats). */
const aligned = (b: Bindable | undefined) => !b || ((asSlice(b).offset ?? 0) & 3) === 0;
const m4 = (n: number) => n % 4 === 0;

export interface MatmulArgs {
  M: number;
  N: number;
  K: number;
  a: Bindable;
  /** A(i,k) = a[i·aStride[0] + k·aStride[1]]; default row-major [M,K]. */
  aStride?: [number, number];
  b: Bindable;
  /** B(k,j) = b[k·bStride[0] + j·bStride[1]]; default row-major [K,N]. */
  bStride?: [number, number];
  bias?: Bindable;
  residual?: Bindable;
  c: Bindable;
  /** C(i,j) = c[i·cStride + j] (and R, AUX alike); default N. */
  cStride?: number;
  /** GELU forward: the activation's output; GELU backward: the saved pre-activation. */
  aux?: Bindable;
  flags?: number;
  version?: MatmulVersion;
  dummy: Dummies;
  label?: string;
}

/** Each operand's direction of four contiguous floats, for v4_vec4 (null: none it can use). */
export function vec4Layout(x: MatmulArgs): { aAlongK: boolean; bAlongK: boolean } | null {
  const [ars, acs] = x.aStride ?? [x.K, 1];
  const [brs, bcs] = x.bStride ?? [x.N, 1];
  const cs = x.cStride ?? x.N;
  if (![x.a, x.b, x.bias, x.residual, x.c, x.aux].every(aligned)) return null;
  // C, bias, residual and aux four at a time: C's rows hold N rounded up to 4.
  if (!m4(cs) || cs < Math.ceil(x.N / 4) * 4) return null;
  // The sizes need not be multiples of 4 (the kernel masks k ≥ K, drops i ≥ M and j ≥ N).
  const aAlongK = acs === 1 && m4(ars);
  const aAlongI = ars === 1 && m4(acs);
  const bAlongK = brs === 1 && m4(bcs);
  const bAlongJ = bcs === 1 && m4(brs);
  if (!(aAlongK || aAlongI) || !(bAlongK || bAlongJ)) return null;
  return { aAlongK, bAlongK: !bAlongJ };
}

export function matmul(x: MatmulArgs): DispatchSpec {
  const [ars, acs] = x.aStride ?? [x.K, 1];
  const [brs, bcs] = x.bStride ?? [x.N, 1];
  let version = x.version ?? 'v1_regblock';
  const layout = version === 'v4_vec4' ? vec4Layout(x) : null;
  if (version === 'v4_vec4' && !layout) version = 'v1_regblock'; // a size or stride not ×4
  let flags = x.flags ?? 0;
  if (x.bias) flags |= MM_BIAS;
  if (x.residual) flags |= MM_RESIDUAL;
  if ((flags & (MM_GELU | MM_GELU_GRAD)) !== 0 && !x.aux)
    throw new Error('matmul: GELU needs an aux buffer');
  return {
    shader: 'matmul.wgsl',
    entry: version,
    ...(layout
      ? { constants: { A_ALONG_K: Number(layout.aAlongK), B_ALONG_K: Number(layout.bAlongK) } }
      : {}),
    bindings: [
      ['r', x.a],
      ['r', x.b],
      ['r', x.bias ?? x.dummy.r],
      ['r', x.residual ?? x.dummy.r],
      ['w', x.c],
      ['w', x.aux ?? x.dummy.w],
    ],
    uniforms: u32s(x.M, x.N, x.K, ars, acs, brs, bcs, flags, x.cStride ?? x.N, 0, 0, 0),
    workgroups:
      version === 'v3_colblock'
        ? [Math.ceil(x.N / 64), Math.ceil(x.M / 16)]
        : version === 'v4_vec4'
          ? [Math.ceil(x.N / 64), Math.ceil(x.M / 64)]
          : [Math.ceil(x.N / 32), Math.ceil(x.M / 32)],
    // The shape in the label, for profiles: A is M×K, B is K×N, ᵀ where read transposed.
    label:
      x.label ?? `matmul ${x.M}×${x.K}${acs === 1 ? '' : 'ᵀ'}·${x.K}×${x.N}${bcs === 1 ? '' : 'ᵀ'}`,
  };
}

/** db (+)= Σ_i dC[i, :], dC [M,N]. */
export function biasGrad(
  dC: Bindable,
  M: number,
  N: number,
  db: Bindable,
  accumulate: boolean,
  dummy: Dummies,
): DispatchSpec {
  // Four columns at a time where the rows allow (every bias but the loss's one-column sum).
  const four = m4(N) && aligned(dC) && aligned(db);
  return {
    shader: 'matmul.wgsl',
    entry: four ? 'bias_grad4' : 'bias_grad',
    bindings: [
      ['r', dC],
      ['r', dummy.r],
      ['r', dummy.r],
      ['r', dummy.r],
      ['w', db],
      ['w', dummy.w],
    ],
    uniforms: u32s(M, N, 0, 0, 0, 0, 0, accumulate ? 4 : 0, N, 0, 0, 0),
    workgroups: [Math.ceil(N / 64)], // bias_grad4: 16 groups of four columns per workgroup
    label: 'bias_grad',
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
  if (!m4(x.K) || !m4(aStride) || !m4(cStride) || cStride < x.N)
    throw new Error(`matmul16: K ${x.K}, A's and C's row strides must be multiples of 4`);
  if (![x.a, x.bias, x.residual, x.c].every(aligned)) throw new Error('matmul16: unaligned slice');
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
  if (!m4(x.N) || !m4(aStride) || aStride < x.K)
    throw new Error(`matmul16T: N ${x.N} and A's row stride ${aStride} must be multiples of 4`);
  if (![x.a, x.c].every(aligned)) throw new Error('matmul16T: unaligned slice');
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
