// Plain-TypeScript float64 references for the engine's kernels (shaders/*.wgsl), Hugging Face's
// semantics where a kernel stands for one of its modules (RMSNorm, rotate-half RoPE, SwiGLU): each
// kernel's test runs both on fresh seeded inputs and compares. Row-major arrays throughout.

type Arr = ArrayLike<number>;

/** C[M,N] = A[M,K]·B[K,N] (+ bias) (+ residual) (+ C0 when accumulating); optional GELU. */
export function matmulRef(
  a: Arr,
  b: Arr,
  M: number,
  N: number,
  K: number,
  o: { bias?: Arr; residual?: Arr; accumulate?: Arr; geluGradOf?: Arr } = {},
): Float64Array {
  const c = new Float64Array(M * N);
  for (let i = 0; i < M; i++)
    for (let j = 0; j < N; j++) {
      let s = 0;
      for (let k = 0; k < K; k++) s += (a[i * K + k] ?? 0) * (b[k * N + j] ?? 0);
      if (o.bias) s += o.bias[j] ?? 0;
      if (o.residual) s += o.residual[i * N + j] ?? 0;
      if (o.geluGradOf) s *= geluGradRef(o.geluGradOf[i * N + j] ?? 0);
      if (o.accumulate) s += o.accumulate[i * N + j] ?? 0;
      c[i * N + j] = s;
    }
  return c;
}

export function transposeRef(a: Arr, rows: number, cols: number): Float64Array {
  const t = new Float64Array(rows * cols);
  for (let i = 0; i < rows; i++)
    for (let j = 0; j < cols; j++) t[j * rows + i] = a[i * cols + j] ?? 0;
  return t;
}

const GELU_C = Math.sqrt(2 / Math.PI);

export function geluRef(x: number): number {
  return 0.5 * x * (1 + Math.tanh(GELU_C * (x + 0.044715 * x ** 3)));
}

export function geluGradRef(x: number): number {
  const t = Math.tanh(GELU_C * (x + 0.044715 * x ** 3));
  return 0.5 * (1 + t) + 0.5 * x * (1 - t * t) * GELU_C * (1 + 3 * 0.044715 * x * x);
}

export function layerNormRef(x: Arr, g: Arr, b: Arr, R: number, D: number, eps: number) {
  const y = new Float64Array(R * D);
  const mean = new Float64Array(R);
  const rstd = new Float64Array(R);
  for (let r = 0; r < R; r++) {
    let m = 0;
    for (let j = 0; j < D; j++) m += x[r * D + j] ?? 0;
    m /= D;
    let v = 0;
    for (let j = 0; j < D; j++) v += ((x[r * D + j] ?? 0) - m) ** 2;
    const s = 1 / Math.sqrt(v / D + eps);
    mean[r] = m;
    rstd[r] = s;
    for (let j = 0; j < D; j++)
      y[r * D + j] = ((x[r * D + j] ?? 0) - m) * s * (g[j] ?? 0) + (b[j] ?? 0);
  }
  return { y, mean, rstd };
}

export function layerNormBackwardRef(x: Arr, g: Arr, dy: Arr, R: number, D: number, eps: number) {
  const { mean, rstd } = layerNormRef(x, g, new Float64Array(D), R, D, eps);
  const dx = new Float64Array(R * D);
  const dg = new Float64Array(D);
  const db = new Float64Array(D);
  for (let r = 0; r < R; r++) {
    const s = rstd[r] ?? 0;
    const m = mean[r] ?? 0;
    let m1 = 0;
    let m2 = 0;
    for (let j = 0; j < D; j++) {
      const gj = (dy[r * D + j] ?? 0) * (g[j] ?? 0);
      const xh = ((x[r * D + j] ?? 0) - m) * s;
      m1 += gj;
      m2 += gj * xh;
      dg[j] = (dg[j] ?? 0) + (dy[r * D + j] ?? 0) * xh;
      db[j] = (db[j] ?? 0) + (dy[r * D + j] ?? 0);
    }
    m1 /= D;
    m2 /= D;
    for (let j = 0; j < D; j++) {
      const xh = ((x[r * D + j] ?? 0) - m) * s;
      dx[r * D + j] = s * ((dy[r * D + j] ?? 0) * (g[j] ?? 0) - m1 - xh * m2);
    }
  }
  return { dx, dg, db };
}

