// One layer of a decode step in one dispatch, for a model whose weights are f32 in one flat
// buffer (a DeviceTransformer built `trainable`: the lab's GPT-2 trained in full, or any config
// so built): four rows per workgroup, the whole layer in workgroup memory —
//   norm (LayerNorm with bias, or RMSNorm) → q|k|v (+bias) → Qwen3's per-head q/k RMSNorm → RoPE
//   at the row's position → k, v into each row's cache at its position → attention over the cache, an invocation per row and head (each k/v head serves
//   H / kvH query heads) → o (+bias) added to the residual → norm → fc (+bias) with GELU, or
//   gate|up with SwiGLU → down (+bias) added to the residual.
// Weights are [out, in] rows (Conv1D's transposed as they upload) at the offsets in the
// uniforms, every offset and width a multiple of 4: each invocation reads four weight rows as
// vec4s and multiplies them with the four rows' inputs, so a weight is read once per four rows.
// RoPE reads rope.wgsl's host table (cos | sin per position, HD floats), rotate-half as there;
// it needs HD a multiple of 8 (each half whole vec4s), else the config decodes layer by layer. The workgroup
// arrays are sized by overrides to the model (MD4 ≥ D/4, MK4 and MN4 ≥ every projection's input
// and output width / 4); the host takes this path only where they fit the adapter's workgroup
// storage. Barriers: a dozen a layer (CPU drivers pay for each).

struct Params {
  B: u32, D: u32, H: u32, kvH: u32,
  hd: u32, C: u32, I: u32, flags: u32,
  eps: f32, scale: f32, ln1_w: u32, ln1_b: u32,
  qkv_w: u32, qkv_b: u32, o_w: u32, o_b: u32,
  ln2_w: u32, ln2_b: u32, up_w: u32, up_b: u32,
  down_w: u32, down_b: u32, q_norm: u32, k_norm: u32,
}
// flags: 1 LayerNorm (else RMSNorm), 2 SwiGLU (else GELU), 4 a q|k|v bias, 8 o's and down's
// biases, 16 fc's bias, 32 RoPE, 64 q/k norm (weights at q_norm, k_norm). Offsets in floats.

@group(0) @binding(0) var<storage, read> w: array<vec4f>;
@group(0) @binding(1) var<storage, read_write> x: array<vec4f>;
@group(0) @binding(2) var<storage, read_write> kc: array<vec4f>;
@group(0) @binding(3) var<storage, read_write> vc: array<vec4f>;
@group(0) @binding(4) var<storage, read> pos: array<u32>;
@group(0) @binding(5) var<storage, read> table: array<vec4f>;
@group(0) @binding(7) var<uniform> p: Params;

const RB: u32 = 4u; // rows per workgroup
// Invocations per workgroup: 16 on CPU drivers, 64 on GPUs.
override WG: u32 = 64u;
override MD4: u32 = 64u;
override MK4: u32 = 256u;
override MN4: u32 = 256u;

var<workgroup> sx: array<vec4f, RB * MD4>; // the residual rows
var<workgroup> sin: array<vec4f, RB * MK4>; // a projection's input rows
var<workgroup> sout: array<vec4f, RB * MN4>; // its output rows
var<workgroup> stats: array<vec2f, RB>; // a row's mean and 1/σ

const GELU_C: f32 = 0.7978845608028654; // √(2/π), as matmul.wgsl's epilogue

fn gelu(v: vec4f) -> vec4f {
  let u = clamp(GELU_C * (v + 0.044715 * v * v * v), vec4f(-15.0), vec4f(15.0));
  return 0.5 * v * (1.0 + tanh(u));
}

