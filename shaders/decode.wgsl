// One decode step of the whole model on the device, for B rows at their own positions, and the
// sampler: tokens stay on the GPU and come back once every K steps (the host replays the step
// K times in one submission). A row that has finished returns at once: it costs no work.
// Row state (u32 × 8 per row): pos, done, token, count, rng, finished, _, _
//   pos    position of `token`, the token this step feeds in (its k, v are written there)
//   rng    mulberry32's state (src/tasks/random.ts), the host's rowPrng(seed, row) stream
// Entry points:
//   layer       RB rows per workgroup, the whole pre-LN block fused (what fits at d ≤ 256): LN1,
//               q|k|v (k, v into the cache at pos), scores over the cache, softmax per head,
//               weighted sum, c_proj + residual, LN2, c_fc + GELU, c_proj + residual.
//               flags & 1: layer 0 embeds the token first (wte[token] + wpe[pos]).
//               Threads split columns; 12 barriers per layer (CPU drivers pay for each).
//   sample      one workgroup per row: LN_f, tied logits, then (invocation 0) temperature,
//               top-k (candidates in descending logit order, ties by index, as rollout/pick.ts),
//               a seeded draw, the token's log-prob; writes the token and updates the row.
//   pick        `sample`'s choice over logits other kernels wrote (the Llama family's head).
//   feed        a row's token and position from its state into the Llama family's decode inputs.
//   fill_cache  prefill: copies k, v of a full-sequence forward (qkv [U·T, 3D], one row per
//               distinct prompt) into each row's cache.

struct Params {
  B: u32, D: u32, H: u32, hd: u32,
  C: u32, F: u32, layer: u32, flags: u32,
  eps: f32, scale: f32, wte: u32, wpe: u32,
  ln1_g: u32, ln1_b: u32, attn_w: u32, attn_b: u32,
  proj_w: u32, proj_b: u32, ln2_g: u32, ln2_b: u32,
  fc_w: u32, fc_b: u32, fc2_w: u32, fc2_b: u32,
}

const S: u32 = 8u;
// Invocations per row: an override, so CPU drivers (where every barrier switches between all
// invocations of a workgroup) can run 16 while real GPUs run 64. At least the head count.
override WG: u32 = 64u;
const MAX_D: u32 = 256u;

// The layer reads and writes four floats at a time (every width here is a multiple of 4 and
// every parameter starts 256-byte aligned): lavapipe loads storage and workgroup memory lane
// by lane, a loop with a branch per lane and access, so a vec4 costs about what a float does.
@group(0) @binding(0) var<storage, read> params: array<vec4f>;
@group(0) @binding(1) var<storage, read> state: array<u32>;
@group(0) @binding(2) var<storage, read_write> x: array<vec4f>;
@group(0) @binding(3) var<storage, read_write> kcache: array<vec4f>;
@group(0) @binding(4) var<storage, read_write> vcache: array<vec4f>;
@group(0) @binding(5) var<storage, read_write> scores: array<f32>;
@group(0) @binding(7) var<uniform> p: Params;

var<workgroup> s_done: u32;

const GELU_C: f32 = 0.7978845608028654;

fn gelu(v: f32) -> f32 {
  let u = clamp(GELU_C * (v + 0.044715 * v * v * v), -15.0, 15.0);
  return 0.5 * v * (1.0 + tanh(u));
}

fn gelu4(v: vec4f) -> vec4f {
  return vec4f(gelu(v.x), gelu(v.y), gelu(v.z), gelu(v.w));
}

/** acc + Σ_kk xv[kk]·w_kk: four k of a matrix–vector product, four columns at a time. */
fn fma4(acc: vec4f, xv: vec4f, w0: vec4f, w1: vec4f, w2: vec4f, w3: vec4f) -> vec4f {
  return acc + xv.x * w0 + xv.y * w1 + xv.z * w2 + xv.w * w3;
}

