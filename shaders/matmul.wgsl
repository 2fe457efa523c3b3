// Matrix multiply with a fused epilogue: C[M,N] (+)= A[M,K] · B[K,N] (+ bias[N]) (+ R[M,N]),
// where A and B are read through strides, so one kernel serves X·W (forward), dY·Wᵀ (input
// gradient), Xᵀ·dY (weight gradient) and X·Eᵀ (the tied head):
//   A(i,k) = a[i·a_rs + k·a_cs],  B(k,j) = b[k·b_rs + j·b_cs]
// flags (bits):
//   1  add bias[j]
//   2  add the residual R[i,j] (x + proj: the residual stream's update in one pass)
//   4  accumulate: C += result (gradients summed over micro-batches and tied weights)
//   8  GELU forward: C holds the pre-activation, AUX = gelu_tanh(C) (saved for the backward)
//   16 GELU backward: result ·= gelu_tanh'(AUX[i,j]) (AUX = the saved pre-activation)
// Entry points (versions, each checked against the float64 reference):
//   v1_regblock  a 4×4 block of C per invocation, no shared memory and no barriers (what CPU
//                Vulkan drivers want: workgroupBarrier is ~10× dearer there)
//   v2_tiled     32×32 tiles of C per workgroup through shared memory (what real GPUs want)
//   v3_colblock  one column × 16 rows of C per invocation, neighbouring invocations on
//                neighbouring columns: B is read as one contiguous vector across lanes, A as
//                broadcasts (CPU drivers vectorise across invocations, and gathers are dear)
//   bias_grad    db[j] (+)= Σ_i dC[i,j], one invocation per column (reads A as dC [M,N])

struct Params {
  M: u32, N: u32, K: u32, a_rs: u32,
  a_cs: u32, b_rs: u32, b_cs: u32, flags: u32,
}

@group(0) @binding(0) var<storage, read> a: array<f32>;
@group(0) @binding(1) var<storage, read> b: array<f32>;
@group(0) @binding(2) var<storage, read> bias: array<f32>;
@group(0) @binding(3) var<storage, read> res: array<f32>;
@group(0) @binding(4) var<storage, read_write> c: array<f32>;
@group(0) @binding(5) var<storage, read_write> aux: array<f32>;
@group(0) @binding(7) var<uniform> p: Params;

const GELU_C: f32 = 0.7978845608028654; // √(2/π)

fn gelu(x: f32) -> f32 {
  let u = clamp(GELU_C * (x + 0.044715 * x * x * x), -15.0, 15.0);
  return 0.5 * x * (1.0 + tanh(u));
}

fn gelu_grad(x: f32) -> f32 {
  let u = clamp(GELU_C * (x + 0.044715 * x * x * x), -15.0, 15.0);
  let t = tanh(u);
  return 0.5 * (1.0 + t) + 0.5 * x * (1.0 - t * t) * GELU_C * (1.0 + 3.0 * 0.044715 * x * x);
}

fn finish(i: u32, j: u32, acc: f32) {
  if (i >= p.M || j >= p.N) {
    return;
  }
  let idx = i * p.N + j;
  var v = acc;
  if ((p.flags & 1u) != 0u) {
    v += bias[j];
  }
  if ((p.flags & 2u) != 0u) {
    v += res[idx];
  }
  if ((p.flags & 16u) != 0u) {
    v *= gelu_grad(aux[idx]);
  }
  if ((p.flags & 4u) != 0u) {
    v += c[idx];
  }
  c[idx] = v;
  if ((p.flags & 8u) != 0u) {
    aux[idx] = gelu(v);
  }
}

fn load_a(i: u32, k: u32) -> f32 {
  if (i >= p.M || k >= p.K) {
    return 0.0;
  }
  return a[i * p.a_rs + k * p.a_cs];
}

fn load_b(k: u32, j: u32) -> f32 {
  if (k >= p.K || j >= p.N) {
    return 0.0;
  }
  return b[k * p.b_rs + j * p.b_cs];
}

@compute @workgroup_size(8, 8)
fn v1_regblock(@builtin(global_invocation_id) gid: vec3u) {
  let i0 = gid.y * 4u;
  let j0 = gid.x * 4u;
  if (i0 >= p.M || j0 >= p.N) {
    return;
  }
  // Rows and columns past the edge read the last valid one (no branch in the k loop); their
  // results are dropped by finish().
  let ra = vec4u(min(i0, p.M - 1u), min(i0 + 1u, p.M - 1u), min(i0 + 2u, p.M - 1u), min(i0 + 3u, p.M - 1u)) * p.a_rs;
  let cb = vec4u(min(j0, p.N - 1u), min(j0 + 1u, p.N - 1u), min(j0 + 2u, p.N - 1u), min(j0 + 3u, p.N - 1u)) * p.b_cs;
  var acc0 = vec4f();
  var acc1 = vec4f();
  var acc2 = vec4f();
  var acc3 = vec4f();
  for (var k = 0u; k < p.K; k++) {
    let ka = k * p.a_cs;
    let kb = k * p.b_rs;
    let bv = vec4f(b[kb + cb.x], b[kb + cb.y], b[kb + cb.z], b[kb + cb.w]);
    acc0 += a[ra.x + ka] * bv;
    acc1 += a[ra.y + ka] * bv;
    acc2 += a[ra.z + ka] * bv;
    acc3 += a[ra.w + ka] * bv;
  }
  let rows = array<vec4f, 4>(acc0, acc1, acc2, acc3);
  for (var r = 0u; r < 4u; r++) {
    let row = rows[r];
    finish(i0 + r, j0, row.x);
    finish(i0 + r, j0 + 1u, row.y);
    finish(i0 + r, j0 + 2u, row.z);
    finish(i0 + r, j0 + 3u, row.w);
  }
}