// sin = norm(sx) for the four rows, the weight (and LayerNorm's bias) at these offsets. A row's
// mean and 1/σ by one invocation (a few vec4s: no reduction across invocations, no barriers).
fn norm(lid: u32, g: u32, bias: u32) {
  let D4 = p.D / 4u;
  let layer = (p.flags & 1u) != 0u;
  if (lid < RB) {
    var s = 0.0;
    for (var j = 0u; j < D4; j++) {
      s += dot(sx[lid * MD4 + j], vec4f(1.0));
    }
    let mean = select(0.0, s / f32(p.D), layer);
    var q = 0.0;
    for (var j = 0u; j < D4; j++) {
      let d = sx[lid * MD4 + j] - mean;
      q += dot(d, d);
    }
    stats[lid] = vec2f(mean, inverseSqrt(q / f32(p.D) + p.eps));
  }
  workgroupBarrier();
  for (var j = lid; j < D4; j += WG) {
    let gw = w[g / 4u + j];
    let bw = select(vec4f(), w[bias / 4u + j], layer);
    for (var r = 0u; r < RB; r++) {
      sin[r * MK4 + j] = (sx[r * MD4 + j] - stats[r].x) * stats[r].y * gw + bw;
    }
  }
  workgroupBarrier();
}

// sout[r, 0..N) = sin[r, 0..K)·Wᵀ (+ bias) for the four rows; W [N, K] at `off`.
fn project(lid: u32, K: u32, N: u32, off: u32, bias: u32, has_bias: bool) {
  let K4 = K / 4u;
  for (var o4 = lid; o4 < N / 4u; o4 += WG) {
    var a0 = vec4f();
    var a1 = vec4f();
    var a2 = vec4f();
    var a3 = vec4f();
    let row = off / 4u + 4u * o4 * K4;
    for (var k = 0u; k < K4; k++) {
      let w0 = w[row + k];
      let w1 = w[row + K4 + k];
      let w2 = w[row + 2u * K4 + k];
      let w3 = w[row + 3u * K4 + k];
      let x0 = sin[k];
      let x1 = sin[MK4 + k];
      let x2 = sin[2u * MK4 + k];
      let x3 = sin[3u * MK4 + k];
      a0 += vec4f(dot(x0, w0), dot(x0, w1), dot(x0, w2), dot(x0, w3));
      a1 += vec4f(dot(x1, w0), dot(x1, w1), dot(x1, w2), dot(x1, w3));
      a2 += vec4f(dot(x2, w0), dot(x2, w1), dot(x2, w2), dot(x2, w3));
      a3 += vec4f(dot(x3, w0), dot(x3, w1), dot(x3, w2), dot(x3, w3));
    }
    let bv = select(vec4f(), w[bias / 4u + o4], has_bias);
    sout[o4] = a0 + bv;
    sout[MN4 + o4] = a1 + bv;
    sout[2u * MN4 + o4] = a2 + bv;
    sout[3u * MN4 + o4] = a3 + bv;
  }
  workgroupBarrier();
}

