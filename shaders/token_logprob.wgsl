// Fused log-softmax + pick (GRPO log-probs, sampling): for each row r of logits [R, V],
//   logp[r]    = logits[r, t_r] − logsumexp(logits[r, :])
//   entropy[r] = −Σ_j p_j·log p_j = log s − (Σ_j e_j·z_j) / s,  z_j = x_j − max, e_j = exp(z_j), s = Σ e_j
// Subtracting the row max keeps exp() in range for any logit magnitude.
// Targets must be < V (the TypeScript wrapper checks).
// Versions (llm.c dev/cuda style; each is checked against the CPU reference and timed):
//   v1_thread_per_row      one invocation per row, serial passes (max, then sums)
//   v2_workgroup_per_row   one workgroup per row, shared-memory tree reductions
//   v3_online_per_row      one invocation per row, one pass (online softmax rescaling)

struct Params {
  rows: u32,
  vocab: u32,
}

@group(0) @binding(0) var<storage, read> logits: array<f32>;
@group(0) @binding(1) var<storage, read> targets: array<u32>;
@group(0) @binding(2) var<storage, read_write> logp: array<f32>;
@group(0) @binding(3) var<storage, read_write> entropy: array<f32>;
@group(0) @binding(4) var<uniform> params: Params;

const LOWEST: f32 = -3.4028234663852886e38; // the most negative finite f32
const WG: u32 = 64u;

fn write_row(r: u32, m: f32, s: f32, t: f32) {
  let log_s = log(s);
  logp[r] = logits[r * params.vocab + targets[r]] - m - log_s;
  entropy[r] = log_s - t / s;
}

// v1: the simplest mapping. Fine when R is large and V small (our vocabularies are ~100),
// but each invocation reads its row twice.
@compute @workgroup_size(WG)
fn v1_thread_per_row(@builtin(global_invocation_id) gid: vec3u) {
  let r = gid.x;
  if (r >= params.rows) {
    return;
  }
  let base = r * params.vocab;
  var m = LOWEST;
  for (var j = 0u; j < params.vocab; j++) {
    m = max(m, logits[base + j]);
  }
  var s = 0.0;
  var t = 0.0;
  for (var j = 0u; j < params.vocab; j++) {
    let z = logits[base + j] - m;
    let e = exp(z);
    s += e;
    t += e * z;
  }
  write_row(r, m, s, t);
}

// v2: a workgroup per row, so a long row is read in parallel and reduced in shared memory
// (what a real GPU wants for large V). CPU Vulkan drivers (SwiftShader, lavapipe) punish
// workgroupBarrier (~10x), and with V ~ 100 most lanes idle: expect it to lose there.
// Rows map onto a 2D grid because one dimension holds at most 65535 workgroups.
var<workgroup> red_max: array<f32, WG>;
var<workgroup> red_sum: array<f32, WG>;
var<workgroup> red_zsum: array<f32, WG>;

@compute @workgroup_size(WG)
fn v2_workgroup_per_row(
  @builtin(workgroup_id) wid: vec3u,
  @builtin(num_workgroups) nwg: vec3u,
  @builtin(local_invocation_index) lid: u32,
) {
  let r = wid.x + wid.y * nwg.x;
  if (r >= params.rows) {
    return; // uniform across the workgroup, so the barriers below stay legal
  }
  let base = r * params.vocab;
  var m_local = LOWEST;
  for (var j = lid; j < params.vocab; j += WG) {
    m_local = max(m_local, logits[base + j]);
  }
  red_max[lid] = m_local;
  workgroupBarrier();
  for (var stride = WG / 2u; stride > 0u; stride >>= 1u) {
    if (lid < stride) {
      red_max[lid] = max(red_max[lid], red_max[lid + stride]);
    }
    workgroupBarrier();
  }
  let m = red_max[0];
  var s_local = 0.0;
  var t_local = 0.0;
  for (var j = lid; j < params.vocab; j += WG) {
    let z = logits[base + j] - m;
    let e = exp(z);
    s_local += e;
    t_local += e * z;
  }
  red_sum[lid] = s_local;
  red_zsum[lid] = t_local;
  workgroupBarrier();
  for (var stride = WG / 2u; stride > 0u; stride >>= 1u) {
    if (lid < stride) {
      red_sum[lid] += red_sum[lid + stride];
      red_zsum[lid] += red_zsum[lid + stride];
    }
    workgroupBarrier();
  }
  if (lid == 0u) {
    write_row(r, m, red_sum[0], red_zsum[0]);
  }
}

// v3: v1 with a single read of the row: keep (max, Σe, Σe·z) and rescale when the max grows
// (e' = e·c, z' = z + (m − m'), c = exp(m − m')). One exp per element, as in v1.
@compute @workgroup_size(WG)
fn v3_online_per_row(@builtin(global_invocation_id) gid: vec3u) {
  let r = gid.x;
  if (r >= params.rows) {
    return;
  }
  let base = r * params.vocab;
  var m = logits[base];
  var s = 1.0;
  var t = 0.0;
  for (var j = 1u; j < params.vocab; j++) {
    let x = logits[base + j];
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
  write_row(r, m, s, t);
}
