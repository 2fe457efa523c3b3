// Rotary position embedding, Hugging Face's rotate-half convention, in place on the q and k
// parts of the qkv rows [R, W] (W = (H + 2·KVH)·HD: q heads | k heads | v heads):
//   out[i]        = x[i]·cos(θ_i·pos) − x[i + HD/2]·sin(θ_i·pos)
//   out[i + HD/2] = x[i + HD/2]·cos(θ_i·pos) + x[i]·sin(θ_i·pos),   θ_i = theta^(−2i/HD)
// cos and sin come from a host table [positions, HD] (cos at p·HD + i, sin at p·HD + HD/2 + i,
// computed in float64 once), so no large angle meets the device's sin/cos.
// Row r is position pos0 + r % T, or (flags & 2) positions[r / T] + r % T (a decode step's rows
// each at their own length). flags & 1: the inverse rotation (−angle), which is the backward
// (the rotation is orthogonal: dx = Rᵀ·dy).
// One invocation per (row, head of q or k, pair i < HD/2); no shared memory, no barriers.

struct Params {
  R: u32, T: u32, H: u32, KVH: u32,
  HD: u32, pos0: u32, flags: u32, W: u32,
}

@group(0) @binding(0) var<storage, read> table: array<f32>;
@group(0) @binding(1) var<storage, read> positions: array<u32>;
@group(0) @binding(2) var<storage, read_write> qkv: array<f32>;
@group(0) @binding(7) var<uniform> p: Params;

@compute @workgroup_size(64)
fn rotate(@builtin(global_invocation_id) gid: vec3u, @builtin(num_workgroups) nwg: vec3u) {
  let e = gid.x + gid.y * nwg.x * 64u;
  let half = p.HD / 2u;
  let heads = p.H + p.KVH;
  if (e >= p.R * heads * half) {
    return;
  }
  let i = e % half;
  let head = (e / half) % heads; // q heads 0..H−1, then k heads: contiguous in the row
  let r = e / (half * heads);
  var pos = p.pos0 + r % p.T;
  if ((p.flags & 2u) != 0u) {
    pos = positions[r / p.T] + r % p.T;
  }
  let c = table[pos * p.HD + i];
  var s = table[pos * p.HD + half + i];
  if ((p.flags & 1u) != 0u) {
    s = -s;
  }
  let at = r * p.W + head * p.HD + i;
  let x1 = qkv[at];
  let x2 = qkv[at + half];
  qkv[at] = x1 * c - x2 * s;
  qkv[at + half] = x2 * c + x1 * s;
}