/** x [B·T, D] from ids [B·T]; positions t = r mod T. */
/** Row r at position r mod T, or positions[r] where given (packed rows). */
export function embeddingRef(
  ids: Arr,
  wte: Arr,
  wpe: Arr,
  B: number,
  T: number,
  D: number,
  positions?: Arr,
) {
  const x = new Float64Array(B * T * D);
  for (let r = 0; r < B * T; r++) {
    const pos = positions ? (positions[r] ?? 0) : r % T;
    for (let c = 0; c < D; c++)
      x[r * D + c] = (wte[(ids[r] ?? 0) * D + c] ?? 0) + (wpe[pos * D + c] ?? 0);
  }
  return x;
}

export function embeddingBackwardRef(
  ids: Arr,
  dx: Arr,
  V: number,
  B: number,
  T: number,
  D: number,
  positions?: Arr,
) {
  const dwte = new Float64Array(V * D);
  const dwpe = new Float64Array(T * D);
  for (let r = 0; r < B * T; r++) {
    const pos = positions ? (positions[r] ?? 0) : r % T;
    for (let c = 0; c < D; c++) {
      const g = dx[r * D + c] ?? 0;
      const i = (ids[r] ?? 0) * D + c;
      dwte[i] = (dwte[i] ?? 0) + g;
      dwpe[pos * D + c] = (dwpe[pos * D + c] ?? 0) + g;
    }
  }
  return { dwte, dwpe };
}

/**
 * Where part (0 q, 1 k, 2 v) of head h (a query head; for k and v its kv head h / (H / kvH))
 * lies in qkv rows [B·T, (H + 2·kvH)·hd]: kvH = H is GPT-2's [q | k | v].
 */
export function qkvIndex(T: number, H: number, hd: number, kvH: number) {
  const W = (H + 2 * kvH) * hd;
  const G = H / kvH;
  return (b: number, t: number, part: number, h: number, i: number) =>
    (b * T + t) * W +
    (part === 0 ? h * hd : H * hd + (part - 1) * kvH * hd + Math.floor(h / G) * hd) +
    i;
}

/**
 * Whether query t of row b sees key u: causal, and with `segments` ([lo per position | pre per
 * row], rows that hold a prompt and then its completions) only the prompt's first pre[b] keys
 * and its own segment's, from lo[t] on.
 */
function seesKey(B: number, T: number, segments?: Arr) {
  return (b: number, t: number, u: number) =>
    u <= t && (!segments || u < (segments[B * T + b] ?? 0) || u >= (segments[b * T + t] ?? 0));
}

/**
 * Causal attention on qkv [B·T, (H + 2·kvH)·hd] → y [B·T, H·hd], and its P per (b, h) for the
 * backward; kvH < H is grouped-query attention; `segments` as seesKey.
 */
export function attentionRef(
  qkv: Arr,
  B: number,
  T: number,
  H: number,
  hd: number,
  kvH = H,
  segments?: Arr,
) {
  const D = H * hd;
  const at = qkvIndex(T, H, hd, kvH);
  const sees = seesKey(B, T, segments);
  const scale = 1 / Math.sqrt(hd);
  const y = new Float64Array(B * T * D);
  const probs: Float64Array[] = [];
  for (let b = 0; b < B; b++)
    for (let h = 0; h < H; h++) {
      const P = new Float64Array(T * T);
      for (let t = 0; t < T; t++) {
        let m = Number.NEGATIVE_INFINITY;
        const s = new Float64Array(t + 1);
        for (let u = 0; u <= t; u++) {
          let dot = 0;
          for (let i = 0; i < hd; i++)
            dot += (qkv[at(b, t, 0, h, i)] ?? 0) * (qkv[at(b, u, 1, h, i)] ?? 0);
          s[u] = sees(b, t, u) ? dot * scale : Number.NEGATIVE_INFINITY;
          m = Math.max(m, s[u] ?? 0);
        }
        let l = 0;
        for (let u = 0; u <= t; u++) l += Math.exp((s[u] ?? 0) - m);
        for (let u = 0; u <= t; u++) P[t * T + u] = Math.exp((s[u] ?? 0) - m) / l;
        for (let i = 0; i < hd; i++) {
          let acc = 0;
          for (let u = 0; u <= t; u++) acc += (P[t * T + u] ?? 0) * (qkv[at(b, u, 2, h, i)] ?? 0);
          y[(b * T + t) * D + h * hd + i] = acc;
        }
      }
      probs.push(P);
    }
  return { y, probs };
}

