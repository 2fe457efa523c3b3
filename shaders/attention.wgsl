// Fused causal self-attention (scores, mask, softmax, weighted sum) without a [T, T] matrix:
// one invocation per (row b, head h, query t) keeps an online softmax (running max m, sum l)
// and its output accumulator in registers (FlashAttention's recurrence, one query at a time).
// Layout: qkv [B·T, 3D] as c_attn writes it (q | k | v, each split into H heads of hd), the
// output y [B·T, D] already merged over heads (what c_proj reads), lse [B·H·T] = m + log l
// saved for the backward, which recomputes P from it.
// Entry points:
//   forward      one invocation per (b, h, t)
//   backward_dq  one invocation per (b, h, t): Dt = dy_t·y_t, dq_t = scale·Σ_s P_ts(dy_t·v_s − Dt)k_s
//   backward_dkdv one invocation per (b, h, s): dv_s = Σ_{t≥s} P_ts dy_t,
//                dk_s = scale·Σ_{t≥s} P_ts(dy_t·v_s − Dt) q_t   (Dt from backward_dq)
//   decode       one decode step over a KV cache: one invocation per (b, h), query qd[b] against
//                cached keys and values 0..len[b]−1 (cache [B, C, D]); output yd [B, D]
// No shared memory, no barriers. The head size HD is a pipeline constant (a multiple of 4,
// ≤ 64): loops over it have constant bounds, so compilers (LLVM in lavapipe, SwiftShader's
// Reactor) unroll them and keep q, the accumulators and dk/dv in registers, as vec4s.

struct Params {
  B: u32, T: u32, H: u32, hd: u32,
  scale: f32, C: u32, _p0: u32, _p1: u32,
}

override HD: u32 = 64u;
const MAX_V4: u32 = 16u; // 64 / 4

// Every tensor is read and written as vec4s (widths and heads are multiples of 4, bindings
// 256-byte aligned): lavapipe loads storage lane by lane, a vec4 for about the price of a float.
// ld4(i) and friends take a float index i (a multiple of 4).
fn ld4(i: u32) -> vec4f {
  return qkv[i >> 2u];
}

@group(0) @binding(0) var<storage, read> qkv: array<vec4f>;
@group(0) @binding(1) var<storage, read_write> y: array<vec4f>;
@group(0) @binding(2) var<storage, read_write> lse: array<f32>;
@group(0) @binding(7) var<uniform> p: Params;

fn flat(gid: vec3u, nwg: vec3u) -> u32 {
  return gid.x + gid.y * nwg.x * 64u;
}

@compute @workgroup_size(64)
fn forward(@builtin(global_invocation_id) gid: vec3u, @builtin(num_workgroups) nwg: vec3u) {
  let e = flat(gid, nwg);
  if (e >= p.B * p.H * p.T) {
    return;
  }
  let t = e % p.T;
  let h = (e / p.T) % p.H;
  let b = e / (p.T * p.H);
  let D = p.H * HD;
  let rowq = (b * p.T + t) * 3u * D + h * HD;
  var q: array<vec4f, MAX_V4>;
  var acc: array<vec4f, MAX_V4>;
  for (var i = 0u; i < HD / 4u; i++) {
    q[i] = ld4(rowq + 4u * i) * p.scale;
    acc[i] = vec4f();
  }
  var m = -3.4e38;
  var l = 0.0;
  for (var s = 0u; s <= t; s++) {
    let rowk = (b * p.T + s) * 3u * D + D + h * HD;
    var score = 0.0;
    for (var i = 0u; i < HD / 4u; i++) {
      score += dot(q[i], ld4(rowk + 4u * i));
    }
    let m_new = max(m, score);
    let c = exp(m - m_new);
    let w = exp(score - m_new);
    l = l * c + w;
    for (var i = 0u; i < HD / 4u; i++) {
      acc[i] = acc[i] * c + w * ld4(rowk + D + 4u * i);
    }
    m = m_new;
  }
  let rowy = (b * p.T + t) * D + h * HD;
  for (var i = 0u; i < HD / 4u; i++) {
    y[(rowy >> 2u) + i] = acc[i] / l;
  }
  lse[e] = m + log(l);
}

@group(0) @binding(0) var<storage, read> gqkv: array<vec4f>;
@group(0) @binding(1) var<storage, read> gy: array<vec4f>;
@group(0) @binding(2) var<storage, read> gdy: array<vec4f>;
@group(0) @binding(3) var<storage, read> glse: array<f32>;
@group(0) @binding(4) var<storage, read_write> dqkv: array<vec4f>;
@group(0) @binding(5) var<storage, read_write> dsum: array<f32>;

fn g4(i: u32) -> vec4f {
  return gqkv[i >> 2u];
}