// ---- one decode step of a layer, RB rows per workgroup -----------------------------------------
// Each weight read serves the RB rows' sums: on CPU drivers, which run invocations as SIMD lanes
// and gather every weight a lane reads, that is most of a decode step's cost (real GPUs run
// RB = 1). The workgroup arrays are sized by overrides (MD = the width, MF = the MLP's), so
// RB × (5·MD + MF) floats fit the device's workgroup storage. A workgroup returns only when
// all its rows have finished. Indices ending in 4 count vec4s.

override RB: u32 = 4u;
override MD: u32 = 64u;
override MF: u32 = 256u;
const RB_MAX: u32 = 8u;

var<workgroup> rx: array<vec4f, RB * MD / 4u>;
// What the matrix–vector products read, one array so that one function serves them all:
// rn (LN(x)) at RN, rq (q|k|v, then the attention output) at RQ, rh (the MLP's hidden) at RH.
var<workgroup> rin: array<vec4f, RB * (4u * MD + MF) / 4u>;
const RN: u32 = 0u;
override RQ: u32 = RB * MD / 4u;
override RH: u32 = RB * 4u * MD / 4u;
var<workgroup> r_live: array<u32, RB>;
var<workgroup> r_stat: array<f32, 2u * RB>;
var<workgroup> r_any: u32;

// LayerNorm of the RB rows of rx into rn: invocation r < RB finds row r's statistics first.
fn norm_rows(lid: u32, g4: u32, bo4: u32) {
  let D4 = p.D / 4u;
  if (lid < RB) {
    var sum = vec4f();
    for (var j = 0u; j < D4; j++) {
      sum += rx[lid * D4 + j];
    }
    let mean = (sum.x + sum.y + sum.z + sum.w) / f32(p.D);
    var sq = vec4f();
    for (var j = 0u; j < D4; j++) {
      let d = rx[lid * D4 + j] - mean;
      sq += d * d;
    }
    r_stat[2u * lid] = mean;
    r_stat[2u * lid + 1u] = inverseSqrt((sq.x + sq.y + sq.z + sq.w) / f32(p.D) + p.eps);
  }
  workgroupBarrier();
  for (var e = lid; e < RB * D4; e += WG) {
    let r = e / D4;
    let j = e % D4;
    rin[RN + e] = (rx[e] - r_stat[2u * r]) * r_stat[2u * r + 1u] * params[g4 + j] + params[bo4 + j];
  }
}

/**
 * One matrix–vector product for the RB rows, four columns at a time: for columns c..c+3 of W
 * (row stride ws vec4s, at w), Σ_k X[r, k]·W[k, ·] + bias, X the rows of rin at x (row stride
 * xs, K4 vec4s of k). Each weight read serves the RB rows.
 */
fn matvec4(x: u32, xs: u32, K4: u32, w: u32, ws: u32, b: u32, c: u32) -> array<vec4f, RB_MAX> {
  var acc: array<vec4f, RB_MAX>;
  let bias = params[b + c];
  for (var r = 0u; r < RB; r++) {
    acc[r] = bias;
  }
  for (var k = 0u; k < K4; k++) {
    let at = w + 4u * k * ws + c;
    let w0 = params[at];
    let w1 = params[at + ws];
    let w2 = params[at + 2u * ws];
    let w3 = params[at + 3u * ws];
    for (var r = 0u; r < RB; r++) {
      acc[r] = fma4(acc[r], rin[x + r * xs + k], w0, w1, w2, w3);
    }
  }
  return acc;
}