export function attentionBackwardRef(
  qkv: Arr,
  dy: Arr,
  B: number,
  T: number,
  H: number,
  hd: number,
  kvH = H,
  segments?: Arr,
) {
  const D = H * hd;
  const scale = 1 / Math.sqrt(hd);
  const { probs } = attentionRef(qkv, B, T, H, hd, kvH, segments);
  const dqkv = new Float64Array(B * T * (H + 2 * kvH) * hd);
  const at = qkvIndex(T, H, hd, kvH);
  for (let b = 0; b < B; b++)
    for (let h = 0; h < H; h++) {
      const P = probs[b * H + h] as Float64Array;
      for (let t = 0; t < T; t++) {
        // dP[t,u] = dy_t · v_u; dS = P ⊙ (dP − Σ_u P dP)
        const dP = new Float64Array(t + 1);
        let dsum = 0;
        for (let u = 0; u <= t; u++) {
          let d = 0;
          for (let i = 0; i < hd; i++)
            d += (dy[(b * T + t) * D + h * hd + i] ?? 0) * (qkv[at(b, u, 2, h, i)] ?? 0);
          dP[u] = d;
          dsum += (P[t * T + u] ?? 0) * d;
        }
        for (let u = 0; u <= t; u++) {
          const p = P[t * T + u] ?? 0;
          const dS = p * ((dP[u] ?? 0) - dsum);
          for (let i = 0; i < hd; i++) {
            const qi = at(b, t, 0, h, i);
            const ki = at(b, u, 1, h, i);
            const vi = at(b, u, 2, h, i);
            dqkv[qi] = (dqkv[qi] ?? 0) + dS * scale * (qkv[ki] ?? 0);
            dqkv[ki] = (dqkv[ki] ?? 0) + dS * scale * (qkv[qi] ?? 0);
            dqkv[vi] = (dqkv[vi] ?? 0) + p * (dy[(b * T + t) * D + h * hd + i] ?? 0);
          }
        }
      }
    }
  return dqkv;
}

/** One query per row (q [B, H·hd]) against cache rows 0..lens[b]−1 of k, v [B, C, kvH·hd]. */
export function attentionDecodeRef(
  q: Arr,
  k: Arr,
  v: Arr,
  lens: Arr,
  B: number,
  H: number,
  hd: number,
  C: number,
  kvH = H,
) {
  const D = H * hd;
  const KD = kvH * hd;
  const kvAt = (b: number, u: number, h: number, i: number) =>
    (b * C + u) * KD + Math.floor(h / (H / kvH)) * hd + i;
  const y = new Float64Array(B * D);
  const scale = 1 / Math.sqrt(hd);
  for (let b = 0; b < B; b++)
    for (let h = 0; h < H; h++) {
      const n = lens[b] ?? 0;
      const s = new Float64Array(n);
      let m = Number.NEGATIVE_INFINITY;
      for (let u = 0; u < n; u++) {
        let dot = 0;
        for (let i = 0; i < hd; i++)
          dot += (q[b * D + h * hd + i] ?? 0) * (k[kvAt(b, u, h, i)] ?? 0);
        s[u] = dot * scale;
        m = Math.max(m, s[u] ?? 0);
      }
      let l = 0;
      for (let u = 0; u < n; u++) l += Math.exp((s[u] ?? 0) - m);
      for (let i = 0; i < hd; i++) {
        let acc = 0;
        for (let u = 0; u < n; u++)
          acc += (Math.exp((s[u] ?? 0) - m) / l) * (v[kvAt(b, u, h, i)] ?? 0);
        y[b * D + h * hd + i] = acc;
      }
    }
  return y;
}

