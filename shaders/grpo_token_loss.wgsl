// Fused per-token GRPO loss, forward (src/rl/grpoLossReference.ts is the reference):
//   ρ = exp(logp − oldLogp),  Δ = refLogp − logp
//   ℓ = (−min(ρ·Â, clip(ρ, 1 − ε_low, 1 + ε_high)·Â) + β·(exp(Δ) − Δ − 1)) · mask
// Masked tokens give exactly 0, even if their log-probs are garbage (padding).
// Backward (gradient of Σ_i ℓ_i·w_i with respect to logp_i, w_i = mask_i / the aggregation's
// normalizer, so Σ is the aggregated loss):
//   dℓ/dlogp = −Â·ρ where ρ·Â ≤ clip(ρ)·Â (the unclipped branch; ties go to it, as tf.minimum's
//   gradient does), else 0; plus β·(1 − exp(Δ)).
//   backward   one invocation per token: loss_w[i] = ℓ_i·w_i, dlogp[i]
//   sum        one workgroup: out[0] = Σ_i loss_w[i] (the aggregated loss, kept on the device)
// Versions:
//   v1_token_per_thread   one invocation per token
//   v2_four_per_thread    four tokens per invocation, strided so neighbouring invocations
//                         still read neighbouring tokens (fewer invocations to schedule)

struct Params {
  n: u32,
  eps_low: f32,
  eps_high: f32,
  beta: f32,
  grad_off: u32, // backward: where dlogp starts in b_out (256-byte aligned, so it binds alone)
  _p0: u32,
  _p1: u32,
  _p2: u32,
}

@group(0) @binding(0) var<storage, read> logp: array<f32>;
@group(0) @binding(1) var<storage, read> old_logp: array<f32>;
@group(0) @binding(2) var<storage, read> ref_logp: array<f32>;
@group(0) @binding(3) var<storage, read> advantage: array<f32>;
@group(0) @binding(4) var<storage, read> mask: array<f32>;
@group(0) @binding(5) var<storage, read_write> loss: array<f32>;
@group(0) @binding(6) var<uniform> params: Params;

const WG: u32 = 64u;
const PER_THREAD: u32 = 4u;

// k3 = exp(Δ) − Δ − 1 cancels catastrophically in f32 for small Δ (the common case: the
// policy stays near the reference), so use its Taylor series there.
fn k3(d: f32) -> f32 {
  if (abs(d) < 0.1) {
    let d2 = d * d;
    return d2 * (0.5 + d * (1.0 / 6.0 + d * (1.0 / 24.0 + d * (1.0 / 120.0 + d / 720.0))));
  }
  return exp(d) - d - 1.0;
}

fn token_loss(i: u32) -> f32 {
  let w = mask[i];
  if (w == 0.0) {
    return 0.0;
  }
  let lp = logp[i];
  let a = advantage[i];
  let ratio = exp(lp - old_logp[i]);
  let clipped = clamp(ratio, 1.0 - params.eps_low, 1.0 + params.eps_high);
  var l = -min(ratio * a, clipped * a);
  if (params.beta != 0.0) {
    l += params.beta * k3(ref_logp[i] - lp);
  }
  return l * w;
}

@compute @workgroup_size(WG)
fn v1_token_per_thread(@builtin(global_invocation_id) gid: vec3u) {
  if (gid.x < params.n) {
    loss[gid.x] = token_loss(gid.x);
  }
}

@compute @workgroup_size(WG)
fn v2_four_per_thread(
  @builtin(global_invocation_id) gid: vec3u,
  @builtin(num_workgroups) nwg: vec3u,
) {
  let stride = nwg.x * WG;
  for (var k = 0u; k < PER_THREAD; k++) {
    let i = gid.x + k * stride;
    if (i < params.n) {
      loss[i] = token_loss(i);
    }
  }
}

@group(0) @binding(0) var<storage, read> b_logp: array<f32>;
@group(0) @binding(1) var<storage, read> b_old: array<f32>;
@group(0) @binding(2) var<storage, read> b_ref: array<f32>;
@group(0) @binding(3) var<storage, read> b_adv: array<f32>;
@group(0) @binding(4) var<storage, read> b_weight: array<f32>;
@group(0) @binding(5) var<storage, read_write> b_out: array<f32>; // loss·w [n] at 0, dlogp [n] at grad_off

@compute @workgroup_size(WG)
fn backward(@builtin(global_invocation_id) gid: vec3u, @builtin(num_workgroups) nwg: vec3u) {
  let i = gid.x + gid.y * nwg.x * WG;
  if (i >= params.n) {
    return;
  }
  let w = b_weight[i];
  if (w == 0.0) {
    b_out[i] = 0.0;
    b_out[params.grad_off + i] = 0.0;
    return;
  }
  let lp = b_logp[i];
  let a = b_adv[i];
  let ratio = exp(lp - b_old[i]);
  let clipped = clamp(ratio, 1.0 - params.eps_low, 1.0 + params.eps_high);
  var l = -min(ratio * a, clipped * a);
  var g = 0.0;
  if (ratio * a <= clipped * a) {
    g = -a * ratio;
  }
  if (params.beta != 0.0) {
    let d = b_ref[i] - lp;
    l += params.beta * k3(d);
    g += params.beta * (1.0 - exp(d));
  }
  b_out[i] = l * w;
  b_out[params.grad_off + i] = g * w;
}

@group(0) @binding(0) var<storage, read> s_in: array<f32>;
@group(0) @binding(1) var<storage, read_write> s_out: array<f32>;
var<workgroup> partial: array<f32, WG>;

@compute @workgroup_size(WG)
fn sum(@builtin(local_invocation_index) lid: u32) {
  var s = 0.0;
  for (var i = lid; i < params.n; i += WG) {
    s += s_in[i];
  }
  partial[lid] = s;
  workgroupBarrier();
  for (var stride = WG / 2u; stride > 0u; stride >>= 1u) {
    if (lid < stride) {
      partial[lid] += partial[lid + stride];
    }
    workgroupBarrier();
  }
  if (lid == 0u) {
    s_out[0] = partial[0];
  }
}
