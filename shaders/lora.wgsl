// LoRA's low-rank path beside a frozen projection, y = W·x + s·B·(A·x) with s = alpha / r
// (PEFT's shapes: A [r, in], B [out, r], f32). The adapters of one input (q, k, v of a layer's
// q|k|v; gate, up of its gate|up) run together as a site: their A stacked [n·r, in], their B
// stacked [Σ out, r], so the down projection u = x·Aᵀ [M, n·r] and the A-side gradients
// (dA = duᵀ·x, dx += du·A) are one plain matmul.wgsl product each. These entry points are the B
// side, whose output columns are n ≤ 3 segments inside a wider row (q, k, v inside the fused
// q|k|v rows; gate, up inside gate|up), which a binding offset (256-byte granular) cannot reach:
// column c of the stacked B (0 ≤ c < N = Σ widths) is segment t's column j, written at row i's
// i·y_rs + off_t + j, and reads u's columns t·r .. t·r + r − 1 (u rows n·r wide).
// Entry points (no shared memory, r is small):
//   up      y[i, c] (+)= s·Σ_k u[i, t·r + k]·B[c, k]      (flags 4: accumulate; the forward adds)
//           one invocation per row and four adjacent columns: on CPU drivers (SwiftShader) a
//           workgroup costs tens of µs whatever its work, and one output element per
//           invocation made this the LoRA backward's second-slowest kernel there (bench
//           llama-lora, LLAMA_LORA_SHAPE=fixture); each element's sum is the same as before
//   grad_u  du[i, t·r + k] = s·Σ_j dy[i, c(t, j)]·B[c(t, j), k]   (one invocation per element)
//   grad_b  dB[c, k] (+)= s·Σ_i dy[i, c]·u[i, t·r + k]            (flags 4: accumulate)
//   up_r4, grad_u_r4, grad_b_r4: the same for ranks that are multiples of 4, u, B, du and dB
//           read and written four k at a time (vec4s) and each sum kept in the same order, so
//           the same bits: CPU drivers (SwiftShader) pay per load, whatever its width

struct Params {
  M: u32, N: u32, r: u32, flags: u32,
  s: f32, y_rs: u32, n: u32, _p0: u32,
  off0: u32, w0: u32, off1: u32, w1: u32,
  off2: u32, w2: u32, _p1: u32, _p2: u32,
}

@group(0) @binding(7) var<uniform> p: Params;

fn flat(gid: vec3u, nwg: vec3u) -> u32 {
  return gid.x + gid.y * nwg.x * 64u;
}

/** Stacked column c → (its segment t, its column in y's row). */
fn column(c: u32) -> vec2u {
  if (c < p.w0) {
    return vec2u(0u, p.off0 + c);
  }
  if (c < p.w0 + p.w1) {
    return vec2u(1u, p.off1 + c - p.w0);
  }
  return vec2u(2u, p.off2 + c - p.w0 - p.w1);
}

/** Segment t's first stacked column and its y offset and width. */
fn segment(t: u32) -> vec3u {
  if (t == 0u) {
    return vec3u(0u, p.off0, p.w0);
  }
  if (t == 1u) {
    return vec3u(p.w0, p.off1, p.w1);
  }
  return vec3u(p.w0 + p.w1, p.off2, p.w2);
}

@group(0) @binding(0) var<storage, read> u: array<f32>;
@group(0) @binding(1) var<storage, read> b: array<f32>;
@group(0) @binding(2) var<storage, read_write> y: array<f32>;

@compute @workgroup_size(64)
fn up(@builtin(global_invocation_id) gid: vec3u, @builtin(num_workgroups) nwg: vec3u) {
  let quads = (p.N + 3u) / 4u;
  let e = flat(gid, nwg);
  if (e >= p.M * quads) {
    return;
  }
  let i = e / quads;
  let c0 = (e % quads) * 4u;
  let ur = p.n * p.r;
  for (var q = 0u; q < 4u; q++) {
    let c = c0 + q;
    if (c >= p.N) {
      break;
    }
    let col = column(c);
    var acc = 0.0;
    for (var k = 0u; k < p.r; k++) {
      acc += u[i * ur + col.x * p.r + k] * b[c * p.r + k];
    }
    let at = i * p.y_rs + col.y;
    var v = p.s * acc;
    if ((p.flags & 4u) != 0u) {
      v += y[at];
    }
    y[at] = v;
  }
}

@group(0) @binding(0) var<storage, read> dy: array<f32>;
@group(0) @binding(1) var<storage, read> gb: array<f32>;
@group(0) @binding(2) var<storage, read_write> du: array<f32>;