@compute @workgroup_size(WG)
fn layer(@builtin(workgroup_id) wid: vec3u, @builtin(local_invocation_index) lid: u32) {
  let b0 = wid.x * RB;
  if (lid == 0u) {
    var any = 0u;
    for (var r = 0u; r < RB; r++) {
      let b = b0 + r;
      var live = 0u;
      if (b < p.B) {
        if (state[b * S + 1u] == 0u) {
          live = 1u;
        }
      }
      r_live[r] = live;
      any |= live;
    }
    r_any = any;
  }
  if (workgroupUniformLoad(&r_any) == 0u) {
    return;
  }
  let D4 = p.D / 4u;
  let Q4 = 3u * D4; // a row of q|k|v
  let F4 = p.F / 4u;
  let hd4 = p.hd / 4u;
  for (var e = lid; e < RB * D4; e += WG) {
    let r = e / D4;
    let j = e % D4;
    if (r_live[r] == 0u) {
      continue;
    }
    let b = b0 + r;
    if ((p.flags & 1u) != 0u) {
      rx[e] = params[p.wte / 4u + state[b * S + 2u] * D4 + j] + params[p.wpe / 4u + state[b * S] * D4 + j];
    } else {
      rx[e] = x[b * D4 + j];
    }
  }
  workgroupBarrier();
  norm_rows(lid, p.ln1_g / 4u, p.ln1_b / 4u);
  workgroupBarrier();
  // q|k|v = LN1(x)·W_attn + b: invocations split the columns, four at a time
  for (var c = lid; c < Q4; c += WG) {
    let acc = matvec4(RN, D4, D4, p.attn_w / 4u, Q4, p.attn_b / 4u, c);
    for (var r = 0u; r < RB; r++) {
      rin[RQ + r * Q4 + c] = acc[r];
      if (r_live[r] == 0u || c < D4) {
        continue;
      }
      let b = b0 + r;
      let at = ((p.layer * p.B + b) * p.C + state[b * S]) * D4;
      if (c >= 2u * D4) {
        vcache[at + c - 2u * D4] = acc[r];
      } else {
        kcache[at + c - D4] = acc[r];
      }
    }
  }
  storageBarrier();
  workgroupBarrier();
  for (var r = 0u; r < RB; r++) {
    if (r_live[r] == 0u) {
      continue;
    }
    let b = b0 + r;
    let n = state[b * S] + 1u;
    let cache = (p.layer * p.B + b) * p.C * D4;
    let srow = b * p.H * p.C;
    for (var e = lid; e < p.H * n; e += WG) {
      let h = e / n;
      let s = e % n;
      var dot4 = vec4f();
      for (var i = 0u; i < hd4; i++) {
        dot4 += rin[RQ + r * Q4 + h * hd4 + i] * kcache[cache + s * D4 + h * hd4 + i];
      }
      scores[srow + h * p.C + s] = (dot4.x + dot4.y + dot4.z + dot4.w) * p.scale;
    }
  }
  storageBarrier();
  workgroupBarrier();
  for (var e = lid; e < RB * p.H; e += WG) {
    let r = e / p.H;
    let h = e % p.H;
    if (r_live[r] == 0u) {
      continue;
    }
    let b = b0 + r;
    let n = state[b * S] + 1u;
    let base = b * p.H * p.C + h * p.C;
    var m = -3.4e38;
    for (var s = 0u; s < n; s++) {
      m = max(m, scores[base + s]);
    }
    var l = 0.0;
    for (var s = 0u; s < n; s++) {
      let w = exp(scores[base + s] - m);
      scores[base + s] = w;
      l += w;
    }
    let inv = 1.0 / l;
    for (var s = 0u; s < n; s++) {
      scores[base + s] *= inv;
    }
  }
  storageBarrier();
  workgroupBarrier();
  for (var e = lid; e < RB * D4; e += WG) {
    let r = e / D4;
    let j = e % D4;
    if (r_live[r] == 0u) {
      continue;
    }
    let b = b0 + r;
    let n = state[b * S] + 1u;
    let cache = (p.layer * p.B + b) * p.C * D4;
    let base = b * p.H * p.C + (j / hd4) * p.C;
    var acc = vec4f();
    for (var s = 0u; s < n; s++) {
      acc += scores[base + s] * vcache[cache + s * D4 + j];
    }
    rin[RQ + r * Q4 + j] = acc; // q is no longer needed: the attention output takes its place
  }
  workgroupBarrier();
  for (var j = lid; j < D4; j += WG) {
    let acc = matvec4(RQ, Q4, D4, p.proj_w / 4u, D4, p.proj_b / 4u, j);
    for (var r = 0u; r < RB; r++) {
      rx[r * D4 + j] += acc[r];
    }
  }
  workgroupBarrier();
  norm_rows(lid, p.ln2_g / 4u, p.ln2_b / 4u);
  workgroupBarrier();
  for (var c = lid; c < F4; c += WG) {
    let acc = matvec4(RN, D4, D4, p.fc_w / 4u, F4, p.fc_b / 4u, c);
    // Rows past B skipped: a loop CPU drivers' compilers cannot unroll into RB copies of
    // GELU (RB = 8 there; it cut the layer's compile by a sixth on SwiftShader).
    for (var r = 0u; r < RB && b0 + r < p.B; r++) {
      rin[RH + r * F4 + c] = gelu4(acc[r]);
    }
  }
  workgroupBarrier();
  for (var j = lid; j < D4; j += WG) {
    let acc = matvec4(RH, F4, F4, p.fc2_w / 4u, D4, p.fc2_b / 4u, j);
    for (var r = 0u; r < RB; r++) {
      if (r_live[r] != 0u) {
        x[(b0 + r) * D4 + j] = rx[r * D4 + j] + acc[r];
      }
    }
  }
}

