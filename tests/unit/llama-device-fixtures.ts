// Random Llama-family checkpoints by Hugging Face name (any config, F32/F16/BF16, seeded) and a
// plain float64 forward of Hugging Face's semantics over them, for the device forward's tests
// and benches. The weights are read as stored (16-bit decoded per row), so the reference and
// the device see the same rounded numbers.
import type { WeightTensor } from '../../src/gpu/engine/deviceCheckpoint';
import type { WeightDtype } from '../../src/gpu/engine/ops';
import type { LlamaConfig } from '../../src/model/families/llamaConfig';
import { f16ToF32 } from '../../src/model/halfFloat';

export function llamaConfig(over: Partial<LlamaConfig>): LlamaConfig {
  return {
    family: 'llama',
    modelType: 'llama',
    vocabSize: 101,
    hiddenSize: 32,
    intermediateSize: 44,
    numLayers: 2,
    numHeads: 4,
    numKvHeads: 2,
    headDim: 8,
    ropeTheta: 10000,
    rmsNormEps: 1e-6,
    attentionBias: false,
    qkNorm: false,
    tieWordEmbeddings: true,
    maxPositionEmbeddings: 2048,
    ...over,
  };
}

/** The tensors a config names, with their shapes. */
export function llamaShapes(c: LlamaConfig): [string, number[]][] {
  const hd = c.headDim;
  const out: [string, number[]][] = [['model.embed_tokens.weight', [c.vocabSize, c.hiddenSize]]];
  for (let i = 0; i < c.numLayers; i++) {
    const at = `model.layers.${i}.`;
    out.push([`${at}input_layernorm.weight`, [c.hiddenSize]]);
    for (const [n, rows] of [
      ['q', c.numHeads * hd],
      ['k', c.numKvHeads * hd],
      ['v', c.numKvHeads * hd],
    ] as [string, number][]) {
      out.push([`${at}self_attn.${n}_proj.weight`, [rows, c.hiddenSize]]);
      if (c.attentionBias) out.push([`${at}self_attn.${n}_proj.bias`, [rows]]);
    }
    if (c.qkNorm)
      out.push([`${at}self_attn.q_norm.weight`, [hd]], [`${at}self_attn.k_norm.weight`, [hd]]);
    out.push(
      [`${at}self_attn.o_proj.weight`, [c.hiddenSize, c.numHeads * hd]],
      [`${at}post_attention_layernorm.weight`, [c.hiddenSize]],
      [`${at}mlp.gate_proj.weight`, [c.intermediateSize, c.hiddenSize]],
      [`${at}mlp.up_proj.weight`, [c.intermediateSize, c.hiddenSize]],
      [`${at}mlp.down_proj.weight`, [c.hiddenSize, c.intermediateSize]],
    );
  }
  out.push(['model.norm.weight', [c.hiddenSize]]);
  if (!c.tieWordEmbeddings) out.push(['lm_head.weight', [c.vocabSize, c.hiddenSize]]);
  return out;
}

/** xorshift32 floats in [−scale, scale) (fast enough for half a billion weights). */
function fill(out: Float32Array, seed: number, scale: number, center = 0) {
  let s = seed >>> 0 || 1;
  for (let i = 0; i < out.length; i++) {
    s ^= s << 13;
    s ^= s >>> 17;
    s ^= s << 5;
    out[i] = center + ((s >>> 0) / 2147483648 - 1) * scale;
  }
}

/** f32 → 16-bit bits, round to nearest even, in bulk. */
function toHalves(dtype: 'F16' | 'BF16', f: Float32Array): Uint16Array {
  const out = new Uint16Array(f.length);
  if (dtype === 'BF16') {
    const u = new Uint32Array(f.buffer, f.byteOffset, f.length);
    for (let i = 0; i < f.length; i++) {
      const x = u[i] as number;
      out[i] = ((x + 0x7fff + ((x >>> 16) & 1)) >>> 16) & 0xffff;
    }
    return out;
  }
  // F16 via the bits of f32 (normal range only: the fixtures' weights are small but not tiny)
  const u = new Uint32Array(f.buffer, f.byteOffset, f.length);
  for (let i = 0; i < f.length; i++) {
    const x = u[i] as number;
    const e = ((x >>> 23) & 0xff) - 112;
    if (e <= 0) {
      out[i] = (x >>> 16) & 0x8000;
      continue;
    }
    const mant = x & 0x7fffff;
    let h = (e << 10) | (mant >>> 13);
    const rest = mant & 0x1fff;
    if (rest > 0x1000 || (rest === 0x1000 && h & 1)) h++;
    out[i] = ((x >>> 16) & 0x8000) | h;
  }
  return out;
}

