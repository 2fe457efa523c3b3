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
// No shared memory, no barriers; hd ≤ 64.

struct Params {
  B: u32, T: u32, H: u32, hd: u32,
  scale: f32, C: u32, _p0: u32, _p1: u32,
}

const MAX_HD: u32 = 64u;

@group(0) @binding(0) var<storage, read> qkv: array<f32>;
@group(0) @binding(1) var<storage, read_write> y: array<f32>;
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
  let D = p.H * p.hd;
  let rowq = (b * p.T + t) * 3u * D + h * p.hd;
  var q: array<f32, MAX_HD>;
  var acc: array<f32, MAX_HD>;
  for (var i = 0u; i < p.hd; i++) {
    q[i] = qkv[rowq + i] * p.scale;
    acc[i] = 0.0;
  }
  var m = -3.4e38;
  var l = 0.0;
  for (var s = 0u; s <= t; s++) {
    let rowk = (b * p.T + s) * 3u * D + D + h * p.hd;
    var score = 0.0;
    for (var i = 0u; i < p.hd; i++) {
      score += q[i] * qkv[rowk + i];
    }
    let m_new = max(m, score);
    let c = exp(m - m_new);
    let w = exp(score - m_new);
    l = l * c + w;
    for (var i = 0u; i < p.hd; i++) {
      acc[i] = acc[i] * c + w * qkv[rowk + D + i];
    }
    m = m_new;
  }
  let rowy = (b * p.T + t) * D + h * p.hd;
  for (var i = 0u; i < p.hd; i++) {
    y[rowy + i] = acc[i] / l;
  }
  lse[e] = m + log(l);
}

@group(0) @binding(0) var<storage, read> gqkv: array<f32>;
@group(0) @binding(1) var<storage, read> gy: array<f32>;
@group(0) @binding(2) var<storage, read> gdy: array<f32>;
@group(0) @binding(3) var<storage, read> glse: array<f32>;
@group(0) @binding(4) var<storage, read_write> dqkv: array<f32>;
@group(0) @binding(5) var<storage, read_write> dsum: array<f32>;

@compute @workgroup_size(64)
fn backward_dq(@builtin(global_invocation_id) gid: vec3u, @builtin(num_workgroups) nwg: vec3u) {
  let e = flat(gid, nwg);
  if (e >= p.B * p.H * p.T) {
    return;
  }
  let t = e % p.T;
  let h = (e / p.T) % p.H;
  let b = e / (p.T * p.H);
  let D = p.H * p.hd;
  let rowq = (b * p.T + t) * 3u * D + h * p.hd;
  let rowy = (b * p.T + t) * D + h * p.hd;
  var q: array<f32, MAX_HD>;
  var dy: array<f32, MAX_HD>;
  var dq: array<f32, MAX_HD>;
  var dt = 0.0;
  for (var i = 0u; i < p.hd; i++) {
    q[i] = gqkv[rowq + i] * p.scale;
    dy[i] = gdy[rowy + i];
    dq[i] = 0.0;
    dt += dy[i] * gy[rowy + i];
  }
  let L = glse[e];
  for (var s = 0u; s <= t; s++) {
    let rowk = (b * p.T + s) * 3u * D + D + h * p.hd;
    var score = 0.0;
    var dp = 0.0;
    for (var i = 0u; i < p.hd; i++) {
      score += q[i] * gqkv[rowk + i];
      dp += dy[i] * gqkv[rowk + D + i];
    }
    let ds = exp(score - L) * (dp - dt);
    for (var i = 0u; i < p.hd; i++) {
      dq[i] += ds * gqkv[rowk + i];
    }
  }
  for (var i = 0u; i < p.hd; i++) {
    dqkv[rowq + i] = dq[i] * p.scale;
  }
  dsum[e] = dt;
}

@group(0) @binding(0) var<storage, read> kqkv: array<f32>;
@group(0) @binding(1) var<storage, read> kdy: array<f32>;
@group(0) @binding(2) var<storage, read> klse: array<f32>;
@group(0) @binding(3) var<storage, read> kdsum: array<f32>;
@group(0) @binding(4) var<storage, read_write> kdqkv: array<f32>;

@compute @workgroup_size(64)
fn backward_dkdv(@builtin(global_invocation_id) gid: vec3u, @builtin(num_workgroups) nwg: vec3u) {
  let e = flat(gid, nwg);
  if (e >= p.B * p.H * p.T) {
    return;
  }
  let s = e % p.T;
  let h = (e / p.T) % p.H;
  let b = e / (p.T * p.H);
  let D = p.H * p.hd;
  let rowk = (b * p.T + s) * 3u * D + D + h * p.hd;
  var k: array<f32, MAX_HD>;
  var v: array<f32, MAX_HD>;
  var dk: array<f32, MAX_HD>;
  var dv: array<f32, MAX_HD>;
  for (var i = 0u; i < p.hd; i++) {
    k[i] = kqkv[rowk + i];
    v[i] = kqkv[rowk + D + i];
    dk[i] = 0.0;
    dv[i] = 0.0;
  }
  let bh = b * p.H + h;
  for (var t = s; t < p.T; t++) {
    let rowq = (b * p.T + t) * 3u * D + h * p.hd;
    let rowy = (b * p.T + t) * D + h * p.hd;
    var score = 0.0;
    var dp = 0.0;
    for (var i = 0u; i < p.hd; i++) {
      score += kqkv[rowq + i] * k[i];
      dp += kdy[rowy + i] * v[i];
    }
    let prob = exp(score * p.scale - klse[bh * p.T + t]);
    let ds = prob * (dp - kdsum[bh * p.T + t]);
    for (var i = 0u; i < p.hd; i++) {
      dv[i] += prob * kdy[rowy + i];
      dk[i] += ds * kqkv[rowq + i];
    }
  }
  for (var i = 0u; i < p.hd; i++) {
    kdqkv[rowk + i] = dk[i] * p.scale;
    kdqkv[rowk + D + i] = dv[i];
  }
}

@group(0) @binding(0) var<storage, read> qd: array<f32>;
@group(0) @binding(1) var<storage, read> kcache: array<f32>;
@group(0) @binding(2) var<storage, read> vcache: array<f32>;
@group(0) @binding(3) var<storage, read> lens: array<u32>;
@group(0) @binding(4) var<storage, read_write> yd: array<f32>;

@compute @workgroup_size(64)
fn decode(@builtin(global_invocation_id) gid: vec3u) {
  let e = gid.x;
  if (e >= p.B * p.H) {
    return;
  }
  let h = e % p.H;
  let b = e / p.H;
  let D = p.H * p.hd;
  var q: array<f32, MAX_HD>;
  var acc: array<f32, MAX_HD>;
  for (var i = 0u; i < p.hd; i++) {
    q[i] = qd[b * D + h * p.hd + i] * p.scale;
    acc[i] = 0.0;
  }
  var m = -3.4e38;
  var l = 0.0;
  for (var s = 0u; s < lens[b]; s++) {
    let row = (b * p.C + s) * D + h * p.hd;
    var score = 0.0;
    for (var i = 0u; i < p.hd; i++) {
      score += q[i] * kcache[row + i];
    }
    let m_new = max(m, score);
    let c = exp(m - m_new);
    let w = exp(score - m_new);
    l = l * c + w;
    for (var i = 0u; i < p.hd; i++) {
      acc[i] = acc[i] * c + w * vcache[row + i];
    }
    m = m_new;
  }
  for (var i = 0u; i < p.hd; i++) {
    yd[b * D + h * p.hd + i] = acc[i] / max(l, 1e-30);
  }
}
