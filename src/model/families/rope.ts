// RoPE's inverse frequencies, the one place both paths take them from: the tfjs forward
// (transformer.ts' ropeTables) and the kernels' cos/sin table (ropeTable below, uploaded by
// gpu/engine/deviceTransformer.ts). Hugging Face's semantics
// (transformers' modeling_rope_utils.py: the default, `linear` and `llama3` rope types).
import type { LlamaConfig } from './llamaConfig';

/**
 * inv_freq[i] for i < headDim/2, in float64. Hugging Face computes them in float32; the tfjs
 * path rounds these to float32 as it did before scaling existed, the kernels' table keeps
 * float64, so the default rope gives the same numbers it always gave on both paths.
 */
export function ropeInverseFrequencies(
  c: Pick<LlamaConfig, 'headDim' | 'ropeTheta' | 'ropeScaling'>,
): Float64Array {
  const hd = c.headDim;
  const inv = Float64Array.from({ length: hd / 2 }, (_, i) => 1 / c.ropeTheta ** ((2 * i) / hd));
  const s = c.ropeScaling;
  if (!s) return inv;
  if (s.type === 'linear') return inv.map((f) => f / s.factor);
  // _compute_llama3_parameters: wavelengths longer than the original context / low_freq_factor
  // are stretched by factor, shorter than original / high_freq_factor kept, the band between
  // blended linearly in original / wavelen.
  const lowFreqWavelen = s.originalMaxPositionEmbeddings / s.lowFreqFactor;
  const highFreqWavelen = s.originalMaxPositionEmbeddings / s.highFreqFactor;
  return inv.map((f) => {
    const wavelen = (2 * Math.PI) / f;
    if (wavelen > lowFreqWavelen) return f / s.factor;
    if (wavelen < highFreqWavelen) return f;
    const smooth =
      (s.originalMaxPositionEmbeddings / wavelen - s.lowFreqFactor) /
      (s.highFreqFactor - s.lowFreqFactor);
    return ((1 - smooth) * f) / s.factor + smooth * f;
  });
}

/**
 * cos and sin of every position below `positions` and pair i < hd/2, as rope.wgsl reads them and
 * the tfjs forward gathers them: [positions, hd] with cos at p·hd + i, sin at p·hd + hd/2 + i.
 * The angle is Hugging Face's: inv_freq a float32 buffer, position·inv_freq a float32 product
 * (its rotary embedding multiplies in float32 with autocast off). invFreq: ropeInverseFrequencies,
 * so a rope_scaling rescales both paths alike.
 */
export function ropeTable(positions: number, invFreq: ArrayLike<number>): Float32Array {
  const hd = 2 * invFreq.length;
  const table = new Float32Array(positions * hd);
  for (let p = 0; p < positions; p++) ropeRow(p, invFreq, table, p * hd);
  return table;
}

/** One position's row of ropeTable into `out` at `at` (hd/2 cos, then hd/2 sin). */
export function ropeRow(
  position: number,
  invFreq: ArrayLike<number>,
  out: Float32Array,
  at: number,
): void {
  const half = invFreq.length;
  for (let i = 0; i < half; i++) {
    const angle = Math.fround(position * Math.fround(invFreq[i] as number));
    out[at + i] = Math.cos(angle);
    out[at + half + i] = Math.sin(angle);
  }
}