// ---- sampling -------------------------------------------------------------------------------

struct SampleParams {
  B: u32, D: u32, V: u32, C: u32,
  eps: f32, inv_temp: f32, greedy: u32, top_k: u32,
  stop: u32, max_new: u32, lnf_g: u32, lnf_b: u32,
  wte: u32, stop2: u32, stride: u32, _p2: u32, // stop2: a second end token (stop again when none)
}
// stride: `pick`'s logits row stride (a padded vocabulary); `sample` writes rows of V.

@group(0) @binding(0) var<storage, read> s_params: array<vec4f>;
@group(0) @binding(1) var<storage, read> s_x: array<vec4f>;
@group(0) @binding(2) var<storage, read_write> s_state: array<u32>;
@group(0) @binding(3) var<storage, read_write> s_logits: array<f32>;
@group(0) @binding(4) var<storage, read_write> s_out: array<u32>; // tokens [B, max_new] | logp bits
@group(0) @binding(7) var<uniform> sp: SampleParams;

const MAX_K: u32 = 64u;
var<workgroup> sx: array<vec4f, MAX_D / 4u>;
var<workgroup> sa: array<vec4f, MAX_D / 4u>;
var<workgroup> red_a: array<f32, 64>;
var<workgroup> red_b: array<f32, 64>;
var<workgroup> red_i: array<u32, 64>;

fn mulberry(b: u32) -> f32 {
  let st = s_state[b * S + 4u] + 0x6d2b79f5u;
  s_state[b * S + 4u] = st;
  var t = st;
  t = (t ^ (t >> 15u)) * (t | 1u);
  t ^= t + (t ^ (t >> 7u)) * (t | 61u);
  return f32((t ^ (t >> 14u)) >> 8u) * (1.0 / 16777216.0);
}

// (value, index) pairs ordered by value descending, then index ascending (rollout/pick.ts).
fn before(va: f32, ia: u32, vb: f32, ib: u32) -> bool {
  return va > vb || (va == vb && ia < ib);
}

@compute @workgroup_size(WG)
fn sample(@builtin(workgroup_id) wid: vec3u, @builtin(local_invocation_index) lid: u32) {
  let b = wid.x;
  if (lid == 0u) {
    s_done = s_state[b * S + 1u];
  }
  if (workgroupUniformLoad(&s_done) != 0u) {
    return;
  }
  let D4 = sp.D / 4u;
  for (var j = lid; j < D4; j += WG) {
    sx[j] = s_x[b * D4 + j];
  }
  workgroupBarrier();
  var sum = vec4f();
  for (var j = 0u; j < D4; j++) {
    sum += sx[j];
  }
  let mean = (sum.x + sum.y + sum.z + sum.w) / f32(sp.D);
  var sq = vec4f();
  for (var j = 0u; j < D4; j++) {
    let d = sx[j] - mean;
    sq += d * d;
  }
  let rstd = inverseSqrt((sq.x + sq.y + sq.z + sq.w) / f32(sp.D) + sp.eps);
  for (var j = lid; j < D4; j += WG) {
    sa[j] = (sx[j] - mean) * rstd * s_params[sp.lnf_g / 4u + j] + s_params[sp.lnf_b / 4u + j];
  }
  workgroupBarrier();
  let lrow = b * sp.V;
  let wte = sp.wte / 4u;
  for (var v = lid; v < sp.V; v += WG) {
    var s4 = vec4f();
    for (var k = 0u; k < D4; k++) {
      s4 += sa[k] * s_params[wte + v * D4 + k];
    }
    s_logits[lrow + v] = s4.x + s4.y + s4.z + s4.w;
  }
  storageBarrier();
  workgroupBarrier();
  choose(b, lid, lrow);
}

