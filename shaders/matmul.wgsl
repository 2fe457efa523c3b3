// Matrix multiply with a fused epilogue: C[M,N] (+)= A[M,K] · B[K,N] (+ bias[N]) (+ R[M,N]),
// where A and B are read through strides, so one kernel serves X·W (forward), dY·Wᵀ (input
// gradient), Xᵀ·dY (weight gradient) and X·Eᵀ (the tied head):
//   A(i,k) = a[i·a_rs + k·a_cs],  B(k,j) = b[k·b_rs + j·b_cs],  C(i,j) = c[i·c_rs + j]
// (R and AUX share C's layout; c_rs > N pads C's rows, e.g. the logits' to a multiple of 4).
// flags (bits):
//   1  add bias[j]
//   2  add the residual R[i,j] (x + proj: the residual stream's update in one pass)
//   4  accumulate: C += result (gradients summed over micro-batches and tied weights)
//   8  GELU forward: C holds the pre-activation, AUX = gelu_tanh(C) (saved for the backward)
//   16 GELU backward: result ·= gelu_tanh'(AUX[i,j]) (AUX = the saved pre-activation)
// EPILOGUE: each version runs finish() (finish4) for its block of C in a loop, not unrolled by
// hand: CPU drivers' compilers (SwiftShader's LLVM) compile every inlined copy, GELU's tanh and
// all, on its own; sixteen copies made most of v4's ~1.2 s compile per specialisation, the loop
// ~0.2 s, at no measured cost per call (bench/webgpuProfile.ts).
// Entry points (versions, each checked against the float64 reference):
//   v1_regblock  a 4×4 block of C per invocation, no shared memory and no barriers (what CPU
//                Vulkan drivers want: workgroupBarrier is ~10× dearer there)
//   v2_tiled     32×32 tiles of C per workgroup through shared memory (what real GPUs want)
//   v3_colblock  one column × 16 rows of C per invocation, neighbouring invocations on
//                neighbouring columns: B is read as one contiguous vector across lanes, A as
//                broadcasts (CPU drivers vectorise across invocations, and gathers are dear)
//   v4_vec4      an 8×8 block of C per invocation, A and B read four floats at a time along
//                the direction each is contiguous in (overrides A_ALONG_K, B_ALONG_K), C and
//                its epilogue four at a time; for lavapipe, which loads a storage buffer lane
//                by lane (a loop with a branch per lane and load), so a vec4 load costs little
//                more than a scalar one. Any M, N, K: rows and columns past the edge read
//                whatever lies there and are dropped, k past K is masked to zero. ops.ts uses
//                it where strides, offsets and c_rs are multiples of 4 (else v1_regblock).
//   v5_b16       C = A·Wᵀ with the weight W [N, K] 16-bit on the device (F16 or BF16, override
//                B_BF16), two to a u32 word, decoded in registers, f32 accumulation: RB rows
//                (an override, 1 for a decode step's single row) × 8 columns per invocation, A
//                and W read four k at a time (K, a_rs, b_cs, c_rs multiples of 4); finish4's
//                epilogue (bias, residual, accumulate)
//   v6_b16t      C [M, N] (+)= A [M, K]·W [K, N] with W 16-bit as v5_b16 stores it (W's row k
//                holds C's N columns, b_cs floats apart): the input gradient dX = dY·W through a
//                frozen 16-bit weight. RB rows × 8 columns per invocation; k past K masked (A's
//                rows may be padded, e.g. the logits'); N, b_cs, a_rs, c_rs multiples of 4
//   bias_grad    db[j] (+)= Σ_i dC[i,j], one invocation per column (reads A as dC [M,N])
//   bias_grad4   the same four columns at a time, four invocations splitting the rows of
//                each (N a multiple of 4): a quarter of the loads, four times the lanes

