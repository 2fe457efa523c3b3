// Plain-TypeScript float64 references for the Llama family's kernels (shaders/rmsnorm.wgsl,
// rope.wgsl, swiglu.wgsl), Hugging Face's semantics; each kernel's test compares with them.
// Row-major arrays throughout.

type Arr = ArrayLike<number>;

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
 * cos and sin of every position below `positions` and pair i < hd/2, as rope.wgsl reads them:
 * [positions, hd] with cos at p·hd + i, sin at p·hd + hd/2 + i, angle p·invFreq[i]. invFreq
 * (hd/2 of them) comes from model/families/rope.ts, which the tfjs forward reads too, so a
 * rope_scaling rescales both paths alike.
 */
export function ropeTable(positions: number, invFreq: ArrayLike<number>): Float32Array {
  const half = invFreq.length;
  const hd = 2 * half;
  const table = new Float32Array(positions * hd);
  for (let i = 0; i < half; i++) {
    const freq = invFreq[i] as number;
    for (let p = 0; p < positions; p++) {
      table[p * hd + i] = Math.cos(p * freq);
      table[p * hd + half + i] = Math.sin(p * freq);
    }
  }
  return table;
}

/**
 * Rotate-half RoPE on the q and k heads of qkv rows [R, (H + 2·kvH)·hd] (v untouched); row r at
 * position pos(r). inverse: the rotation by −angle (the backward: dx = Rᵀ·dy).
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
        const angle = pos(r) / theta ** ((2 * i) / hd);
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