/** d(Σ_r g[r]·logp[r])/dlogits for logp = log softmax(logits·invTemp)[target]. */
export function headLogprobBackwardRef(
  logits: Arr,
  targets: Arr,
  g: Arr,
  R: number,
  V: number,
  invTemp = 1,
) {
  const d = new Float64Array(R * V);
  for (let r = 0; r < R; r++) {
    let m = Number.NEGATIVE_INFINITY;
    for (let j = 0; j < V; j++) m = Math.max(m, (logits[r * V + j] ?? 0) * invTemp);
    let s = 0;
    for (let j = 0; j < V; j++) s += Math.exp((logits[r * V + j] ?? 0) * invTemp - m);
    for (let j = 0; j < V; j++) {
      const p = Math.exp((logits[r * V + j] ?? 0) * invTemp - m) / s;
      d[r * V + j] = (g[r] ?? 0) * invTemp * ((j === targets[r] ? 1 : 0) - p);
    }
  }
  return d;
}

export interface AdamWRefOptions {
  lr: number;
  beta1: number;
  beta2: number;
  eps: number;
  weightDecay: number;
  step: number;
  maxGradNorm: number;
}

/** The guarded step: skip on a non-finite loss or gradient, clip by global norm, AdamW. */
export function adamwRef(
  params: Arr,
  grads: Arr,
  m: Arr,
  v: Arr,
  decay: Arr,
  loss: number,
  o: AdamWRefOptions,
) {
  const n = params.length;
  let ss = 0;
  let finite = Number.isFinite(loss);
  for (let i = 0; i < n; i++) {
    const g = grads[i] ?? 0;
    if (!Number.isFinite(g)) finite = false;
    else ss += g * g;
  }
  const norm = Math.sqrt(ss);
  const out = {
    params: Float64Array.from(params),
    m: Float64Array.from(m),
    v: Float64Array.from(v),
    norm,
    applied: finite,
  };
  if (!finite) return out;
  const coef = o.maxGradNorm > 0 ? Math.min(1, o.maxGradNorm / (norm + 1e-6)) : 1;
  const c1 = 1 - o.beta1 ** o.step;
  const c2 = 1 - o.beta2 ** o.step;
  for (let i = 0; i < n; i++) {
    const g = (grads[i] ?? 0) * coef;
    const mi = o.beta1 * (m[i] ?? 0) + (1 - o.beta1) * g;
    const vi = o.beta2 * (v[i] ?? 0) + (1 - o.beta2) * g * g;
    out.m[i] = mi;
    out.v[i] = vi;
    const w = (params[i] ?? 0) * (1 - o.lr * o.weightDecay * (decay[i] ?? 0));
    out.params[i] = w - (o.lr * (mi / c1)) / (Math.sqrt(vi / c2) + o.eps);
  }
  return out;
}

/** y = x·rsqrt(mean(x²) + eps)·w over rows [R, D]; rstd per row. */
export function rmsNormRef(x: Arr, w: Arr, R: number, D: number, eps: number) {
  const y = new Float64Array(R * D);
  const rstd = new Float64Array(R);
  for (let r = 0; r < R; r++) {
    let ss = 0;
    for (let j = 0; j < D; j++) ss += (x[r * D + j] ?? 0) ** 2;
    const s = 1 / Math.sqrt(ss / D + eps);
    rstd[r] = s;
    for (let j = 0; j < D; j++) y[r * D + j] = (x[r * D + j] ?? 0) * s * (w[j] ?? 0);
  }
  return { y, rstd };
}

export function rmsNormBackwardRef(x: Arr, w: Arr, dy: Arr, R: number, D: number, eps: number) {
  const { rstd } = rmsNormRef(x, w, R, D, eps);
  const dx = new Float64Array(R * D);
  const dw = new Float64Array(D);
  for (let r = 0; r < R; r++) {
    const s = rstd[r] ?? 0;
    let m = 0;
    for (let j = 0; j < D; j++) m += (dy[r * D + j] ?? 0) * (w[j] ?? 0) * (x[r * D + j] ?? 0) * s;
    m /= D;
    for (let j = 0; j < D; j++) {
      const xh = (x[r * D + j] ?? 0) * s;
      const g = dy[r * D + j] ?? 0;
      dx[r * D + j] = s * (g * (w[j] ?? 0) - xh * m);
      dw[j] = (dw[j] ?? 0) + g * xh;
    }
  }
  return { dx, dw };
}