/**
 * Random weights for every tensor of the config in `dtype`: matrices uniform ±scale, norms
 * around 1, biases ±0.1. Seeded per tensor.
 */
export function randomLlama(
  c: LlamaConfig,
  dtype: WeightDtype,
  seed: number,
  scale = 0.1,
): Map<string, WeightTensor> {
  const out = new Map<string, WeightTensor>();
  llamaShapes(c).forEach(([name, shape], i) => {
    const n = shape.reduce((a, b) => a * b, 1);
    const f = new Float32Array(n);
    if (name.endsWith('norm.weight')) fill(f, seed * 7919 + i, 0.3, 1);
    else if (name.endsWith('.bias')) fill(f, seed * 7919 + i, 0.1);
    else fill(f, seed * 7919 + i, name.includes('embed') || name.includes('lm_head') ? 1 : scale);
    out.set(name, { dtype, shape, data: dtype === 'F32' ? f : toHalves(dtype, f) });
  });
  return out;
}

const F16_TABLE = (() => {
  const t = new Float32Array(65536);
  for (let i = 0; i < 65536; i++) t[i] = f16ToF32(i);
  return t;
})();

/** Row j of W [N, K] as float64 (decoded as stored). */
function rowReader(t: WeightTensor): (j: number, out: Float64Array) => void {
  const K = t.shape[1] as number;
  if (t.dtype === 'F32') {
    const d = t.data as Float32Array;
    return (j, out) => {
      for (let k = 0; k < K; k++) out[k] = d[j * K + k] as number;
    };
  }
  const d = t.data as Uint16Array;
  if (t.dtype === 'F16')
    return (j, out) => {
      for (let k = 0; k < K; k++) out[k] = F16_TABLE[d[j * K + k] as number] as number;
    };
  const f = new Float32Array(1);
  const u = new Uint32Array(f.buffer);
  return (j, out) => {
    for (let k = 0; k < K; k++) {
      u[0] = (d[j * K + k] as number) << 16;
      out[k] = f[0] as number;
    }
  };
}

function vec(t: WeightTensor): Float64Array {
  const n = t.shape[0] as number;
  const out = new Float64Array(n);
  rowReader({ ...t, shape: [1, n] })(0, out);
  return out;
}

/** y_t = W·x_t (+ b) for each row x_t. */
function linear(xs: Float64Array[], w: WeightTensor, b?: WeightTensor): Float64Array[] {
  const [N, K] = w.shape as [number, number];
  const read = rowReader(w);
  const row = new Float64Array(K);
  const bias = b ? vec(b) : null;
  const ys = xs.map(() => new Float64Array(N));
  for (let j = 0; j < N; j++) {
    read(j, row);
    for (let t = 0; t < xs.length; t++) {
      const x = xs[t] as Float64Array;
      let s = bias ? (bias[j] as number) : 0;
      for (let k = 0; k < K; k++) s += (x[k] as number) * (row[k] as number);
      (ys[t] as Float64Array)[j] = s;
    }
  }
  return ys;
}

function rms(x: Float64Array, w: Float64Array, eps: number, off = 0, n = x.length): void {
  let ss = 0;
  for (let i = 0; i < n; i++) ss += (x[off + i] as number) ** 2;
  const s = 1 / Math.sqrt(ss / n + eps);
  for (let i = 0; i < n; i++) x[off + i] = (x[off + i] as number) * s * (w[i] as number);
}