@compute @workgroup_size(WG)
fn layer(@builtin(workgroup_id) wid: vec3u, @builtin(local_invocation_index) lid: u32) {
  let D4 = p.D / 4u;
  let hd4 = p.hd / 4u;
  let Q4 = p.H * hd4;
  let KD4 = p.kvH * hd4;
  let first = wid.x * RB;
  // Rows past the batch compute along (their barriers are everyone's) and are never written.
  for (var i = lid; i < RB * D4; i += WG) {
    let r = i / D4;
    let b = min(first + r, p.B - 1u);
    sx[r * MD4 + i % D4] = x[b * D4 + i % D4];
  }
  workgroupBarrier();
  norm(lid, p.ln1_w, p.ln1_b);
  project(lid, p.D, 4u * (Q4 + 2u * KD4), p.qkv_w, p.qkv_b, (p.flags & 4u) != 0u);
  // Per q and k head of each row (an invocation each): q/k norm, then RoPE at the row's position.
  let qk_norm = (p.flags & 64u) != 0u;
  if (qk_norm || (p.flags & 32u) != 0u) {
    let heads = p.H + p.kvH;
    let half4 = hd4 / 2u;
    for (var pair = lid; pair < RB * heads; pair += WG) {
      let r = pair / heads;
      let head = pair % heads;
      let at = r * MN4 + head * hd4;
      if (qk_norm) {
        var q = 0.0;
        for (var d = 0u; d < hd4; d++) {
          q += dot(sout[at + d], sout[at + d]);
        }
        let rs = inverseSqrt(q / f32(p.hd) + p.eps);
        let g = select(p.k_norm, p.q_norm, head < p.H) / 4u;
        for (var d = 0u; d < hd4; d++) {
          sout[at + d] = sout[at + d] * rs * w[g + d];
        }
      }
      if ((p.flags & 32u) != 0u) {
        let t = pos[min(first + r, p.B - 1u)] * hd4;
        for (var i = 0u; i < half4; i++) {
          let c = table[t + i];
          let s = table[t + half4 + i];
          let x1 = sout[at + i];
          let x2 = sout[at + half4 + i];
          sout[at + i] = x1 * c - x2 * s;
          sout[at + half4 + i] = x2 * c + x1 * s;
        }
      }
    }
    workgroupBarrier();
  }
  // Each row's key and value into its cache at its position.
  for (var i = lid; i < RB * KD4; i += WG) {
    let r = i / KD4;
    let j = i % KD4;
    let b = first + r;
    if (b < p.B) {
      let at = (b * p.C + pos[b]) * KD4 + j;
      kc[at] = sout[r * MN4 + Q4 + j];
      vc[at] = sout[r * MN4 + Q4 + KD4 + j];
    }
  }
  storageBarrier();
  workgroupBarrier();
  // Attention: one invocation per (row, head), over the row's positions with a running max
  // and sum (online softmax), the output accumulated in place in `sin`.
  let group = p.H / p.kvH;
  for (var pair = lid; pair < RB * p.H; pair += WG) {
    let r = pair / p.H;
    let h = pair % p.H;
    let b = min(first + r, p.B - 1u);
    let cache = b * p.C * KD4 + (h / group) * hd4;
    let qh = r * MN4 + h * hd4;
    let out = r * MK4 + h * hd4;
    for (var d = 0u; d < hd4; d++) {
      sin[out + d] = vec4f();
    }
    var m = -3.4e38;
    var l = 0.0;
    for (var t = 0u; t <= pos[b]; t++) {
      var s = 0.0;
      for (var d = 0u; d < hd4; d++) {
        s += dot(sout[qh + d], kc[cache + t * KD4 + d]);
      }
      s *= p.scale;
      let top = max(m, s);
      let keep = exp(m - top);
      let e = exp(s - top);
      l = l * keep + e;
      for (var d = 0u; d < hd4; d++) {
        sin[out + d] = sin[out + d] * keep + e * vc[cache + t * KD4 + d];
      }
      m = top;
    }
    for (var d = 0u; d < hd4; d++) {
      sin[out + d] /= l;
    }
  }
  workgroupBarrier();
  let proj_bias = (p.flags & 8u) != 0u;
  project(lid, 4u * Q4, p.D, p.o_w, p.o_b, proj_bias);
  for (var i = lid; i < RB * D4; i += WG) {
    let r = i / D4;
    sx[r * MD4 + i % D4] += sout[r * MN4 + i % D4];
  }
  workgroupBarrier();
  norm(lid, p.ln2_w, p.ln2_b);
  let swiglu = (p.flags & 2u) != 0u;
  let I4 = p.I / 4u;
  project(lid, p.D, select(p.I, 2u * p.I, swiglu), p.up_w, p.up_b, (p.flags & 16u) != 0u);
  for (var i = lid; i < RB * I4; i += WG) {
    let r = i / I4;
    let j = i % I4;
    let g = sout[r * MN4 + j];
    if (swiglu) {
      sin[r * MK4 + j] = g / (1.0 + exp(-g)) * sout[r * MN4 + I4 + j];
    } else {
      sin[r * MK4 + j] = gelu(g);
    }
  }
  workgroupBarrier();
  project(lid, p.I, p.D, p.down_w, p.down_b, proj_bias);
  for (var i = lid; i < RB * D4; i += WG) {
    let r = i / D4;
    let b = first + r;
    if (b < p.B) {
      x[b * D4 + i % D4] = sx[r * MD4 + i % D4] + sout[r * MN4 + i % D4];
    }
  }
}
