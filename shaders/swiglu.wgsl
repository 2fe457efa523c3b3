// SwiGLU, the Llama family's MLP activation, on the fused gate|up projection gu [R, 2I]
// (gate_proj's I columns, then up_proj's):
//   forward   h[r, j] = silu(g)·u,  silu(g) = g·σ(g),  g = gu[r, j], u = gu[r, I + j]
//   backward  dg = dh·u·σ(g)·(1 + g·(1 − σ(g))),  du = dh·silu(g), written into dgu [R, 2I]
// One invocation per four elements (I a multiple of 4: rows read and written as vec4s).

struct Params {
  R: u32, I: u32, _p0: u32, _p1: u32,
}

@group(0) @binding(0) var<storage, read> gu: array<vec4f>;
@group(0) @binding(1) var<storage, read_write> h: array<vec4f>;
@group(0) @binding(7) var<uniform> p: Params;

fn sigmoid4(g: vec4f) -> vec4f {
  return 1.0 / (1.0 + exp(-g));
}

@compute @workgroup_size(64)
fn forward(@builtin(global_invocation_id) gid: vec3u, @builtin(num_workgroups) nwg: vec3u) {
  let e = gid.x + gid.y * nwg.x * 64u;
  let I4 = p.I / 4u;
  if (e >= p.R * I4) {
    return;
  }
  let r = e / I4;
  let j = e % I4;
  let g = gu[r * 2u * I4 + j];
  let u = gu[r * 2u * I4 + I4 + j];
  h[e] = g * sigmoid4(g) * u;
}

@group(0) @binding(0) var<storage, read> bgu: array<vec4f>;
@group(0) @binding(1) var<storage, read> dh: array<vec4f>;
@group(0) @binding(2) var<storage, read_write> dgu: array<vec4f>;

@compute @workgroup_size(64)
fn backward(@builtin(global_invocation_id) gid: vec3u, @builtin(num_workgroups) nwg: vec3u) {
  let e = gid.x + gid.y * nwg.x * 64u;
  let I4 = p.I / 4u;
  if (e >= p.R * I4) {
    return;
  }
  let r = e / I4;
  let j = e % I4;
  let gi = r * 2u * I4 + j;
  let g = bgu[gi];
  let u = bgu[gi + I4];
  let s = sigmoid4(g);
  let d = dh[e];
  dgu[gi] = d * u * s * (1.0 + g * (1.0 - s));
  dgu[gi + I4] = d * g * s;
}