@compute @workgroup_size(64)
fn v3_colblock(@builtin(global_invocation_id) gid: vec3u) {
  let j = gid.x;
  let i0 = gid.y * 16u;
  if (j >= p.N || i0 >= p.M) {
    return;
  }
  let last = p.M - 1u;
  let ra0 = vec4u(min(i0, last), min(i0 + 1u, last), min(i0 + 2u, last), min(i0 + 3u, last)) * p.a_rs;
  let ra1 = vec4u(min(i0 + 4u, last), min(i0 + 5u, last), min(i0 + 6u, last), min(i0 + 7u, last)) * p.a_rs;
  let ra2 = vec4u(min(i0 + 8u, last), min(i0 + 9u, last), min(i0 + 10u, last), min(i0 + 11u, last)) * p.a_rs;
  let ra3 = vec4u(min(i0 + 12u, last), min(i0 + 13u, last), min(i0 + 14u, last), min(i0 + 15u, last)) * p.a_rs;
  let cb = j * p.b_cs;
  var acc0 = vec4f();
  var acc1 = vec4f();
  var acc2 = vec4f();
  var acc3 = vec4f();
  for (var k = 0u; k < p.K; k++) {
    let bv = b[k * p.b_rs + cb];
    let ka = k * p.a_cs;
    acc0 += vec4f(a[ra0.x + ka], a[ra0.y + ka], a[ra0.z + ka], a[ra0.w + ka]) * bv;
    acc1 += vec4f(a[ra1.x + ka], a[ra1.y + ka], a[ra1.z + ka], a[ra1.w + ka]) * bv;
    acc2 += vec4f(a[ra2.x + ka], a[ra2.y + ka], a[ra2.z + ka], a[ra2.w + ka]) * bv;
    acc3 += vec4f(a[ra3.x + ka], a[ra3.y + ka], a[ra3.z + ka], a[ra3.w + ka]) * bv;
  }
  let rows = array<vec4f, 4>(acc0, acc1, acc2, acc3);
  for (var r = 0u; r < 4u; r++) {
    let v = rows[r];
    finish(i0 + 4u * r, j, v.x);
    finish(i0 + 4u * r + 1u, j, v.y);
    finish(i0 + 4u * r + 2u, j, v.z);
    finish(i0 + 4u * r + 3u, j, v.w);
  }
}

const TILE: u32 = 32u;
const TK: u32 = 16u;
var<workgroup> tile_a: array<f32, 512>; // [TILE rows][TK]
var<workgroup> tile_b: array<f32, 512>; // [TK][TILE cols]

@compute @workgroup_size(8, 8)
fn v2_tiled(
  @builtin(workgroup_id) wid: vec3u,
  @builtin(local_invocation_id) lid: vec3u,
  @builtin(local_invocation_index) li: u32,
) {
  let row0 = wid.y * TILE;
  let col0 = wid.x * TILE;
  var acc: array<vec4f, 4>;
  for (var k0 = 0u; k0 < p.K; k0 += TK) {
    for (var e = li; e < 512u; e += 64u) {
      tile_a[e] = load_a(row0 + e / TK, k0 + e % TK);
      tile_b[e] = load_b(k0 + e / TILE, col0 + e % TILE);
    }
    workgroupBarrier();
    for (var k = 0u; k < TK; k++) {
      let bb = k * TILE + lid.x * 4u;
      let bv = vec4f(tile_b[bb], tile_b[bb + 1u], tile_b[bb + 2u], tile_b[bb + 3u]);
      for (var r = 0u; r < 4u; r++) {
        acc[r] += tile_a[(lid.y * 4u + r) * TK + k] * bv;
      }
    }
    workgroupBarrier();
  }
  for (var r = 0u; r < 4u; r++) {
    let i = row0 + lid.y * 4u + r;
    let j = col0 + lid.x * 4u;
    let row = acc[r];
    finish(i, j, row.x);
    finish(i, j + 1u, row.y);
    finish(i, j + 2u, row.z);
    finish(i, j + 3u, row.w);
  }
}

@compute @workgroup_size(64)
fn bias_grad(@builtin(global_invocation_id) gid: vec3u) {
  let j = gid.x;
  if (j >= p.N) {
    return;
  }
  var s = 0.0;
  for (var i = 0u; i < p.M; i++) {
    s += a[i * p.N + j];
  }
  if ((p.flags & 4u) != 0u) {
    s += c[j];
  }
  c[j] = s;
}