@compute @workgroup_size(64)
fn grad_u(@builtin(global_invocation_id) gid: vec3u, @builtin(num_workgroups) nwg: vec3u) {
  let ur = p.n * p.r;
  let e = flat(gid, nwg);
  if (e >= p.M * ur) {
    return;
  }
  let i = e / ur;
  let t = (e % ur) / p.r;
  let k = e % p.r;
  let sg = segment(t);
  let row = i * p.y_rs + sg.y;
  var acc = 0.0;
  for (var j = 0u; j < sg.z; j++) {
    acc += dy[row + j] * gb[(sg.x + j) * p.r + k];
  }
  du[e] = p.s * acc;
}

@group(0) @binding(0) var<storage, read> bdy: array<f32>;
@group(0) @binding(1) var<storage, read> bu: array<f32>;
@group(0) @binding(2) var<storage, read_write> db: array<f32>;

@compute @workgroup_size(64)
fn grad_b(@builtin(global_invocation_id) gid: vec3u, @builtin(num_workgroups) nwg: vec3u) {
  let e = flat(gid, nwg);
  if (e >= p.N * p.r) {
    return;
  }
  let c = e / p.r;
  let k = e % p.r;
  let col = column(c);
  let ur = p.n * p.r;
  var acc = 0.0;
  for (var i = 0u; i < p.M; i++) {
    acc += bdy[i * p.y_rs + col.y] * bu[i * ur + col.x * p.r + k];
  }
  var v = p.s * acc;
  if ((p.flags & 4u) != 0u) {
    v += db[e];
  }
  db[e] = v;
}

// ---- ranks that are multiples of 4: u, B, du, dB as vec4s over k ------------------------------

@group(0) @binding(0) var<storage, read> u4: array<vec4f>;
@group(0) @binding(1) var<storage, read> b4: array<vec4f>;

/** Σ_k x_k·y_k over four k, added one at a time (the scalar versions' order). */
fn dot_in_order(acc: f32, x: vec4f, y: vec4f) -> f32 {
  return (((acc + x.x * y.x) + x.y * y.y) + x.z * y.z) + x.w * y.w;
}

@compute @workgroup_size(64)
fn up_r4(@builtin(global_invocation_id) gid: vec3u, @builtin(num_workgroups) nwg: vec3u) {
  let quads = (p.N + 3u) / 4u;
  let e = flat(gid, nwg);
  if (e >= p.M * quads) {
    return;
  }
  let i = e / quads;
  let c0 = (e % quads) * 4u;
  let r4 = p.r / 4u;
  let ur4 = p.n * r4;
  for (var q = 0u; q < 4u; q++) {
    let c = c0 + q;
    if (c >= p.N) {
      break;
    }
    let col = column(c);
    var acc = 0.0;
    for (var k4 = 0u; k4 < r4; k4++) {
      acc = dot_in_order(acc, u4[i * ur4 + col.x * r4 + k4], b4[c * r4 + k4]);
    }
    let at = i * p.y_rs + col.y;
    var v = p.s * acc;
    if ((p.flags & 4u) != 0u) {
      v += y[at];
    }
    y[at] = v;
  }
}

@group(0) @binding(1) var<storage, read> gb4: array<vec4f>;
@group(0) @binding(2) var<storage, read_write> du4: array<vec4f>;

/** One invocation per four k of du's row i, segment t. */
@compute @workgroup_size(64)
fn grad_u_r4(@builtin(global_invocation_id) gid: vec3u, @builtin(num_workgroups) nwg: vec3u) {
  let r4 = p.r / 4u;
  let ur4 = p.n * r4;
  let e = flat(gid, nwg);
  if (e >= p.M * ur4) {
    return;
  }
  let i = e / ur4;
  let t = (e % ur4) / r4;
  let k4 = e % r4;
  let sg = segment(t);
  let row = i * p.y_rs + sg.y;
  var acc = vec4f();
  for (var j = 0u; j < sg.z; j++) {
    acc += dy[row + j] * gb4[(sg.x + j) * r4 + k4];
  }
  du4[e] = p.s * acc;
}

@group(0) @binding(1) var<storage, read> bu4: array<vec4f>;
@group(0) @binding(2) var<storage, read_write> db4: array<vec4f>;

/** One invocation per four k of dB's row c. */
@compute @workgroup_size(64)
fn grad_b_r4(@builtin(global_invocation_id) gid: vec3u, @builtin(num_workgroups) nwg: vec3u) {
  let r4 = p.r / 4u;
  let e = flat(gid, nwg);
  if (e >= p.N * r4) {
    return;
  }
  let c = e / r4;
  let k4 = e % r4;
  let col = column(c);
  let ur4 = p.n * r4;
  var acc = vec4f();
  for (var i = 0u; i < p.M; i++) {
    acc += bdy[i * p.y_rs + col.y] * bu4[i * ur4 + col.x * r4 + k4];
  }
  var v = p.s * acc;
  if ((p.flags & 4u) != 0u) {
    v += db4[e];
  }
  db4[e] = v;
}
