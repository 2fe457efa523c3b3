// DispatchSpecs for every kernel in shaders/: one builder per entry point, shapes checked here
// so a program fails when it is built, not on the device.
import { grid2d } from '../kernels/runKernel';
import { asSlice, type Bindable, type DispatchSpec, type Dummies, u32s, uniforms } from './runtime';

export const SHADERS = [
  'matmul.wgsl',
  'layernorm.wgsl',
  'embedding.wgsl',
  'attention.wgsl',
  'attention.wgsl?MAX_V4=32',
  'head_logprob.wgsl',
  'adamw.wgsl',
  'decode.wgsl',
  'decode_layer.wgsl',
  'rows.wgsl',
  'rmsnorm.wgsl',
  'rope.wgsl',
  'swiglu.wgsl',
  'gelu.wgsl',
  'lora.wgsl',
] as const;

export const MATMUL_VERSIONS = ['v1_regblock', 'v2_tiled', 'v3_colblock', 'v4_vec4'] as const;
export type MatmulVersion = (typeof MATMUL_VERSIONS)[number];

export const MM_BIAS = 1;
export const MM_RESIDUAL = 2;
export const MM_ACCUMULATE = 4;
export const MM_GELU = 8;
export const MM_GELU_GRAD = 16;

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
  const aligned = (b: Bindable | undefined) => !b || ((asSlice(b).offset ?? 0) & 3) === 0;
  if (![x.a, x.b, x.bias, x.residual, x.c, x.aux].every(aligned)) return null;
  const m4 = (n: number) => n % 4 === 0;
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
  const four = N % 4 === 0 && [dC, db].every((b) => ((asSlice(b).offset ?? 0) & 3) === 0);
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

const lnUniforms = (R: number, D: number, eps: number, flags: number, gOff = 0, bOff = 0) =>
  uniforms([
    ['u', R],
    ['u', D],
    ['f', eps],
    ['u', flags],
    ['u', gOff],
    ['u', bOff],
    ['u', 0],
    ['u', 0],
  ]);

export function layerNormForward(
  x: Bindable,
  gamma: Bindable,
  beta: Bindable,
  y: Bindable,
  stats: Bindable,
  R: number,
  D: number,
  eps: number,
): DispatchSpec {
  return {
    shader: 'layernorm.wgsl',
    entry: 'forward',
    bindings: [
      ['r', x],
      ['r', gamma],
      ['r', beta],
      ['w', y],
      ['w', stats],
    ],
    uniforms: lnUniforms(R, D, eps, 0),
    workgroups: [Math.ceil(R / 64)],
    label: 'layernorm',
  };
}

export function layerNormBackwardDx(
  x: Bindable,
  gamma: Bindable,
  dy: Bindable,
  stats: Bindable,
  dx: Bindable,
  R: number,
  D: number,
  accumulate: boolean,
): DispatchSpec {
  return {
    shader: 'layernorm.wgsl',
    entry: 'backward_dx',
    bindings: [
      ['r', x],
      ['r', gamma],
      ['r', dy],
      ['r', stats],
      ['w', dx],
    ],
    uniforms: lnUniforms(R, D, 0, accumulate ? 4 : 0),
    workgroups: [Math.ceil(R / 64)],
    label: 'layernorm_bwd_dx',
  };
}

/** dγ, dβ += into the flat gradient buffer at gOff, bOff (floats). */
export function layerNormBackwardParams(
  x: Bindable,
  dy: Bindable,
  stats: Bindable,
  grads: Bindable,
  gOff: number,
  bOff: number,
  R: number,
  D: number,
): DispatchSpec {
  return {
    shader: 'layernorm.wgsl',
    entry: 'backward_params',
    bindings: [
      ['r', x],
      ['r', dy],
      ['r', stats],
      ['w', grads],
    ],
    uniforms: lnUniforms(R, D, 0, 0, gOff, bOff),
    workgroups: [Math.ceil(D / 64)],
    label: 'layernorm_bwd_params',
  };
}