/**
 * Rotate-half RoPE on the q and k heads of qkv rows [R, (H + 2·kvH)·hd] (v untouched); row r at
 * position pos(r). inverse: the rotation by −angle (the backward: dx = Rᵀ·dy). The angle as
 * Hugging Face's rotary embedding makes it: inv_freq in float32, position·inv_freq a float32
 * product; the rotation in float64.
 */
export function ropeRef(
  qkv: Arr,
  R: number,
  H: number,
  kvH: number,
  hd: number,
  theta: number,
  pos: (r: number) => number,
  inverse = false,
): Float64Array {
  const W = (H + 2 * kvH) * hd;
  const half = hd / 2;
  const out = Float64Array.from(qkv);
  for (let r = 0; r < R; r++)
    for (let head = 0; head < H + kvH; head++)
      for (let i = 0; i < half; i++) {
        const angle = Math.fround(pos(r) * Math.fround(1 / theta ** ((2 * i) / hd)));
        const c = Math.cos(angle);
        const s = inverse ? -Math.sin(angle) : Math.sin(angle);
        const at = r * W + head * hd + i;
        const x1 = qkv[at] ?? 0;
        const x2 = qkv[at + half] ?? 0;
        out[at] = x1 * c - x2 * s;
        out[at + half] = x2 * c + x1 * s;
      }
  return out;
}

const sigmoid = (g: number) => 1 / (1 + Math.exp(-g));

/** h [R, I] = silu(gate)·up from gu [R, 2I] (gate | up per row). */
export function swigluRef(gu: Arr, R: number, I: number): Float64Array {
  const h = new Float64Array(R * I);
  for (let r = 0; r < R; r++)
    for (let j = 0; j < I; j++) {
      const g = gu[r * 2 * I + j] ?? 0;
      h[r * I + j] = g * sigmoid(g) * (gu[r * 2 * I + I + j] ?? 0);
    }
  return h;
}

/** dgu [R, 2I] from dh [R, I]. */
export function swigluBackwardRef(gu: Arr, dh: Arr, R: number, I: number): Float64Array {
  const dgu = new Float64Array(R * 2 * I);
  for (let r = 0; r < R; r++)
    for (let j = 0; j < I; j++) {
      const g = gu[r * 2 * I + j] ?? 0;
      const u = gu[r * 2 * I + I + j] ?? 0;
      const s = sigmoid(g);
      const d = dh[r * I + j] ?? 0;
      dgu[r * 2 * I + j] = d * u * s * (1 + g * (1 - s));
      dgu[r * 2 * I + I + j] = d * g * s;
    }
  return dgu;
}

/**
 * LoRA's B side over a site's segments (lora.wgsl): M rows of y and dy, rowStride floats each;
 * segment t's `width` columns from its `offset`, with u's columns t·r .. t·r + r − 1 (u and du
 * rows n·r) and B's stacked rows. y (+)= s·u·Bᵀ, du = s·dy·B, dB = s·dyᵀ·u, in float64.
 */
export function loraBSideRef(
  c: {
    M: number;
    r: number;
    scale: number;
    rowStride: number;
    segments: readonly { offset: number; width: number }[];
  },
  u: Arr,
  b: Arr,
  dy: Arr,
  y0?: Arr,
) {
  const { M, r, scale, rowStride } = c;
  const nr = c.segments.length * r;
  const N = c.segments.reduce((n, s) => n + s.width, 0);
  const y = Float64Array.from({ length: M * rowStride }, (_, e) => y0?.[e] ?? 0);
  const du = new Float64Array(M * nr);
  const db = new Float64Array(N * r);
  let row = 0; // the segment's first row of the stacked B
  c.segments.forEach((seg, t) => {
    for (let i = 0; i < M; i++)
      for (let j = 0; j < seg.width; j++) {
        const at = i * rowStride + seg.offset + j;
        for (let k = 0; k < r; k++) {
          const uk = u[i * nr + t * r + k] ?? 0;
          const bk = b[(row + j) * r + k] ?? 0;
          y[at] = (y[at] ?? 0) + scale * uk * bk;
          du[i * nr + t * r + k] = (du[i * nr + t * r + k] ?? 0) + scale * (dy[at] ?? 0) * bk;
          db[(row + j) * r + k] = (db[(row + j) * r + k] ?? 0) + scale * (dy[at] ?? 0) * uk;
        }
      }
    row += seg.width;
  });
  return { y, du, db };
}
