// LoRA's low-rank path beside a frozen projection, y = W·x + s·B·(A·x) with s = alpha / r
// (PEFT's shapes: A [r, in], B [out, r], f32). The down projection u = x·Aᵀ [M, r] and the A-side
// gradients (dA = duᵀ·x, dx += du·A) are plain matmul.wgsl products; these entry points are the
// B side, whose output columns sit at an offset inside a wider row (q, k, v inside the fused
// q|k|v rows; gate, up inside gate|up), which a binding offset (256-byte granular) cannot reach.
// Row i of y / dy is at i·y_rs + y_off.
// Entry points (no shared memory, r is small):
//   up      y[i, j] (+)= s·Σ_k u[i, k]·B[j, k]          (flags 4: accumulate; the forward adds)
//           one invocation per row and four adjacent columns: on CPU drivers (SwiftShader) a
//           workgroup costs tens of µs whatever its work, and one output element per
//           invocation made this the LoRA backward's second-slowest kernel there (bench
//           llama-lora, LLAMA_LORA_SHAPE=fixture); each element's sum is the same as before
//   grad_u  du[i, k] = s·Σ_j dy[i, j]·B[j, k]            (one invocation per element)
//   grad_b  dB[j, k] (+)= s·Σ_i dy[i, j]·u[i, k]          (flags 4: accumulate)

struct Params {
  M: u32, N: u32, r: u32, flags: u32,
  s: f32, y_rs: u32, y_off: u32, _p0: u32,
}

@group(0) @binding(7) var<uniform> p: Params;

fn flat(gid: vec3u, nwg: vec3u) -> u32 {
  return gid.x + gid.y * nwg.x * 64u;
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
  let j0 = (e % quads) * 4u;
  for (var c = 0u; c < 4u; c++) {
    let j = j0 + c;
    if (j >= p.N) {
      break;
    }
    var acc = 0.0;
    for (var k = 0u; k < p.r; k++) {
      acc += u[i * p.r + k] * b[j * p.r + k];
    }
    let at = i * p.y_rs + p.y_off + j;
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
  let e = flat(gid, nwg);
  if (e >= p.M * p.r) {
    return;
  }
  let i = e / p.r;
  let k = e % p.r;
  let row = i * p.y_rs + p.y_off;
  var acc = 0.0;
  for (var j = 0u; j < p.N; j++) {
    acc += dy[row + j] * gb[j * p.r + k];
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
  let j = e / p.r;
  let k = e % p.r;
  var acc = 0.0;
  for (var i = 0u; i < p.M; i++) {
    acc += bdy[i * p.y_rs + p.y_off + j] * bu[i * p.r + k];
  }
  var v = p.s * acc;
  if ((p.flags & 4u) != 0u) {
    v += db[e];
  }
  db[e] = v;
}