/** h = gelu(pre) over n floats (n a multiple of 4). */
export function geluForward(pre: Bindable, h: Bindable, n: number): DispatchSpec {
  if (n % 4 !== 0) throw new Error(`gelu: ${n} floats, not a multiple of 4`);
  return {
    shader: 'gelu.wgsl',
    entry: 'forward',
    bindings: [
      ['r', pre],
      ['w', h],
    ],
    uniforms: u32s(n, 0, 0, 0),
    workgroups: grid2d(Math.ceil(n / 4 / 64)),
    label: 'gelu',
  };
}

/** dpre = dh · gelu'(pre) over n floats. */
export function geluBackward(pre: Bindable, dh: Bindable, dpre: Bindable, n: number): DispatchSpec {
  if (n % 4 !== 0) throw new Error(`gelu: ${n} floats, not a multiple of 4`);
  return {
    shader: 'gelu.wgsl',
    entry: 'backward',
    bindings: [
      ['r', pre],
      ['r', dh],
      ['w', dpre],
    ],
    uniforms: u32s(n, 0, 0, 0),
    workgroups: grid2d(Math.ceil(n / 4 / 64)),
    label: 'gelu_bwd',
  };
}

/**
 * The embedding's gradients over R rows into the flat gradient buffer: dwte[ids[r]] += dx[r] at
 * wteOff, and (wpeOff given) dwpe[positions[r]] += dx[r] for learned positions.
 */
export function embeddingBackward(
  ids: Bindable,
  dx: Bindable,
  grads: Bindable,
  R: number,
  D: number,
  wteOff: number,
  positions: { buffer: Bindable; wpeOff: number } | null,
): DispatchSpec[] {
  const u = u32s(1, R, D, wteOff, positions?.wpeOff ?? 0, 0, 0, 0);
  const spec = (entry: string, extra: DispatchSpec['bindings']): DispatchSpec => ({
    shader: 'embedding.wgsl',
    entry,
    bindings: [['r', ids], ['r', dx], ['w', grads], ...extra],
    uniforms: u,
    workgroups: [Math.ceil(D / 64)],
    label: `embedding_${entry.replace('backward_', 'bwd_')}`,
  });
  return [
    spec('backward_wte', []),
    ...(positions ? [spec('backward_wpe', [['r', positions.buffer]])] : []),
  ];
}

export interface AttentionShape {
  B: number;
  T: number;
  H: number;
  hd: number;
  /**
   * Key/value heads (grouped-query attention; default H): qkv rows are (H + 2·kvH)·hd wide,
   * query head h reads kv head h / (H / kvH).
   */
  kvH?: number;
}

const attnUniforms = (
  { B, T, H, hd, kvH = H }: AttentionShape,
  C = 0,
  qStride = 0,
  segments = false,
) => {
  if (H % kvH !== 0) throw new Error(`attention: ${H} query heads are not a multiple of ${kvH}`);
  return uniforms([
    ['u', B],
    ['u', T],
    ['u', H],
    ['u', hd],
    ['f', 1 / Math.sqrt(hd)],
    ['u', C],
    ['u', kvH],
    ['u', qStride],
    ['u', segments ? 1 : 0],
    ['u', 0],
    ['u', 0],
    ['u', 0],
  ]);
};

/** The largest head size the attention kernels take. */
export const MAX_HEAD_DIM = 128;

function checkHd(hd: number) {
  if (hd > MAX_HEAD_DIM || hd % 4 !== 0)
    throw new Error(`attention: head size ${hd} is not a multiple of 4 ≤ ${MAX_HEAD_DIM}`);
}

/**
 * attention.wgsl keeps q, k, v and the accumulators in registers as arrays of MAX_V4 vec4s (a
 * const: function-scope arrays cannot be sized by an override). Heads up to 64 use the file as
 * it is; larger ones (Qwen3's 128) a variant with MAX_V4 = 32.
 */