/** The logits at every position [T][vocab], Hugging Face's forward in float64. */
export function llamaReferenceLogits(
  c: LlamaConfig,
  w: Map<string, WeightTensor>,
  ids: readonly number[],
  lastOnly = true,
): Float64Array[] {
  const get = (name: string) => {
    const t = w.get(name);
    if (!t) throw new Error(`reference: no ${name}`);
    return t;
  };
  const { numHeads: H, numKvHeads: kvH, headDim: hd, hiddenSize: D } = c;
  const G = H / kvH;
  const T = ids.length;
  const emb = get('model.embed_tokens.weight');
  const read = rowReader(emb);
  let x = ids.map((id) => {
    const r = new Float64Array(D);
    read(id, r);
    return r;
  });
  const inv = Array.from({ length: hd / 2 }, (_, i) => 1 / c.ropeTheta ** ((2 * i) / hd));
  const ropeAt = (v: Float64Array, off: number, pos: number) => {
    for (let i = 0; i < hd / 2; i++) {
      const a = pos * (inv[i] as number);
      const [x1, x2] = [v[off + i] as number, v[off + i + hd / 2] as number];
      v[off + i] = x1 * Math.cos(a) - x2 * Math.sin(a);
      v[off + i + hd / 2] = x2 * Math.cos(a) + x1 * Math.sin(a);
    }
  };
  for (let l = 0; l < c.numLayers; l++) {
    const at = (n: string) => get(`model.layers.${l}.${n}`);
    const xn = x.map((r) => Float64Array.from(r));
    const g1 = vec(at('input_layernorm.weight'));
    for (const r of xn) rms(r, g1, c.rmsNormEps);
    const bias = (n: string) => (c.attentionBias ? at(`self_attn.${n}_proj.bias`) : undefined);
    const q = linear(xn, at('self_attn.q_proj.weight'), bias('q'));
    const k = linear(xn, at('self_attn.k_proj.weight'), bias('k'));
    const v = linear(xn, at('self_attn.v_proj.weight'), bias('v'));
    if (c.qkNorm) {
      const qn = vec(at('self_attn.q_norm.weight'));
      const kn = vec(at('self_attn.k_norm.weight'));
      for (const r of q) for (let h = 0; h < H; h++) rms(r, qn, c.rmsNormEps, h * hd, hd);
      for (const r of k) for (let h = 0; h < kvH; h++) rms(r, kn, c.rmsNormEps, h * hd, hd);
    }
    q.forEach((r, t) => {
      for (let h = 0; h < H; h++) ropeAt(r, h * hd, t);
    });
    k.forEach((r, t) => {
      for (let h = 0; h < kvH; h++) ropeAt(r, h * hd, t);
    });
    const att = q.map(() => new Float64Array(H * hd));
    for (let t = 0; t < T; t++)
      for (let h = 0; h < H; h++) {
        const kh = Math.floor(h / G);
        const s = new Float64Array(t + 1);
        let m = Number.NEGATIVE_INFINITY;
        for (let u = 0; u <= t; u++) {
          let d = 0;
          for (let i = 0; i < hd; i++)
            d +=
              ((q[t] as Float64Array)[h * hd + i] as number) *
              ((k[u] as Float64Array)[kh * hd + i] as number);
          s[u] = d / Math.sqrt(hd);
          m = Math.max(m, s[u] as number);
        }
        let z = 0;
        for (let u = 0; u <= t; u++) z += Math.exp((s[u] as number) - m);
        for (let u = 0; u <= t; u++) {
          const p = Math.exp((s[u] as number) - m) / z;
          for (let i = 0; i < hd; i++)
            (att[t] as Float64Array)[h * hd + i] =
              ((att[t] as Float64Array)[h * hd + i] as number) +
              p * ((v[u] as Float64Array)[kh * hd + i] as number);
        }
      }
    const o = linear(att, at('self_attn.o_proj.weight'));
    x = x.map((r, t) => r.map((val, i) => val + ((o[t] as Float64Array)[i] as number)));
    const xn2 = x.map((r) => Float64Array.from(r));
    const g2 = vec(at('post_attention_layernorm.weight'));
    for (const r of xn2) rms(r, g2, c.rmsNormEps);
    const gate = linear(xn2, at('mlp.gate_proj.weight'));
    const up = linear(xn2, at('mlp.up_proj.weight'));
    const hm = gate.map((g, t) =>
      g.map((gv, i) => (gv / (1 + Math.exp(-gv))) * ((up[t] as Float64Array)[i] as number)),
    );
    const down = linear(hm, at('mlp.down_proj.weight'));
    x = x.map((r, t) => r.map((val, i) => val + ((down[t] as Float64Array)[i] as number)));
  }
  const fin = vec(get('model.norm.weight'));
  const rows = lastOnly ? [x[T - 1] as Float64Array] : x;
  for (const r of rows) rms(r, fin, c.rmsNormEps);
  return linear(rows, get(c.tieWordEmbeddings ? 'model.embed_tokens.weight' : 'lm_head.weight'));
}

/** max |a − b| / max |b|: the measure (relative to the largest logit). */
export function relativeToLargest(a: ArrayLike<number>, b: ArrayLike<number>): number {
  let err = 0;
  let top = 0;
  for (let i = 0; i < b.length; i++) {
    err = Math.max(err, Math.abs((a[i] as number) - (b[i] as number)));
    top = Math.max(top, Math.abs(b[i] as number));
  }
  return err / top;
}