// A row's logits computed by other kernels (a Llama-family head, rows `stride` apart): the same
// choice as `sample`'s. Binds the state, the logits and the output (bindings 0, 1 unused).
@compute @workgroup_size(WG)
fn pick(@builtin(workgroup_id) wid: vec3u, @builtin(local_invocation_index) lid: u32) {
  let b = wid.x;
  if (lid == 0u) {
    s_done = s_state[b * S + 1u];
  }
  if (workgroupUniformLoad(&s_done) != 0u) {
    return;
  }
  choose(b, lid, b * sp.stride);
}

// Temperature, top-k, the seeded draw and the row's update, over the logits at `lrow`; called in
// uniform control flow by every invocation of the row's workgroup.
fn choose(b: u32, lid: u32, lrow: u32) {
  // Max, argmax (first index on ties, as pick.ts) and Σ exp over contiguous chunks, one per
  // invocation, so invocation 0 can walk the CDF in index order chunk by chunk.
  let V = sp.V;
  let it = sp.inv_temp;
  let chunk = (V + WG - 1u) / WG;
  let lo = min(V, lid * chunk);
  let hi = min(V, lo + chunk);
  var cm = -3.4e38;
  var cb = 0xffffffffu;
  var cbv = -3.4e38;
  for (var v = lo; v < hi; v++) {
    let l = s_logits[lrow + v];
    cm = max(cm, l * it);
    if (cb == 0xffffffffu || l > cbv) {
      cbv = l;
      cb = v;
    }
  }
  red_a[lid] = cm;
  red_b[lid] = cbv;
  red_i[lid] = cb;
  workgroupBarrier();
  var m = -3.4e38;
  var best = 0u;
  var bestv = -3.4e38;
  var found = false;
  for (var t = 0u; t < WG; t++) {
    m = max(m, red_a[t]);
    if (red_i[t] != 0xffffffffu && (!found || red_b[t] > bestv)) {
      bestv = red_b[t];
      best = red_i[t];
      found = true;
    }
  }
  var cs = 0.0;
  for (var v = lo; v < hi; v++) {
    cs += exp(s_logits[lrow + v] * it - m);
  }
  workgroupBarrier();
  red_a[lid] = cs;
  workgroupBarrier();
  if (lid != 0u) {
    return;
  }
  var total = 0.0;
  for (var t = 0u; t < WG; t++) {
    total += red_a[t];
  }
  let log_z = m + log(total);
  var id = best;
  if (sp.greedy == 0u) {
    let u = mulberry(b);
    let k = select(V, min(sp.top_k, MAX_K), sp.top_k > 0u && sp.top_k < V);
    if (k == V) {
      var r = u * total;
      id = V - 1u;
      for (var t = 0u; t < WG; t++) {
        if (r - red_a[t] >= 0.0) {
          r -= red_a[t];
          continue;
        }
        let end = min(V, (t + 1u) * chunk);
        id = end - 1u; // rounding: the chunk's sum said the draw lands in it
        for (var v = t * chunk; v < end; v++) {
          r -= exp(s_logits[lrow + v] * it - m);
          if (r < 0.0) {
            id = v;
            break;
          }
        }
        break;
      }
    } else {
      // k selection passes: each finds the next candidate after the previous one in order.
      var cand: array<u32, MAX_K>;
      var pv = 3.4e38;
      var pi = 0xffffffffu;
      var sum = 0.0;
      for (var c = 0u; c < k; c++) {
        var bv = -3.4e38;
        var bi = 0xffffffffu;
        for (var v = 0u; v < V; v++) {
          let l = s_logits[lrow + v];
          let after_prev = c == 0u || before(pv, pi, l, v);
          if (after_prev && (bi == 0xffffffffu || before(l, v, bv, bi))) {
            bv = l;
            bi = v;
          }
        }
        cand[c] = bi;
        pv = bv;
        pi = bi;
        sum += exp(bv * it - m);
      }
      var r = u * sum;
      id = cand[k - 1u];
      for (var c = 0u; c < k; c++) {
        r -= exp(s_logits[lrow + cand[c]] * it - m);
        if (r < 0.0) {
          id = cand[c];
          break;
        }
      }
    }
  }
  let count = s_state[b * S + 3u];
  s_out[b * sp.max_new + count] = id;
  s_out[sp.B * sp.max_new + b * sp.max_new + count] = bitcast<u32>(s_logits[lrow + id] * it - log_z);
  let pos = s_state[b * S] + 1u;
  s_state[b * S] = pos;
  s_state[b * S + 2u] = id;
  s_state[b * S + 3u] = count + 1u;
  let finished = id == sp.stop || id == sp.stop2;
  if (finished) {
    s_state[b * S + 5u] = 1u;
  }
  if (finished || count + 1u >= sp.max_new || pos >= sp.C) {
    s_state[b * S + 1u] = 1u;
  }
}