export function attentionShader(hd: number): string {
  return hd > 64 ? 'attention.wgsl?MAX_V4=32' : 'attention.wgsl';
}

type AttentionPass = 'forward' | 'backward_dq' | 'backward_dkdv' | 'decode';

/**
 * The version of a pass for heads of hd floats: heads up to 16 (the tiny presets', the test
 * checkpoints') run the _h16 versions, a head in a struct of four vec4s, which CPU drivers keep
 * in registers where they keep the arrays in memory; the same bits.
 */
export function attentionEntry(pass: AttentionPass, hd: number): string {
  return hd <= 16 ? `${pass}_h16` : pass;
}

/** The pipeline constants of a pass (the _h16 versions' block is fixed at 4). */
function attentionConstants(
  pass: Exclude<AttentionPass, 'decode'>,
  hd: number,
): Record<string, number> {
  return hd <= 16 ? { HD: hd } : { HD: hd, QB: attentionBlock(pass, hd) };
}

/**
 * attention.wgsl's QB: queries (keys in dk/dv) per invocation. Each key and value loaded then
 * serves QB queries; dk/dv keeps 4·QB·hd floats live, so it takes fewer at large heads.
 */
export function attentionBlock(entry: 'forward' | 'backward_dq' | 'backward_dkdv', hd: number) {
  // Measured on lavapipe (bench/webgpuProfile.ts): dk/dv at hd 16 takes 4 (49 ms against 54
  // at 2), at hd 32 2 (37 ms against 69 at 4 and 50 at 1); the others take 4 at both.
  // Above 64 (not tuned): fewer, so the 128-wide rows' registers do not multiply by four.
  if (hd > 64) return entry === 'backward_dkdv' ? 1 : 2;
  return entry === 'backward_dkdv' && hd > 16 ? 2 : 4;
}

/**
 * `segments`: rows that hold a prompt once and then its completions (attention.wgsl's SEG:
 * [lo per position | pre per row], packedBatch.ts writes it); without it, plain causal rows.
 */
export function attentionForward(
  s: AttentionShape,
  qkv: Bindable,
  y: Bindable,
  lse: Bindable,
  segments?: Bindable,
): DispatchSpec {
  checkHd(s.hd);
  return {
    shader: attentionShader(s.hd),
    entry: attentionEntry('forward', s.hd),
    bindings: [
      ['r', qkv],
      ['w', y],
      ['w', lse],
      // Unread without segments; qkv stands in for the binding.
      ['r', segments ?? qkv],
    ],
    uniforms: attnUniforms(s, 0, 0, segments !== undefined),
    constants: attentionConstants('forward', s.hd),
    workgroups: grid2d(
      Math.ceil((s.B * s.H * Math.ceil(s.T / attentionBlock('forward', s.hd))) / 64),
    ),
    label: 'attention',
  };
}

export function attentionBackward(
  s: AttentionShape,
  qkv: Bindable,
  y: Bindable,
  dy: Bindable,
  lse: Bindable,
  dqkv: Bindable,
  dsum: Bindable,
  segments?: Bindable,
): DispatchSpec[] {
  const blocks = (entry: 'backward_dq' | 'backward_dkdv') => {
    const qb = attentionBlock(entry, s.hd);
    // dk/dv runs per kv head (summing over its query heads).
    const heads = entry === 'backward_dkdv' ? (s.kvH ?? s.H) : s.H;
    return {
      constants: attentionConstants(entry, s.hd),
      workgroups: grid2d(Math.ceil((s.B * heads * Math.ceil(s.T / qb)) / 64)),
    };
  };
  return [
    {
      shader: attentionShader(s.hd),
      entry: attentionEntry('backward_dq', s.hd),
      bindings: [
        ['r', qkv],
        ['r', y],
        ['r', dy],
        ['r', lse],
        ['w', dqkv],
        ['w', dsum],
        ['r', segments ?? qkv],
      ],
      uniforms: attnUniforms(s, 0, 0, segments !== undefined),
      ...blocks('backward_dq'),
      label: 'attention_bwd_dq',
    },
    {
      shader: attentionShader(s.hd),
      entry: attentionEntry('backward_dkdv', s.hd),
      bindings: [
        ['r', qkv],
        ['r', dy],
        ['r', lse],
        ['r', dsum],
        ['w', dqkv],
        ['r', segments ?? qkv],
      ],
      uniforms: attnUniforms(s, 0, 0, segments !== undefined),
      ...blocks('backward_dkdv'),
      label: 'attention_bwd_dkdv',
    },
  ];
}

