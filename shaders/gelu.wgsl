// GELU (tanh form, GPT-2's gelu_new) on its own, for where a LoRA adapter on fc must add to the
// pre-activation before it (matmul.wgsl's epilogue applies the same GELU to a product as it is
// written; the two share the formula, so the same bits):
//   forward   h = gelu(pre)
//   backward  dpre = dh · gelu'(pre)
// One invocation per four elements (n a multiple of 4: read and written as vec4s).

struct Params {
  n: u32, _p0: u32, _p1: u32, _p2: u32,
}

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

fn index(gid: vec3u, nwg: vec3u) -> u32 {
  return gid.x + gid.y * nwg.x * 64u;
}

@group(0) @binding(0) var<storage, read> pre: array<vec4f>;
@group(0) @binding(1) var<storage, read_write> h: array<vec4f>;

@compute @workgroup_size(64)
fn forward(@builtin(global_invocation_id) gid: vec3u, @builtin(num_workgroups) nwg: vec3u) {
  let e = index(gid, nwg);
  if (e >= p.n / 4u) {
    return;
  }
  let x = pre[e];
  h[e] = vec4f(gelu(x.x), gelu(x.y), gelu(x.z), gelu(x.w));
}

@group(0) @binding(0) var<storage, read> bpre: array<vec4f>;
@group(0) @binding(1) var<storage, read> dh: array<vec4f>;
@group(0) @binding(2) var<storage, read_write> dpre: array<vec4f>;

@compute @workgroup_size(64)
fn backward(@builtin(global_invocation_id) gid: vec3u, @builtin(num_workgroups) nwg: vec3u) {
  let e = index(gid, nwg);
  if (e >= p.n / 4u) {
    return;
  }
  let x = bpre[e];
  dpre[e] = dh[e] * vec4f(gelu_grad(x.x), gelu_grad(x.y), gelu_grad(x.z), gelu_grad(x.w));
}
