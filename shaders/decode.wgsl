// The device's side of a decode step, for B rows at their own positions: the draw from the
// logits the one model's head wrote (gpu/engine/deviceTransformer.ts), and the drawn token fed
// back into the model's next step, so tokens stay on the GPU and come back once every K steps
// (the host replays the step K times in one submission). A finished row returns at once.
// Row state (u32 × 8 per row): pos, done, token, count, rng, finished, _, _
//   pos    position of `token`, the token this step feeds in (its k, v are written there)
//   rng    mulberry32's state (src/tasks/random.ts), the host's rowPrng(seed, row) stream
// Entry points:
//   pick  one workgroup per row: temperature, top-k (candidates in descending logit order, ties
//         by index, as rollout/pick.ts), a seeded draw, the token's log-prob; writes the token
//         and updates the row.
//   feed  a row's token and position from its state into the model's decode inputs.

const S: u32 = 8u;
// Invocations per row: an override, so CPU drivers (where every barrier switches between all
// invocations of a workgroup) can run 16 while real GPUs run 64.
override WG: u32 = 64u;

var<workgroup> s_done: u32;

// ---- sampling -------------------------------------------------------------------------------

struct SampleParams {
  B: u32, D: u32, V: u32, C: u32,
  eps: f32, inv_temp: f32, greedy: u32, top_k: u32,
  stop: u32, max_new: u32, lnf_g: u32, lnf_b: u32,
  wte: u32, stop2: u32, stride: u32, _p2: u32, // stop2: a second end token (stop again when none)
}
// stride: the logits' row stride (a padded vocabulary); C: the last position a row may take. D,
// eps, lnf_*, wte: unused (the layout the host writes, sixteen words).

@group(0) @binding(0) var<storage, read> s_params: array<vec4f>;
@group(0) @binding(1) var<storage, read> s_x: array<vec4f>;
@group(0) @binding(2) var<storage, read_write> s_state: array<u32>;
@group(0) @binding(3) var<storage, read_write> s_logits: array<f32>;
@group(0) @binding(4) var<storage, read_write> s_out: array<u32>; // tokens [B, max_new] | logp bits
@group(0) @binding(7) var<uniform> sp: SampleParams;

const MAX_K: u32 = 64u;
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

// A row's logits computed by the model's head (rows `stride` apart). Binds the state, the
// logits and the output (bindings 0, 1 unused).
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

// ---- a decode fed by the row state (the one model's layers) ----------------------------------

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