/**
 * One decode step's attention over a KV cache [B, C, kvH·hd]: q [B, D] (or q in rows of
 * qStride floats, e.g. a qkv row), lens [B] → y [B, D], D = H·hd.
 */
export function attentionDecode(
  B: number,
  H: number,
  hd: number,
  C: number,
  q: Bindable,
  k: Bindable,
  v: Bindable,
  lens: Bindable,
  y: Bindable,
  gqa: { kvH?: number; qStride?: number } = {},
): DispatchSpec {
  checkHd(hd);
  return {
    shader: attentionShader(hd),
    entry: attentionEntry('decode', hd),
    bindings: [
      ['r', q],
      ['r', k],
      ['r', v],
      ['r', lens],
      ['w', y],
    ],
    uniforms: attnUniforms({ B, T: 1, H, hd, kvH: gqa.kvH ?? H }, C, gqa.qStride ?? 0),
    constants: { HD: hd },
    workgroups: [Math.ceil((B * H) / 64)],
    label: 'attention_decode',
  };
}

/**
 * The k and v parts of qkv rows [B·T, (H + 2·kvH)·hd] into the caches [B, C, kvH·hd], row
 * (b, t) at position pos[b] + t.
 */
export function attentionCacheStore(
  s: AttentionShape,
  C: number,
  qkv: Bindable,
  pos: Bindable,
  kCache: Bindable,
  vCache: Bindable,
): DispatchSpec {
  checkHd(s.hd);
  return {
    shader: attentionShader(s.hd),
    entry: 'cache_store',
    bindings: [
      ['r', qkv],
      ['r', pos],
      ['w', kCache],
      ['w', vCache],
    ],
    uniforms: attnUniforms(s, C),
    constants: { HD: s.hd },
    workgroups: grid2d(Math.ceil((s.B * s.T * (s.kvH ?? s.H) * s.hd) / 4 / 64)),
    label: 'attention_cache_store',
  };
}

/** stride: the logits' row stride (≥ V; the engine pads rows to a multiple of 4). */
const headUniforms = (R: number, V: number, invTemp: number, stride: number) => {
  if (stride < V) throw new Error(`head_logprob: row stride ${stride} < vocabulary ${V}`);
  return uniforms([
    ['u', R],
    ['u', V],
    ['f', invTemp],
    ['u', stride],
  ]);
};

/** out [3R] = logp | entropy | lse. */
export function headLogprobForward(
  logits: Bindable,
  targets: Bindable,
  out: Bindable,
  R: number,
  V: number,
  invTemp = 1,
  stride = V,
): DispatchSpec {
  return {
    shader: 'head_logprob.wgsl',
    entry: 'forward',
    bindings: [
      ['r', logits],
      ['r', targets],
      ['w', out],
    ],
    uniforms: headUniforms(R, V, invTemp, stride),
    workgroups: grid2d(Math.ceil(R / 64)),
    label: 'head_logprob',
  };
}

/** In place: logits ← g[r]·inv_temp·(onehot − p). */
export function headLogprobBackward(
  targets: Bindable,
  g: Bindable,
  stats: Bindable,
  logits: Bindable,
  R: number,
  V: number,
  invTemp = 1,
  stride = V,
): DispatchSpec {
  return {
    shader: 'head_logprob.wgsl',
    entry: 'backward',
    bindings: [
      ['r', targets],
      ['r', g],
      ['r', stats],
      ['w', logits],
    ],
    uniforms: headUniforms(R, V, invTemp, stride),
    workgroups: grid2d(Math.ceil((R * V) / 64)),
    label: 'head_logprob_bwd',
  };
}