@compute @workgroup_size(64)
fn backward_dq(@builtin(global_invocation_id) gid: vec3u, @builtin(num_workgroups) nwg: vec3u) {
  let e = flat(gid, nwg);
  if (e >= p.B * p.H * p.T) {
    return;
  }
  let t = e % p.T;
  let h = (e / p.T) % p.H;
  let b = e / (p.T * p.H);
  let D = p.H * HD;
  let rowq = (b * p.T + t) * 3u * D + h * HD;
  let rowy = (b * p.T + t) * D + h * HD;
  var q: array<vec4f, MAX_V4>;
  var dy: array<vec4f, MAX_V4>;
  var dq: array<vec4f, MAX_V4>;
  var dt = 0.0;
  for (var i = 0u; i < HD / 4u; i++) {
    let o = (rowy >> 2u) + i;
    q[i] = g4(rowq + 4u * i) * p.scale;
    dy[i] = gdy[o];
    dq[i] = vec4f();
    dt += dot(dy[i], gy[o]);
  }
  let L = glse[e];
  for (var s = 0u; s <= t; s++) {
    let rowk = (b * p.T + s) * 3u * D + D + h * HD;
    var score = 0.0;
    var dp = 0.0;
    for (var i = 0u; i < HD / 4u; i++) {
      score += dot(q[i], g4(rowk + 4u * i));
      dp += dot(dy[i], g4(rowk + D + 4u * i));
    }
    let ds = exp(score - L) * (dp - dt);
    for (var i = 0u; i < HD / 4u; i++) {
      dq[i] += ds * g4(rowk + 4u * i);
    }
  }
  for (var i = 0u; i < HD / 4u; i++) {
    dqkv[(rowq >> 2u) + i] = dq[i] * p.scale;
  }
  dsum[e] = dt;
}

@group(0) @binding(0) var<storage, read> kqkv: array<vec4f>;
@group(0) @binding(1) var<storage, read> kdy: array<vec4f>;
@group(0) @binding(2) var<storage, read> klse: array<f32>;
@group(0) @binding(3) var<storage, read> kdsum: array<f32>;
@group(0) @binding(4) var<storage, read_write> kdqkv: array<vec4f>;

fn k4(i: u32) -> vec4f {
  return kqkv[i >> 2u];
}

@compute @workgroup_size(64)
fn backward_dkdv(@builtin(global_invocation_id) gid: vec3u, @builtin(num_workgroups) nwg: vec3u) {
  let e = flat(gid, nwg);
  if (e >= p.B * p.H * p.T) {
    return;
  }
  let s = e % p.T;
  let h = (e / p.T) % p.H;
  let b = e / (p.T * p.H);
  let D = p.H * HD;
  let rowk = (b * p.T + s) * 3u * D + D + h * HD;
  var k: array<vec4f, MAX_V4>;
  var v: array<vec4f, MAX_V4>;
  var dk: array<vec4f, MAX_V4>;
  var dv: array<vec4f, MAX_V4>;
  for (var i = 0u; i < HD / 4u; i++) {
    k[i] = k4(rowk + 4u * i);
    v[i] = k4(rowk + D + 4u * i);
    dk[i] = vec4f();
    dv[i] = vec4f();
  }
  let bh = b * p.H + h;
  for (var t = s; t < p.T; t++) {
    let rowq = (b * p.T + t) * 3u * D + h * HD;
    let rowy = (b * p.T + t) * D + h * HD;
    var score = 0.0;
    var dp = 0.0;
    for (var i = 0u; i < HD / 4u; i++) {
      score += dot(k4(rowq + 4u * i), k[i]);
      dp += dot(kdy[(rowy >> 2u) + i], v[i]);
    }
    let prob = exp(score * p.scale - klse[bh * p.T + t]);
    let ds = prob * (dp - kdsum[bh * p.T + t]);
    for (var i = 0u; i < HD / 4u; i++) {
      dv[i] += prob * kdy[(rowy >> 2u) + i];
      dk[i] += ds * k4(rowq + 4u * i);
    }
  }
  for (var i = 0u; i < HD / 4u; i++) {
    let o = (rowk >> 2u) + i;
    kdqkv[o] = dk[i] * p.scale;
    kdqkv[o + D / 4u] = dv[i];
  }
}

@group(0) @binding(0) var<storage, read> qd: array<vec4f>;
@group(0) @binding(1) var<storage, read> kcache: array<vec4f>;
@group(0) @binding(2) var<storage, read> vcache: array<vec4f>;
@group(0) @binding(3) var<storage, read> lens: array<u32>;
@group(0) @binding(4) var<storage, read_write> yd: array<vec4f>;

@compute @workgroup_size(64)
fn decode(@builtin(global_invocation_id) gid: vec3u) {
  let e = gid.x;
  if (e >= p.B * p.H) {
    return;
  }
  let h = e % p.H;
  let b = e / p.H;
  let D = p.H * HD;
  var q: array<vec4f, MAX_V4>;
  var acc: array<vec4f, MAX_V4>;
  for (var i = 0u; i < HD / 4u; i++) {
    q[i] = qd[(b * D + h * HD) / 4u + i] * p.scale;
    acc[i] = vec4f();
  }
  var m = -3.4e38;
  var l = 0.0;
  for (var s = 0u; s < lens[b]; s++) {
    let row = (b * p.C + s) * D + h * HD;
    var score = 0.0;
    for (var i = 0u; i < HD / 4u; i++) {
      score += dot(q[i], kcache[row / 4u + i]);
    }
    let m_new = max(m, score);
    let c = exp(m - m_new);
    let w = exp(score - m_new);
    l = l * c + w;
    for (var i = 0u; i < HD / 4u; i++) {
      acc[i] = acc[i] * c + w * vcache[row / 4u + i];
    }
    m = m_new;
  }
  for (var i = 0u; i < HD / 4u; i++) {
    yd[(b * D + h * HD) / 4u + i] = acc[i] / max(l, 1e-30);
  }
}
