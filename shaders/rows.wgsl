// Rows of a [R, D] matrix picked by index, for the tied head at chosen positions only: GRPO's
// loss reads the log-probs of completion tokens, so the head, its log-softmax and their
// gradients skip every prompt position (gpt.ts' logitsAt does the same on tfjs).
//   gather    dst[i, :] = src[sel[i], :] for i < n                 (one invocation per vec4)
//   scatter   dst[r, :] = src[inv[r], :] where inv[r] < n, else 0  (one invocation per vec4 of
//             all R rows: the rows not picked get a zero gradient)
// D is a multiple of 4 (the fused kernels' widths are); rows are read and written as vec4s.

struct Params {
  n: u32, R: u32, D: u32, _p0: u32,
}

@group(0) @binding(0) var<storage, read> src: array<vec4f>;
@group(0) @binding(1) var<storage, read> index: array<u32>;
@group(0) @binding(2) var<storage, read_write> dst: array<vec4f>;
@group(0) @binding(7) var<uniform> p: Params;

@compute @workgroup_size(64)
fn gather(@builtin(global_invocation_id) gid: vec3u, @builtin(num_workgroups) nwg: vec3u) {
  let e = gid.x + gid.y * nwg.x * 64u;
  let D4 = p.D / 4u;
  if (e >= p.n * D4) {
    return;
  }
  let i = e / D4;
  dst[e] = src[index[i] * D4 + e % D4];
}

@compute @workgroup_size(64)
fn scatter(@builtin(global_invocation_id) gid: vec3u, @builtin(num_workgroups) nwg: vec3u) {
  let e = gid.x + gid.y * nwg.x * 64u;
  let D4 = p.D / 4u;
  if (e >= p.R * D4) {
    return;
  }
  let picked = index[e / D4];
  dst[e] = select(vec4f(), src[min(picked, p.n) * D4 + e % D4], picked < p.n);
}
