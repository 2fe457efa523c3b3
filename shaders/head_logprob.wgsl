// The tied head's log-softmax, fused: for each row r of logits [R, V] (= LN_f(x)·wteᵀ, the
// matmul kernel's X·Eᵀ; rows `stride` floats apart, the engine pads them to a multiple of 4
// for matmul v4_vec4; the padding is never read), with z = logits·inv_temp,
//   logp[r] = z[r, t_r] − logsumexp(z[r, :]),  entropy[r] = −Σ p log p,  lse[r] saved.
// Entry points:
//   forward   one invocation per row, one pass (online softmax: running max, Σe, Σe·z)
//   backward  one invocation per element, in place: logits ← g[r]·inv_temp·(1[j = t_r] − p_rj)
//             (the gradient of Σ_r g[r]·logp[r]; entropy is a metric and carries none)
//   sample    see decode.wgsl (the sampler lives with the decode step)

struct Params {
  R: u32, V: u32, inv_temp: f32, stride: u32,
}

@group(0) @binding(0) var<storage, read> logits: array<f32>;
@group(0) @binding(1) var<storage, read> targets: array<u32>;
@group(0) @binding(2) var<storage, read_write> out: array<f32>; // [3R]: logp | entropy | lse
@group(0) @binding(7) var<uniform> p: Params;

@compute @workgroup_size(64)
fn forward(@builtin(global_invocation_id) gid: vec3u, @builtin(num_workgroups) nwg: vec3u) {
  let r = gid.x + gid.y * nwg.x * 64u;
  if (r >= p.R) {
    return;
  }
  let base = r * p.stride;
  var m = logits[base] * p.inv_temp;
  var s = 1.0;
  var t = 0.0;
  for (var j = 1u; j < p.V; j++) {
    let x = logits[base + j] * p.inv_temp;
    if (x > m) {
      let shift = m - x;
      let c = exp(shift);
      t = c * (t + s * shift);
      s = s * c + 1.0;
      m = x;
    } else {
      let z = x - m;
      let e = exp(z);
      s += e;
      t += e * z;
    }
  }
  let log_s = log(s);
  out[r] = logits[base + targets[r]] * p.inv_temp - m - log_s;
  out[p.R + r] = log_s - t / s;
  out[2u * p.R + r] = m + log_s;
}

@group(0) @binding(0) var<storage, read> btargets: array<u32>;
@group(0) @binding(1) var<storage, read> g: array<f32>;
@group(0) @binding(2) var<storage, read> stats: array<f32>; // forward's out
@group(0) @binding(3) var<storage, read_write> dlogits: array<f32>; // logits in, gradient out

@compute @workgroup_size(64)
fn backward(@builtin(global_invocation_id) gid: vec3u, @builtin(num_workgroups) nwg: vec3u) {
  let e = gid.x + gid.y * nwg.x * 64u;
  if (e >= p.R * p.V) {
    return;
  }
  let r = e / p.V;
  let j = e % p.V;
  let at = r * p.stride + j;
  let gr = g[r];
  if (gr == 0.0) {
    dlogits[at] = 0.0;
    return;
  }
  let prob = exp(dlogits[at] * p.inv_temp - stats[2u * p.R + r]);
  var onehot = 0.0;
  if (j == btargets[r]) {
    onehot = 1.0;
  }
  dlogits[at] = gr * p.inv_temp * (onehot - prob);
}