/** dst[i, :] = src[sel[i], :] for i < n (D a multiple of 4). */
export const gatherRows = (
  src: Bindable,
  sel: Bindable,
  dst: Bindable,
  n: number,
  R: number,
  D: number,
) => rowsDispatch('gather', src, sel, dst, n, R, D);

/** dst[r, :] = src[inv[r], :] where inv[r] < n, else 0, for the R rows (D a multiple of 4). */
export const scatterRows = (
  src: Bindable,
  inv: Bindable,
  dst: Bindable,
  n: number,
  R: number,
  D: number,
) => rowsDispatch('scatter', src, inv, dst, n, R, D);

function rowsDispatch(
  entry: 'gather' | 'scatter',
  src: Bindable,
  index: Bindable,
  dst: Bindable,
  n: number,
  R: number,
  D: number,
): DispatchSpec {
  if (D % 4 !== 0) throw new Error(`${entry} rows: width ${D} is not a multiple of 4`);
  return {
    shader: 'rows.wgsl',
    entry,
    bindings: [
      ['r', src],
      ['r', index],
      ['w', dst],
    ],
    uniforms: u32s(n, R, D, 0),
    // Sized for n = R, so a program built once serves every n ≤ R (its uniforms rewritten).
    workgroups: grid2d(Math.ceil((R * D) / 4 / 64)),
    label: `${entry}_rows`,
  };
}

export interface AdamWStep {
  lr: number;
  beta1: number;
  beta2: number;
  eps: number;
  weightDecay: number;
  /** 1 − β1^t, 1 − β2^t. */
  c1: number;
  c2: number;
  maxGradNorm: number;
}

export const NORM_PARTIALS = 256;

export function adamwUniforms(n: number, s: AdamWStep): ArrayBuffer {
  const chunk = Math.ceil(n / NORM_PARTIALS);
  return uniforms([
    ['u', n],
    ['u', chunk],
    ['u', NORM_PARTIALS],
    ['u', 0],
    ['f', s.lr],
    ['f', s.beta1],
    ['f', s.beta2],
    ['f', s.eps],
    ['f', s.weightDecay],
    ['f', s.c1],
    ['f', s.c2],
    ['f', s.maxGradNorm],
  ]);
}

/** The guarded step: norm partials, norm + guard + clip coefficient (stats), update. */
export function adamw(
  n: number,
  u: ArrayBuffer,
  b: {
    grads: Bindable;
    partials: Bindable;
    loss: Bindable;
    stats: Bindable;
    decay: Bindable;
    params: Bindable;
    m: Bindable;
    v: Bindable;
  },
): DispatchSpec[] {
  return [
    {
      shader: 'adamw.wgsl',
      entry: 'norm_partial',
      bindings: [
        ['r', b.grads],
        ['w', b.partials],
      ],
      uniforms: u,
      workgroups: [Math.ceil(NORM_PARTIALS / 64)],
      label: 'grad_norm_partial',
    },
    {
      shader: 'adamw.wgsl',
      entry: 'norm_final',
      bindings: [
        ['r', b.partials],
        ['r', b.loss],
        ['w', b.stats],
      ],
      uniforms: u,
      workgroups: [1],
      label: 'grad_norm_final',
    },
    {
      shader: 'adamw.wgsl',
      entry: 'update',
      bindings: [
        ['r', b.grads],
        ['r', b.decay],
        ['r', b.stats],
        ['w', b.params],
        ['w', b.m],
        ['w', b.v],
      ],
      uniforms: u,
      workgroups: grid2d(Math.ceil(n / 64)),
      label: 'adamw_update',
    },
  ];
}

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