struct Params {
  M: u32, N: u32, K: u32, a_rs: u32,
  a_cs: u32, b_rs: u32, b_cs: u32, flags: u32,
  c_rs: u32, _p0: u32, _p1: u32, _p2: u32,
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
  let idx = i * p.c_rs + j;
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
  for (var q = 0u; q < 16u; q++) { // one epilogue in a loop (see EPILOGUE above)
    finish(i0 + q / 4u, j0 + q % 4u, rows[q / 4u][q % 4u]);
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
  for (var q = 0u; q < 16u; q++) { // one epilogue in a loop (see EPILOGUE above)
    finish(i0 + q, j, rows[q / 4u][q % 4u]);
  }
}

// v4_vec4's views of A and B (the same buffers as a and b; WGSL lets entry points that do not
// share variables share bindings).
@group(0) @binding(0) var<storage, read> a4: array<vec4f>;
@group(0) @binding(1) var<storage, read> b4: array<vec4f>;
@group(0) @binding(2) var<storage, read> bias4: array<vec4f>;
@group(0) @binding(3) var<storage, read> res4: array<vec4f>;
@group(0) @binding(4) var<storage, read_write> c4: array<vec4f>;
@group(0) @binding(5) var<storage, read_write> aux4: array<vec4f>;
/** true: A(i, k..k+3) is contiguous (a_cs = 1); false: A(i..i+3, k) is (a_rs = 1). */
override A_ALONG_K: bool = true;
/** true: B(k..k+3, j) is contiguous (b_rs = 1); false: B(k, j..j+3) is (b_cs = 1). */
override B_ALONG_K: bool = false;

/** acc + Σ_kk a[kk]·b_kk: one row of the block over four k. */
fn row_fma(acc: vec4f, a: vec4f, b0: vec4f, b1: vec4f, b2: vec4f, b3: vec4f) -> vec4f {
  return acc + a.x * b0 + a.y * b1 + a.z * b2 + a.w * b3;
}

fn gelu4(x: vec4f) -> vec4f {
  return vec4f(gelu(x.x), gelu(x.y), gelu(x.z), gelu(x.w));
}

fn gelu_grad4(x: vec4f) -> vec4f {
  return vec4f(gelu_grad(x.x), gelu_grad(x.y), gelu_grad(x.z), gelu_grad(x.w));
}

/**
 * finish() for C(i, j..j+3), j and c_rs multiples of 4: every access four floats at once.
 * Columns N.. of the last group land in the row's padding (c_rs ≥ N rounded up to 4).
 */
fn finish4(i: u32, j: u32, acc: vec4f) {
  if (i >= p.M || j >= p.N) {
    return;
  }
  let idx = (i * p.c_rs + j) >> 2u;
  var v = acc;
  if ((p.flags & 1u) != 0u) {
    v += bias4[j >> 2u];
  }
  if ((p.flags & 2u) != 0u) {
    v += res4[idx];
  }
  if ((p.flags & 16u) != 0u) {
    v *= gelu_grad4(aux4[idx]);
  }
  if ((p.flags & 4u) != 0u) {
    v += c4[idx];
  }
  c4[idx] = v;
  if ((p.flags & 8u) != 0u) {
    aux4[idx] = gelu4(v);
  }
}

@compute @workgroup_size(8, 8)
fn v4_vec4(@builtin(global_invocation_id) gid: vec3u) {
  let i0 = gid.y * 8u;
  let j0 = gid.x * 8u;
  if (i0 >= p.M || j0 >= p.N) {
    return;
  }
  // Rows (columns) past the edge read what lies there (clamped to the size rounded up to 4
  // where four are read at once); finish() drops their results. k past K reads the last row
  // (column) and is masked to zero, so only A(·, k < K) and B(k < K, ·) reach the sums.
  let last_i = p.M - 1u;
  let last_j = p.N - 1u;
  let last_k = p.K - 1u;
  let top_i = ((p.M + 3u) & ~3u) - 4u;
  let top_j = ((p.N + 3u) & ~3u) - 4u;
  var l0 = vec4f(); var l1 = vec4f(); var l2 = vec4f(); var l3 = vec4f();
  var l4 = vec4f(); var l5 = vec4f(); var l6 = vec4f(); var l7 = vec4f();
  var h0 = vec4f(); var h1 = vec4f(); var h2 = vec4f(); var h3 = vec4f();
  var h4 = vec4f(); var h5 = vec4f(); var h6 = vec4f(); var h7 = vec4f();
  for (var k = 0u; k < p.K; k += 4u) {
    let live = vec4<bool>(k < p.K, k + 1u < p.K, k + 2u < p.K, k + 3u < p.K);
    let k1 = min(k + 1u, last_k);
    let k2 = min(k + 2u, last_k);
    let k3 = min(k + 3u, last_k);
    // A as rows r0..r7, each a vec4 over k..k+3
    var r0: vec4f; var r1: vec4f; var r2: vec4f; var r3: vec4f;
    var r4: vec4f; var r5: vec4f; var r6: vec4f; var r7: vec4f;
    if (A_ALONG_K) {
      let k4 = k >> 2u;
      let rs = p.a_rs >> 2u;
      let z = vec4f();
      r0 = select(z, a4[min(i0, last_i) * rs + k4], live);
      r1 = select(z, a4[min(i0 + 1u, last_i) * rs + k4], live);
      r2 = select(z, a4[min(i0 + 2u, last_i) * rs + k4], live);
      r3 = select(z, a4[min(i0 + 3u, last_i) * rs + k4], live);
      r4 = select(z, a4[min(i0 + 4u, last_i) * rs + k4], live);
      r5 = select(z, a4[min(i0 + 5u, last_i) * rs + k4], live);
      r6 = select(z, a4[min(i0 + 6u, last_i) * rs + k4], live);
      r7 = select(z, a4[min(i0 + 7u, last_i) * rs + k4], live);
    } else {
      let cs = p.a_cs >> 2u;
      let lo = i0 >> 2u;
      let hi = min(i0 + 4u, top_i) >> 2u;
      let x0 = a4[k * cs + lo];
      let x1 = select(vec4f(), a4[k1 * cs + lo], live.y);
      let x2 = select(vec4f(), a4[k2 * cs + lo], live.z);
      let x3 = select(vec4f(), a4[k3 * cs + lo], live.w);
      let y0 = a4[k * cs + hi];
      let y1 = select(vec4f(), a4[k1 * cs + hi], live.y);
      let y2 = select(vec4f(), a4[k2 * cs + hi], live.z);
      let y3 = select(vec4f(), a4[k3 * cs + hi], live.w);
      r0 = vec4f(x0.x, x1.x, x2.x, x3.x);
      r1 = vec4f(x0.y, x1.y, x2.y, x3.y);
      r2 = vec4f(x0.z, x1.z, x2.z, x3.z);
      r3 = vec4f(x0.w, x1.w, x2.w, x3.w);
      r4 = vec4f(y0.x, y1.x, y2.x, y3.x);
      r5 = vec4f(y0.y, y1.y, y2.y, y3.y);
      r6 = vec4f(y0.z, y1.z, y2.z, y3.z);
      r7 = vec4f(y0.w, y1.w, y2.w, y3.w);
    }
    // B as rows kk = 0..3, each two vec4s over columns j0..j0+3 (l) and j0+4..j0+7 (h)
    var b0l: vec4f; var b1l: vec4f; var b2l: vec4f; var b3l: vec4f;
    var b0h: vec4f; var b1h: vec4f; var b2h: vec4f; var b3h: vec4f;
    if (B_ALONG_K) {
      let k4 = k >> 2u;
      let cs = p.b_cs >> 2u;
      let z = vec4f();
      let c0 = select(z, b4[min(j0, last_j) * cs + k4], live);
      let c1 = select(z, b4[min(j0 + 1u, last_j) * cs + k4], live);
      let c2 = select(z, b4[min(j0 + 2u, last_j) * cs + k4], live);
      let c3 = select(z, b4[min(j0 + 3u, last_j) * cs + k4], live);
      let c4 = select(z, b4[min(j0 + 4u, last_j) * cs + k4], live);
      let c5 = select(z, b4[min(j0 + 5u, last_j) * cs + k4], live);
      let c6 = select(z, b4[min(j0 + 6u, last_j) * cs + k4], live);
      let c7 = select(z, b4[min(j0 + 7u, last_j) * cs + k4], live);
      b0l = vec4f(c0.x, c1.x, c2.x, c3.x);
      b1l = vec4f(c0.y, c1.y, c2.y, c3.y);
      b2l = vec4f(c0.z, c1.z, c2.z, c3.z);
      b3l = vec4f(c0.w, c1.w, c2.w, c3.w);
      b0h = vec4f(c4.x, c5.x, c6.x, c7.x);
      b1h = vec4f(c4.y, c5.y, c6.y, c7.y);
      b2h = vec4f(c4.z, c5.z, c6.z, c7.z);
      b3h = vec4f(c4.w, c5.w, c6.w, c7.w);
    } else {
      let rs = p.b_rs >> 2u;
      let lo = j0 >> 2u;
      let hi = min(j0 + 4u, top_j) >> 2u;
      b0l = b4[k * rs + lo];
      b1l = select(vec4f(), b4[k1 * rs + lo], live.y);
      b2l = select(vec4f(), b4[k2 * rs + lo], live.z);
      b3l = select(vec4f(), b4[k3 * rs + lo], live.w);
      b0h = b4[k * rs + hi];
      b1h = select(vec4f(), b4[k1 * rs + hi], live.y);
      b2h = select(vec4f(), b4[k2 * rs + hi], live.z);
      b3h = select(vec4f(), b4[k3 * rs + hi], live.w);
    }
    l0 = row_fma(l0, r0, b0l, b1l, b2l, b3l);
    h0 = row_fma(h0, r0, b0h, b1h, b2h, b3h);
    l1 = row_fma(l1, r1, b0l, b1l, b2l, b3l);
    h1 = row_fma(h1, r1, b0h, b1h, b2h, b3h);
    l2 = row_fma(l2, r2, b0l, b1l, b2l, b3l);
    h2 = row_fma(h2, r2, b0h, b1h, b2h, b3h);
    l3 = row_fma(l3, r3, b0l, b1l, b2l, b3l);
    h3 = row_fma(h3, r3, b0h, b1h, b2h, b3h);
    l4 = row_fma(l4, r4, b0l, b1l, b2l, b3l);
    h4 = row_fma(h4, r4, b0h, b1h, b2h, b3h);
    l5 = row_fma(l5, r5, b0l, b1l, b2l, b3l);
    h5 = row_fma(h5, r5, b0h, b1h, b2h, b3h);
    l6 = row_fma(l6, r6, b0l, b1l, b2l, b3l);
    h6 = row_fma(h6, r6, b0h, b1h, b2h, b3h);
    l7 = row_fma(l7, r7, b0l, b1l, b2l, b3l);
    h7 = row_fma(h7, r7, b0h, b1h, b2h, b3h);
  }
  // One epilogue in a loop (see EPILOGUE above).
  let block = array<vec4f, 16>(l0, h0, l1, h1, l2, h2, l3, h3, l4, h4, l5, h5, l6, h6, l7, h7);
  for (var q = 0u; q < 16u; q++) {
    finish4(i0 + (q >> 1u), j0 + 4u * (q & 1u), block[q]);
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
  for (var q = 0u; q < 16u; q++) { // one epilogue in a loop (see EPILOGUE above)
    finish(row0 + lid.y * 4u + q / 4u, col0 + lid.x * 4u + q % 4u, acc[q / 4u][q % 4u]);
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

var<workgroup> col_part: array<vec4f, 64>;

@compute @workgroup_size(64)
fn bias_grad4(@builtin(workgroup_id) wid: vec3u, @builtin(local_invocation_index) lid: u32) {
  let N4 = p.N >> 2u;
  let j4 = wid.x * 16u + lid % 16u; // this invocation's four columns
  let slice = lid / 16u; // rows slice, slice + 4, …
  var s = vec4f();
  if (j4 < N4) {
    for (var i = slice; i < p.M; i += 4u) {
      s += a4[i * N4 + j4];
    }
  }
  col_part[lid] = s;
  workgroupBarrier();
  if (slice != 0u || j4 >= N4) {
    return;
  }
  var total = col_part[lid] + col_part[lid + 16u] + col_part[lid + 32u] + col_part[lid + 48u];
  if ((p.flags & 4u) != 0u) {
    total += c4[j4];
  }
  c4[j4] = total;
}

// v5_b16's weight: W [N, K] as 16-bit floats, four (two u32 words) per element.
@group(0) @binding(1) var<storage, read> w16: array<vec2u>;
/** true: BF16 (an f32's top half); false: IEEE F16. */
override B_BF16: bool = true;
/** Rows of C per invocation (≤ 8). */
override RB: u32 = 8u;

/** W(j, k..k+3), i4 = (j·b_cs + k) / 4. */
fn w16_4(i4: u32) -> vec4f {
  let w = w16[i4];
  if (B_BF16) {
    return vec4f(
      bitcast<f32>(w.x << 16u), bitcast<f32>(w.x & 0xffff0000u),
      bitcast<f32>(w.y << 16u), bitcast<f32>(w.y & 0xffff0000u),
    );
  }
  return vec4f(unpack2x16float(w.x), unpack2x16float(w.y));
}

@compute @workgroup_size(64)
fn v5_b16(@builtin(global_invocation_id) gid: vec3u) {
  let j0 = gid.x * 8u;
  let i0 = gid.y * RB;
  if (i0 >= p.M || j0 >= p.N) {
    return;
  }
  let last_i = p.M - 1u;
  let last_j = p.N - 1u;
  let ars = p.a_rs >> 2u;
  let bcs = p.b_cs >> 2u;
  var wrow: array<u32, 8>;
  for (var c = 0u; c < 8u; c++) {
    wrow[c] = min(j0 + c, last_j) * bcs;
  }
  var acc: array<array<vec4f, 2>, 8>;
  for (var k4 = 0u; k4 < p.K / 4u; k4++) {
    let w0 = w16_4(wrow[0] + k4);
    let w1 = w16_4(wrow[1] + k4);
    let w2 = w16_4(wrow[2] + k4);
    let w3 = w16_4(wrow[3] + k4);
    let w4 = w16_4(wrow[4] + k4);
    let w5 = w16_4(wrow[5] + k4);
    let w6 = w16_4(wrow[6] + k4);
    let w7 = w16_4(wrow[7] + k4);
    for (var r = 0u; r < RB; r++) {
      let x = a4[min(i0 + r, last_i) * ars + k4];
      acc[r][0] += vec4f(dot(x, w0), dot(x, w1), dot(x, w2), dot(x, w3));
      acc[r][1] += vec4f(dot(x, w4), dot(x, w5), dot(x, w6), dot(x, w7));
    }
  }
  for (var r = 0u; r < RB; r++) {
    finish4(i0 + r, j0, acc[r][0]);
    finish4(i0 + r, j0 + 4u, acc[r][1]);
  }
}

@compute @workgroup_size(64)
fn v6_b16t(@builtin(global_invocation_id) gid: vec3u) {
  let j0 = gid.x * 8u;
  let i0 = gid.y * RB;
  if (i0 >= p.M || j0 >= p.N) {
    return;
  }
  let last_i = p.M - 1u;
  let last_k = p.K - 1u;
  let ars = p.a_rs >> 2u;
  let bcs = p.b_cs >> 2u;
  let jq = j0 >> 2u;
  var acc: array<array<vec4f, 2>, 8>;
  for (var k4 = 0u; k4 < (p.K + 3u) / 4u; k4++) {
    let k = k4 * 4u;
    let r0 = min(k, last_k) * bcs + jq;
    let r1 = min(k + 1u, last_k) * bcs + jq;
    let r2 = min(k + 2u, last_k) * bcs + jq;
    let r3 = min(k + 3u, last_k) * bcs + jq;
    let lo0 = w16_4(r0);
    let lo1 = w16_4(r1);
    let lo2 = w16_4(r2);
    let lo3 = w16_4(r3);
    let hi0 = w16_4(r0 + 1u);
    let hi1 = w16_4(r1 + 1u);
    let hi2 = w16_4(r2 + 1u);
    let hi3 = w16_4(r3 + 1u);
    let live = vec4u(k, k + 1u, k + 2u, k + 3u) < vec4u(p.K);
    for (var r = 0u; r < RB; r++) {
      let x = select(vec4f(), a4[min(i0 + r, last_i) * ars + k4], live);
      acc[r][0] = row_fma(acc[r][0], x, lo0, lo1, lo2, lo3);
      acc[r][1] = row_fma(acc[r][1], x, hi0, hi1, hi2, hi3);
    }
  }
  for (var r = 0u; r < RB; r++) {
    finish4(i0 + r, j0, acc[r][0]);
    finish4(i0 + r, j0 + 4u, acc[r][1]);
  }
}
