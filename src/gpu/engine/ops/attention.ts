// attention.wgsl: causal grouped-query attention over packed rows (forward, dq, dk|dv), over a
// KV cache (decode), and the cache's store; a build per head-size range.
import { grid2d } from '../../kernels/runKernel';
import { type Bindable, type DispatchSpec, uniforms } from '../runtime';

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
