// The embedding's rows and learned positions, for the one model (gpu/engine/deviceTransformer.ts).
// Entry points:
//   lookup         x[r, :] = E[ids[r] − lo, :] for the ids in [lo, hi) (an embedding too large
//                  for one binding is split in row ranges, one dispatch each), E stored as f32,
//                  F16 or BF16 (override E_DTYPE: 0, 1, 2; 16-bit rows two to a u32 word);
//                  uniforms B = rows, D, wte_off = lo, wpe_off = hi. flags 1: add to x (learned
//                  positions after the tokens: E the positions' table, ids the positions);
//                  flags 2: ids holds each sequence's first position, row r = b·T + t looks up
//                  ids[b] + t (a prefill's positions, T of them; a decode step's, T = 1)
//   backward_wte   one invocation per column c, rows in order: dwte[ids[r], c] += dx[r, c]
//                  (race-free without atomics: each invocation owns a column; the tied
//                  head's gradient lands in the same rows)
//   backward_wpe   the same for the positions: dwpe[positions[r], c] += dx[r, c] (each row's
//                  position from `positions`: packed rows, packedBatch.ts, restart a
//                  completion's positions after its prompt)
// The gradients go into the flat gradient buffer at wte_off / wpe_off, over B·T rows.

struct Params {
  B: u32, T: u32, D: u32, wte_off: u32,
  wpe_off: u32, flags: u32, _p1: u32, _p2: u32,
}

@group(0) @binding(7) var<uniform> p: Params;

@group(0) @binding(0) var<storage, read> bids: array<u32>;
@group(0) @binding(1) var<storage, read> dx: array<f32>;
@group(0) @binding(2) var<storage, read_write> grads: array<f32>;
@group(0) @binding(3) var<storage, read> positions: array<u32>;

@compute @workgroup_size(64)
fn backward_wte(@builtin(global_invocation_id) gid: vec3u) {
  let c = gid.x;
  if (c >= p.D) {
    return;
  }
  for (var r = 0u; r < p.B * p.T; r++) {
    let i = p.wte_off + bids[r] * p.D + c;
    grads[i] += dx[r * p.D + c];
  }
}

@compute @workgroup_size(64)
fn backward_wpe(@builtin(global_invocation_id) gid: vec3u) {
  let c = gid.x;
  if (c >= p.D) {
    return;
  }
  for (var r = 0u; r < p.B * p.T; r++) {
    grads[p.wpe_off + positions[r] * p.D + c] += dx[r * p.D + c];
  }
}

@group(0) @binding(0) var<storage, read> lids: array<u32>;
@group(0) @binding(1) var<storage, read> table: array<u32>;
@group(0) @binding(2) var<storage, read_write> lx: array<f32>;
/** 0: f32, 1: F16, 2: BF16. */
override E_DTYPE: u32 = 2u;

@compute @workgroup_size(64)
fn lookup(@builtin(global_invocation_id) gid: vec3u, @builtin(num_workgroups) nwg: vec3u) {
  let e = gid.x + gid.y * nwg.x * 64u;
  if (e >= p.B * p.D) {
    return;
  }
  let r = e / p.D;
  let c = e % p.D;
  var id = lids[r];
  if ((p.flags & 2u) != 0u) {
    id = lids[r / p.T] + r % p.T;
  }
  if (id < p.wte_off || id >= p.wpe_off) {
    return; // another range's dispatch writes this row
  }
  let i = (id - p.wte_off) * p.D + c;
  var v: f32;
  if (E_DTYPE == 0u) {
    v = bitcast<f32>(table[i]);
  } else {
    let word = table[i >> 1u];
    let bits = select(word & 0xffffu, word >> 16u, (i & 1u) == 1u);
    if (E_DTYPE == 2u) {
      v = bitcast<f32>(bits << 16u);
    } else {
      v = unpack2x16float(bits).x;
    }
  }
  if ((p.flags & 1u) != 0u) {
    v += lx[e];
  }
  lx[e] = v;
}
