// LayerNorm over the last axis of x [R, D]: y = (x − μ)·rstd·γ + β, rstd = 1/√(var + eps).
// Entry points:
//   forward     one invocation per row; saves (μ, rstd) per row for the backward
//   backward_dx one invocation per row: dx = rstd·(ĝ − mean(ĝ) − x̂·mean(ĝ·x̂)), ĝ = dy·γ;
//               flags & 4: dx is added to what the buffer holds (the residual stream's gradient)
//   backward_params one invocation per column: dγ += Σ_r dy·x̂, dβ += Σ_r dy, written into the
//               flat gradient buffer at g_off / b_off (one writable binding: no aliasing)
// No shared memory, no barriers: at D ≤ 256 a row is cheap for one invocation.

struct Params {
  R: u32, D: u32, eps: f32, flags: u32,
  g_off: u32, b_off: u32, _p0: u32, _p1: u32,
}

@group(0) @binding(0) var<storage, read> x: array<f32>;
@group(0) @binding(1) var<storage, read> gamma: array<f32>;
@group(0) @binding(2) var<storage, read> beta: array<f32>;
@group(0) @binding(3) var<storage, read_write> y: array<f32>;
@group(0) @binding(4) var<storage, read_write> stats: array<f32>;
@group(0) @binding(7) var<uniform> p: Params;

@compute @workgroup_size(64)
fn forward(@builtin(global_invocation_id) gid: vec3u) {
  let r = gid.x;
  if (r >= p.R) {
    return;
  }
  let base = r * p.D;
  var mean = 0.0;
  for (var j = 0u; j < p.D; j++) {
    mean += x[base + j];
  }
  mean /= f32(p.D);
  var v = 0.0;
  for (var j = 0u; j < p.D; j++) {
    let d = x[base + j] - mean;
    v += d * d;
  }
  let rstd = inverseSqrt(v / f32(p.D) + p.eps);
  for (var j = 0u; j < p.D; j++) {
    y[base + j] = (x[base + j] - mean) * rstd * gamma[j] + beta[j];
  }
  stats[2u * r] = mean;
  stats[2u * r + 1u] = rstd;
}

@group(0) @binding(0) var<storage, read> bx: array<f32>;
@group(0) @binding(1) var<storage, read> bgamma: array<f32>;
@group(0) @binding(2) var<storage, read> bdy: array<f32>;
@group(0) @binding(3) var<storage, read> bstats: array<f32>;
@group(0) @binding(4) var<storage, read_write> bdx: array<f32>;

@compute @workgroup_size(64)
fn backward_dx(@builtin(global_invocation_id) gid: vec3u) {
  let r = gid.x;
  if (r >= p.R) {
    return;
  }
  let base = r * p.D;
  let mean = bstats[2u * r];
  let rstd = bstats[2u * r + 1u];
  var m1 = 0.0;
  var m2 = 0.0;
  for (var j = 0u; j < p.D; j++) {
    let g = bdy[base + j] * bgamma[j];
    m1 += g;
    m2 += g * (bx[base + j] - mean) * rstd;
  }
  m1 /= f32(p.D);
  m2 /= f32(p.D);
  let acc = (p.flags & 4u) != 0u;
  for (var j = 0u; j < p.D; j++) {
    let xh = (bx[base + j] - mean) * rstd;
    var v = rstd * (bdy[base + j] * bgamma[j] - m1 - xh * m2);
    if (acc) {
      v += bdx[base + j];
    }
    bdx[base + j] = v;
  }
}

@group(0) @binding(0) var<storage, read> px: array<f32>;
@group(0) @binding(1) var<storage, read> pdy: array<f32>;
@group(0) @binding(2) var<storage, read> pstats: array<f32>;
@group(0) @binding(3) var<storage, read_write> grads: array<f32>;

@compute @workgroup_size(64)
fn backward_params(@builtin(global_invocation_id) gid: vec3u) {
  let j = gid.x;
  if (j >= p.D) {
    return;
  }
  var dg = 0.0;
  var db = 0.0;
  for (var r = 0u; r < p.R; r++) {
    let dy = pdy[r * p.D + j];
    dg += dy * (px[r * p.D + j] - pstats[2u * r]) * pstats[2u * r + 1u];
    db += dy;
  }
  grads[p.g_off + j] += dg;
  grads[p.b_off + j] += db;
}
