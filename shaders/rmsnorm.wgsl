// RMSNorm over rows of D floats, as Hugging Face's LlamaRMSNorm computes it (in f32):
//   y = x · rsqrt(mean(x²) + eps) · w
// Rows need not be contiguous: row r starts at off + (r / group)·stride + (r % group)·D, so one
// kernel serves the residual stream [R, D] (group 1, stride D) and Qwen3's per-head q/k norm
// inside the qkv rows (D = head_dim, group = heads, stride = the qkv row width, off = the
// part's first column). y and dx use x's layout.
// flags (bits):
//   1  in place: forward reads x from y's binding (x unbound)
//   4  accumulate: backward_dx adds dx to what the buffer holds (the residual stream's gradient)
// Entry points:
//   forward     one invocation per row; saves rstd per row for the backward
//   backward_dx one invocation per row: x̂ = x·rstd, g = dy·w, dx = rstd·(g − x̂·mean(g·x̂))
//   backward_dw one invocation per column j: dw[j] += Σ_r dy·x̂
// No shared memory, no barriers.

struct Params {
  R: u32, D: u32, eps: f32, flags: u32,
  group: u32, stride: u32, off: u32, _p0: u32,
}

@group(0) @binding(0) var<storage, read> x: array<f32>;
@group(0) @binding(1) var<storage, read> w: array<f32>;
@group(0) @binding(2) var<storage, read_write> y: array<f32>;
@group(0) @binding(3) var<storage, read_write> rstd: array<f32>;
@group(0) @binding(7) var<uniform> p: Params;

fn row_base(r: u32) -> u32 {
  return p.off + (r / p.group) * p.stride + (r % p.group) * p.D;
}

fn load_x(i: u32) -> f32 {
  if ((p.flags & 1u) != 0u) {
    return y[i];
  }
  return x[i];
}

@compute @workgroup_size(64)
fn forward(@builtin(global_invocation_id) gid: vec3u, @builtin(num_workgroups) nwg: vec3u) {
  let r = gid.x + gid.y * nwg.x * 64u;
  if (r >= p.R) {
    return;
  }
  let base = row_base(r);
  var ss = 0.0;
  for (var j = 0u; j < p.D; j++) {
    let v = load_x(base + j);
    ss += v * v;
  }
  let s = inverseSqrt(ss / f32(p.D) + p.eps);
  for (var j = 0u; j < p.D; j++) {
    y[base + j] = load_x(base + j) * s * w[j];
  }
  rstd[r] = s;
}

@group(0) @binding(0) var<storage, read> bx: array<f32>;
@group(0) @binding(1) var<storage, read> bw: array<f32>;
@group(0) @binding(2) var<storage, read> bdy: array<f32>;
@group(0) @binding(3) var<storage, read> brstd: array<f32>;
@group(0) @binding(4) var<storage, read_write> bdx: array<f32>;

@compute @workgroup_size(64)
fn backward_dx(@builtin(global_invocation_id) gid: vec3u, @builtin(num_workgroups) nwg: vec3u) {
  let r = gid.x + gid.y * nwg.x * 64u;
  if (r >= p.R) {
    return;
  }
  let base = row_base(r);
  let s = brstd[r];
  var m = 0.0;
  for (var j = 0u; j < p.D; j++) {
    m += bdy[base + j] * bw[j] * bx[base + j] * s;
  }
  m /= f32(p.D);
  let acc = (p.flags & 4u) != 0u;
  for (var j = 0u; j < p.D; j++) {
    let xh = bx[base + j] * s;
    var v = s * (bdy[base + j] * bw[j] - xh * m);
    if (acc) {
      v += bdx[base + j];
    }
    bdx[base + j] = v;
  }
}

@group(0) @binding(0) var<storage, read> px: array<f32>;
@group(0) @binding(1) var<storage, read> pdy: array<f32>;
@group(0) @binding(2) var<storage, read> prstd: array<f32>;
@group(0) @binding(3) var<storage, read_write> dw: array<f32>;

@compute @workgroup_size(64)
fn backward_dw(@builtin(global_invocation_id) gid: vec3u) {
  let j = gid.x;
  if (j >= p.D) {
    return;
  }
  var s = 0.0;
  for (var r = 0u; r < p.R; r++) {
    let i = row_base(r) + j;
    s += pdy[i] * px[i] * prstd[r];
  }
  dw[j] += s;
}
