// Fused per-token GRPO loss, forward (src/rl/grpoLossReference.ts is the reference):
//   ρ = exp(logp − oldLogp),  Δ = refLogp − logp
//   ℓ = (−min(ρ·Â, clip(ρ, 1 − ε_low, 1 + ε_high)·Â) + β·(exp(Δ) − Δ − 1)) · mask
// Masked tokens give exactly 0, even if their log-probs are garbage (padding).
// Versions:
//   v1_token_per_thread   one invocation per token
//   v2_four_per_thread    four tokens per invocation, strided so neighbouring invocations
//                         still read neighbouring tokens (fewer invocations to schedule)

struct Params {
  n: u32,
  eps_low: f32,
  eps_high: f32,
  beta: f32,
  _p3: u32,
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