// ---- a decode fed by the row state (the Llama family's layers) -------------------------------

struct FeedParams {
  B: u32, _f0: u32, _f1: u32, _f2: u32,
}

@group(0) @binding(0) var<storage, read> fd_state: array<u32>;
@group(0) @binding(1) var<storage, read_write> fd_ids: array<u32>;
@group(0) @binding(2) var<storage, read_write> fd_pos: array<u32>;
@group(0) @binding(3) var<storage, read_write> fd_lens: array<u32>;
@group(0) @binding(7) var<uniform> fdp: FeedParams;

// Each row's token at its position, as `pick` left them, into the layers' inputs: ids, the
// positions (RoPE, the cache's row) and the lengths attended (position + 1). A finished row
// keeps its last token and position: it decodes along, inside its cache, its output unread.
@compute @workgroup_size(64)
fn feed(@builtin(global_invocation_id) gid: vec3u) {
  let b = gid.x;
  if (b >= fdp.B) {
    return;
  }
  let pos = fd_state[b * S];
  fd_ids[b] = fd_state[b * S + 2u];
  fd_pos[b] = pos;
  fd_lens[b] = pos + 1u;
}

// ---- prefill --------------------------------------------------------------------------------

struct FillParams {
  B: u32, T: u32, D: u32, C: u32,
  layer: u32, _p0: u32, _p1: u32, _p2: u32,
}

@group(0) @binding(0) var<storage, read> f_qkv: array<f32>;
@group(0) @binding(1) var<storage, read_write> f_k: array<f32>;
@group(0) @binding(2) var<storage, read_write> f_v: array<f32>;
// Row b's prompt is forward row f_src[b]: rows that share a prompt were prefilled once.
@group(0) @binding(3) var<storage, read> f_src: array<u32>;
@group(0) @binding(7) var<uniform> fp: FillParams;

@compute @workgroup_size(64)
fn fill_cache(@builtin(global_invocation_id) gid: vec3u, @builtin(num_workgroups) nwg: vec3u) {
  let e = gid.x + gid.y * nwg.x * 64u;
  if (e >= fp.B * fp.T * fp.D) {
    return;
  }
  let j = e % fp.D;
  let r = e / fp.D;
  let t = r % fp.T;
  let b = r / fp.T;
  let dst = ((fp.layer * fp.B + b) * fp.C + t) * fp.D + j;
  let src = (f_src[b] * fp.T + t) * 3u * fp.D;
  f_k[dst] = f_qkv[src + fp.D + j];
  f_v[dst] = f_qkv[src + 2u * fp.D + j];
}
