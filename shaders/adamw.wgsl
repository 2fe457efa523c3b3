// The guarded AdamW step on the device, over flat parameter / gradient / moment buffers:
// global-norm clipping and the NaN/Inf guard decided without a readback.
// Entry points:
//   norm_partial  NP invocations, each over a contiguous chunk of the gradients: a scaled sum
//                 of squares (LAPACK nrm2's (scale, ssq), so large finite gradients do not
//                 overflow) and a non-finite flag (tested on the bits: NaN/Inf have an all-ones
//                 exponent; comparisons with NaN may be folded away by shader compilers)
//   norm_final    one invocation: stats = [global norm, ok (1/0), clip coefficient, loss]; ok is
//                 0 when the loss or any gradient is not finite
//   update        one invocation per element: skipped entirely unless ok; g·coef, then AdamW
//                 (bias-corrected moments, decoupled weight decay where decay[i] = 1)

struct Params {
  n: u32, chunk: u32, np: u32, _p0: u32,
  lr: f32, beta1: f32, beta2: f32, eps: f32,
  wd: f32, c1: f32, c2: f32, max_norm: f32,
}

@group(0) @binding(0) var<storage, read> grads: array<f32>;
@group(0) @binding(1) var<storage, read_write> partials: array<f32>; // [3·np]: scale, ssq, bad
@group(0) @binding(7) var<uniform> p: Params;

fn finite(x: f32) -> bool {
  return (bitcast<u32>(x) & 0x7f800000u) != 0x7f800000u;
}

@compute @workgroup_size(64)
fn norm_partial(@builtin(global_invocation_id) gid: vec3u) {
  let w = gid.x;
  if (w >= p.np) {
    return;
  }
  var scale = 0.0;
  var ssq = 1.0;
  var bad = 0.0;
  let end = min(p.n, (w + 1u) * p.chunk);
  for (var i = w * p.chunk; i < end; i++) {
    let g = grads[i];
    if (!finite(g)) {
      bad = 1.0;
      continue;
    }
    let a = abs(g);
    if (a > 0.0) {
      if (a > scale) {
        let r = scale / a;
        ssq = 1.0 + ssq * r * r;
        scale = a;
      } else {
        let r = a / scale;
        ssq += r * r;
      }
    }
  }
  partials[3u * w] = scale;
  partials[3u * w + 1u] = ssq;
  partials[3u * w + 2u] = bad;
}

@group(0) @binding(0) var<storage, read> f_partials: array<f32>;
@group(0) @binding(1) var<storage, read> f_loss: array<f32>;
@group(0) @binding(2) var<storage, read_write> stats: array<f32>;

@compute @workgroup_size(1)
fn norm_final() {
  var scale = 0.0;
  var ssq = 1.0;
  var bad = false;
  for (var w = 0u; w < p.np; w++) {
    let s = f_partials[3u * w];
    let q = f_partials[3u * w + 1u];
    if (f_partials[3u * w + 2u] != 0.0) {
      bad = true;
    }
    if (s > 0.0) {
      if (s > scale) {
        let r = scale / s;
        ssq = q + ssq * r * r;
        scale = s;
      } else {
        let r = s / scale;
        ssq += q * r * r;
      }
    }
  }
  let norm = scale * sqrt(ssq);
  let loss = f_loss[0];
  let ok = !bad && finite(loss) && finite(norm);
  var coef = 1.0;
  if (p.max_norm > 0.0) {
    coef = min(1.0, p.max_norm / (norm + 1e-6));
  }
  stats[0] = norm;
  stats[1] = select(0.0, 1.0, ok);
  stats[2] = coef;
  stats[3] = loss;
}

@group(0) @binding(0) var<storage, read> u_grads: array<f32>;
@group(0) @binding(1) var<storage, read> u_decay: array<f32>;
@group(0) @binding(2) var<storage, read> u_stats: array<f32>;
@group(0) @binding(3) var<storage, read_write> u_params: array<f32>;
@group(0) @binding(4) var<storage, read_write> u_m: array<f32>;
@group(0) @binding(5) var<storage, read_write> u_v: array<f32>;

@compute @workgroup_size(64)
fn update(@builtin(global_invocation_id) gid: vec3u, @builtin(num_workgroups) nwg: vec3u) {
  let i = gid.x + gid.y * nwg.x * 64u;
  if (i >= p.n || u_stats[1] == 0.0) {
    return;
  }
  let g = u_grads[i] * u_stats[2];
  let m = p.beta1 * u_m[i] + (1.0 - p.beta1) * g;
  let v = p.beta2 * u_v[i] + (1.0 - p.beta2) * g * g;
  u_m[i] = m;
  u_v[i] = v;
  let step = (m / p.c1) / (sqrt(v / p.c2) + p.eps);
  let w = u_params[i] * (1.0 - p.lr * p.wd * u_decay[i]);
  u_params[i] = w - p.lr * step;
}
