// Fused causal self-attention (scores, mask, softmax, weighted sum) without a [T, T] matrix:
// one invocation per (row b, head h, query t) keeps an online softmax (running max m, sum l)
// and its output accumulator in registers (FlashAttention's recurrence, one query at a time).
// Layout: qkv [B·T, 3D] as c_attn writes it (q | k | v, each split into H heads of hd), the
// output y [B·T, D] already merged over heads (what c_proj reads), lse [B·H·T] = m + log l
// saved for the backward, which recomputes P from it.
// Entry points:
//   forward      one invocation per (b, h, block of QB queries)
//   backward_dq  one invocation per (b, h, block of QB queries t): Dt = dy_t·y_t,
//                dq_t = scale·Σ_s P_ts(dy_t·v_s − Dt)k_s
//   backward_dkdv one invocation per (b, h, block of QB keys s): dv_s = Σ_{t≥s} P_ts dy_t,
//                dk_s = scale·Σ_{t≥s} P_ts(dy_t·v_s − Dt) q_t   (Dt from backward_dq)
//   decode       one decode step over a KV cache: one invocation per (b, h), query qd[b] against
//                cached keys and values 0..len[b]−1 (cache [B, C, D]); output yd [B, D]
//   cache_store  copies the k and v parts of qkv rows [B·T, W] into the caches [B, C, KVH·HD]
//                at positions pos[b] + t (a prefill's or a decode step's keys and values)
// Grouped-query attention (the Llama family): KVH key/value heads, each serving H / KVH query
// heads (query head h reads kv head h / (H / KVH)); qkv rows are W = (H + 2·KVH)·HD wide (q
// heads | k heads | v heads). KVH = 0 in the uniforms means KVH = H (GPT-2's [q | k | v]).
// backward_dkdv then runs per (b, kv head, block of keys) and sums over its query heads.
// Shared prompts (SEG = 1 in the uniforms; the update's packed rows, packedBatch.ts): a row holds
// one prompt once and then several completions, each a segment that sees the prompt's first
// pre[b] positions and its own positions from lo[t] on: query t sees key s iff s ≤ t and
// (s < pre[b] or s ≥ lo[t]). seg = [lo per position (B·T) | pre per row (B)]; SEG = 0 reads
// none of it (lo = pre = 0: plain causal). The keys a query sees are visited in the same order
// as in its own unpacked row, so its output is the same to the bit. Segment starts never
// decrease along a row (the padding is a segment of its own). What no one in a block sees is
// not visited: in forward and dq, from the prompt's end the loop over keys jumps to the block's
// earliest segment start; in dkdv, the loop over a segment's queries ends where the next
// segment starts.
// No shared memory, no barriers. The head size HD is a pipeline constant (a multiple of 4,
// ≤ 4·MAX_V4: 64 here; ops.ts' attentionShader loads attention.wgsl?MAX_V4=32 for Qwen3's
// 128-wide heads): loops over it have constant bounds, so optimising compilers (LLVM in
// lavapipe and real GPUs' drivers) unroll them and keep q, the accumulators and dk/dv in
// registers, as vec4s. SwiftShader's Subzero JIT does not: it keeps the arrays in memory, so
// heads up to 16 run the _h16 versions at the end of this file (a head in a struct of vec4s).

struct Params {
  B: u32, T: u32, H: u32, hd: u32,
  scale: f32, C: u32, KVH: u32, q_rs: u32,
  SEG: u32, _p0: u32, _p1: u32, _p2: u32,
}

/** Key/value heads (0 in the uniforms: one per query head). */
fn kv_heads() -> u32 {
  return select(p.KVH, p.H, p.KVH == 0u);
}

/** The qkv row's width: H query heads, then KVH key and KVH value heads. */
fn row_width() -> u32 {
  return (p.H + 2u * kv_heads()) * HD;
}

/** The kv head that query head h reads. */
fn kv_of(h: u32) -> u32 {
  return h / (p.H / kv_heads());
}

override HD: u32 = 64u;
const MAX_V4: u32 = 16u; // HD ≤ 64 (ops.ts' attentionShader loads 32 for heads up to 128)

// Every tensor is read and written as vec4s (widths and heads are multiples of 4, bindings
// 256-byte aligned): lavapipe loads storage lane by lane, a vec4 for about the price of a float.
// ld4(i) and friends take a float index i (a multiple of 4).
fn ld4(i: u32) -> vec4f {
  return qkv[i >> 2u];
}

@group(0) @binding(0) var<storage, read> qkv: array<vec4f>;
@group(0) @binding(1) var<storage, read_write> y: array<vec4f>;
@group(0) @binding(2) var<storage, read_write> lse: array<f32>;
@group(0) @binding(3) var<storage, read> fseg: array<u32>;
@group(0) @binding(7) var<uniform> p: Params;

fn flat(gid: vec3u, nwg: vec3u) -> u32 {
  return gid.x + gid.y * nwg.x * 64u;
}

// Queries per invocation in the forward and dq passes (keys in dk/dv): each key and value
// loaded serves QB queries (loads are what CPU drivers pay for), at the price of ≤ QB − 1
// masked steps at the end of a block.
// An override (at most QB_MAX): CPU drivers spill dk/dv's 4·QB·HD floats at large heads.
override QB: u32 = 4u;
const QB_MAX: u32 = 4u;

/** The earliest segment start of a block's QB queries (keys from pre up to it: seen by none). */
fn min_lo(lo: ptr<function, array<u32, QB_MAX>>) -> u32 {
  var m = (*lo)[0];
  for (var j = 1u; j < QB; j++) {
    m = min(m, (*lo)[j]);
  }
  return m;
}

@compute @workgroup_size(64)
fn forward(@builtin(global_invocation_id) gid: vec3u, @builtin(num_workgroups) nwg: vec3u) {
  let TQ = (p.T + QB - 1u) / QB;
  let e = flat(gid, nwg);
  if (e >= p.B * p.H * TQ) {
    return;
  }
  let t0 = (e % TQ) * QB;
  let h = (e / TQ) % p.H;
  let b = e / (TQ * p.H);
  let D = p.H * HD;
  let W = row_width();
  let KD = kv_heads() * HD;
  let kh = kv_of(h);
  var q: array<array<vec4f, MAX_V4>, QB_MAX>;
  var acc: array<array<vec4f, MAX_V4>, QB_MAX>;
  var m: array<f32, QB_MAX>;
  var l: array<f32, QB_MAX>;
  var lo: array<u32, QB_MAX>;
  var pre = 0u;
  if (p.SEG != 0u) {
    pre = fseg[p.B * p.T + b];
  }
  for (var j = 0u; j < QB; j++) {
    let rowq = (b * p.T + min(t0 + j, p.T - 1u)) * W + h * HD;
    for (var i = 0u; i < HD / 4u; i++) {
      q[j][i] = ld4(rowq + 4u * i) * p.scale;
      acc[j][i] = vec4f();
    }
    m[j] = -3.4e38;
    l[j] = 0.0;
    lo[j] = 0u;
    if (p.SEG != 0u) {
      lo[j] = fseg[b * p.T + min(t0 + j, p.T - 1u)];
    }
  }
  let last = min(t0 + QB - 1u, p.T - 1u);
  let lo_min = min_lo(&lo);
  for (var s = 0u; s <= last; s++) {
    if (s == pre && lo_min > s) {
      s = lo_min; // past the prompt, keys before every query's own segment: seen by none
    }
    let rowk = (b * p.T + s) * W + D + kh * HD;
    var k: array<vec4f, MAX_V4>;
    var v: array<vec4f, MAX_V4>;
    for (var i = 0u; i < HD / 4u; i++) {
      k[i] = ld4(rowk + 4u * i);
      v[i] = ld4(rowk + KD + 4u * i);
    }
    for (var j = 0u; j < QB; j++) {
      if (s > t0 + j || (s >= pre && s < lo[j])) {
        continue; // causal: query t0 + j sees keys 0..t0 + j (of the prompt and its segment)
      }
      var score = 0.0;
      for (var i = 0u; i < HD / 4u; i++) {
        score += dot(q[j][i], k[i]);
      }
      let m_new = max(m[j], score);
      let c = exp(m[j] - m_new);
      let w = exp(score - m_new);
      l[j] = l[j] * c + w;
      for (var i = 0u; i < HD / 4u; i++) {
        acc[j][i] = acc[j][i] * c + w * v[i];
      }
      m[j] = m_new;
    }
  }
  for (var j = 0u; j < QB; j++) {
    let t = t0 + j;
    if (t >= p.T) {
      break;
    }
    let rowy = (b * p.T + t) * D + h * HD;
    for (var i = 0u; i < HD / 4u; i++) {
      y[(rowy >> 2u) + i] = acc[j][i] / l[j];
    }
    lse[(b * p.H + h) * p.T + t] = m[j] + log(l[j]);
  }
}

@group(0) @binding(0) var<storage, read> gqkv: array<vec4f>;
@group(0) @binding(1) var<storage, read> gy: array<vec4f>;
@group(0) @binding(2) var<storage, read> gdy: array<vec4f>;
@group(0) @binding(3) var<storage, read> glse: array<f32>;
@group(0) @binding(4) var<storage, read_write> dqkv: array<vec4f>;
@group(0) @binding(5) var<storage, read_write> dsum: array<f32>;
@group(0) @binding(6) var<storage, read> qseg: array<u32>;

fn g4(i: u32) -> vec4f {
  return gqkv[i >> 2u];
}

@compute @workgroup_size(64)
fn backward_dq(@builtin(global_invocation_id) gid: vec3u, @builtin(num_workgroups) nwg: vec3u) {
  let TQ = (p.T + QB - 1u) / QB;
  let e = flat(gid, nwg);
  if (e >= p.B * p.H * TQ) {
    return;
  }
  let t0 = (e % TQ) * QB;
  let h = (e / TQ) % p.H;
  let b = e / (TQ * p.H);
  let D = p.H * HD;
  let W = row_width();
  let KD = kv_heads() * HD;
  let kh = kv_of(h);
  var q: array<array<vec4f, MAX_V4>, QB_MAX>;
  var dy: array<array<vec4f, MAX_V4>, QB_MAX>;
  var dq: array<array<vec4f, MAX_V4>, QB_MAX>;
  var dt: array<f32, QB_MAX>;
  var L: array<f32, QB_MAX>;
  var lo: array<u32, QB_MAX>;
  var pre = 0u;
  if (p.SEG != 0u) {
    pre = qseg[p.B * p.T + b];
  }
  for (var j = 0u; j < QB; j++) {
    let t = min(t0 + j, p.T - 1u);
    lo[j] = 0u;
    if (p.SEG != 0u) {
      lo[j] = qseg[b * p.T + t];
    }
    let rowq = (b * p.T + t) * W + h * HD;
    let rowy = (b * p.T + t) * D + h * HD;
    dt[j] = 0.0;
    for (var i = 0u; i < HD / 4u; i++) {
      let o = (rowy >> 2u) + i;
      q[j][i] = g4(rowq + 4u * i) * p.scale;
      dy[j][i] = gdy[o];
      dq[j][i] = vec4f();
      dt[j] += dot(dy[j][i], gy[o]);
    }
    L[j] = glse[(b * p.H + h) * p.T + t];
  }
  let last = min(t0 + QB - 1u, p.T - 1u);
  let lo_min = min_lo(&lo);
  for (var s = 0u; s <= last; s++) {
    if (s == pre && lo_min > s) {
      s = lo_min; // as the forward: keys no query of the block sees
    }
    let rowk = (b * p.T + s) * W + D + kh * HD;
    var k: array<vec4f, MAX_V4>;
    var v: array<vec4f, MAX_V4>;
    for (var i = 0u; i < HD / 4u; i++) {
      k[i] = g4(rowk + 4u * i);
      v[i] = g4(rowk + KD + 4u * i);
    }
    for (var j = 0u; j < QB; j++) {
      if (s > t0 + j || (s >= pre && s < lo[j])) {
        continue;
      }
      var score = 0.0;
      var dp = 0.0;
      for (var i = 0u; i < HD / 4u; i++) {
        score += dot(q[j][i], k[i]);
        dp += dot(dy[j][i], v[i]);
      }
      let ds = exp(score - L[j]) * (dp - dt[j]);
      for (var i = 0u; i < HD / 4u; i++) {
        dq[j][i] += ds * k[i];
      }
    }
  }
  for (var j = 0u; j < QB; j++) {
    let t = t0 + j;
    if (t >= p.T) {
      break;
    }
    let rowq = (b * p.T + t) * W + h * HD;
    for (var i = 0u; i < HD / 4u; i++) {
      dqkv[(rowq >> 2u) + i] = dq[j][i] * p.scale;
    }
    dsum[(b * p.H + h) * p.T + t] = dt[j];
  }
}

@group(0) @binding(0) var<storage, read> kqkv: array<vec4f>;
@group(0) @binding(1) var<storage, read> kdy: array<vec4f>;
@group(0) @binding(2) var<storage, read> klse: array<f32>;
@group(0) @binding(3) var<storage, read> kdsum: array<f32>;
@group(0) @binding(4) var<storage, read_write> kdqkv: array<vec4f>;
@group(0) @binding(5) var<storage, read> kseg: array<u32>;

fn k4(i: u32) -> vec4f {
  return kqkv[i >> 2u];
}

/**
 * Past the last query that can see keys s0..s0 + n − 1: where a later segment starts, for keys
 * past the prompt (segment starts never decrease along a row; the padding is a segment of its
 * own), else T.
 */
fn segment_end(b: u32, s0: u32, n: u32, pre: u32) -> u32 {
  if (p.SEG == 0u || s0 < pre) {
    return p.T;
  }
  for (var t = s0 + 1u; t < p.T; t++) {
    if (kseg[b * p.T + t] > s0 + n - 1u) {
      return t;
    }
  }
  return p.T;
}

@compute @workgroup_size(64)
fn backward_dkdv(@builtin(global_invocation_id) gid: vec3u, @builtin(num_workgroups) nwg: vec3u) {
  let TQ = (p.T + QB - 1u) / QB;
  let KVH = kv_heads();
  let e = flat(gid, nwg);
  if (e >= p.B * KVH * TQ) {
    return;
  }
  let s0 = (e % TQ) * QB;
  let kh = (e / TQ) % KVH;
  let b = e / (TQ * KVH);
  let D = p.H * HD;
  let W = row_width();
  let KD = KVH * HD;
  let G = p.H / KVH; // query heads per kv head
  var pre = 0u;
  if (p.SEG != 0u) {
    pre = kseg[p.B * p.T + b];
  }
  var k: array<array<vec4f, MAX_V4>, QB_MAX>;
  var v: array<array<vec4f, MAX_V4>, QB_MAX>;
  var dk: array<array<vec4f, MAX_V4>, QB_MAX>;
  var dv: array<array<vec4f, MAX_V4>, QB_MAX>;
  for (var j = 0u; j < QB; j++) {
    let rowk = (b * p.T + min(s0 + j, p.T - 1u)) * W + D + kh * HD;
    for (var i = 0u; i < HD / 4u; i++) {
      k[j][i] = k4(rowk + 4u * i);
      v[j][i] = k4(rowk + KD + 4u * i);
      dk[j][i] = vec4f();
      dv[j][i] = vec4f();
    }
  }
  let end = segment_end(b, s0, QB, pre);
  for (var th = s0 * G; th < end * G; th++) {
    let t = th / G;
    let h = kh * G + th % G;
    let bh = b * p.H + h;
    let rowq = (b * p.T + t) * W + h * HD;
    let rowy = (b * p.T + t) * D + h * HD;
    var q: array<vec4f, MAX_V4>;
    var dy: array<vec4f, MAX_V4>;
    for (var i = 0u; i < HD / 4u; i++) {
      q[i] = k4(rowq + 4u * i);
      dy[i] = kdy[(rowy >> 2u) + i];
    }
    let lse_t = klse[bh * p.T + t];
    let dsum_t = kdsum[bh * p.T + t];
    var lo_t = 0u;
    if (p.SEG != 0u) {
      lo_t = kseg[b * p.T + t];
    }
    for (var j = 0u; j < QB; j++) {
      let s = s0 + j;
      if (t < s || (s >= pre && s < lo_t)) {
        continue; // causal: key s is seen by queries s..T − 1 (of the prompt or its segment)
      }
      var score = 0.0;
      var dp = 0.0;
      for (var i = 0u; i < HD / 4u; i++) {
        score += dot(q[i], k[j][i]);
        dp += dot(dy[i], v[j][i]);
      }
      let prob = exp(score * p.scale - lse_t);
      let ds = prob * (dp - dsum_t);
      for (var i = 0u; i < HD / 4u; i++) {
        dv[j][i] += prob * dy[i];
        dk[j][i] += ds * q[i];
      }
    }
  }
  for (var j = 0u; j < QB; j++) {
    let s = s0 + j;
    if (s >= p.T) {
      break;
    }
    let rowk = (b * p.T + s) * W + D + kh * HD;
    for (var i = 0u; i < HD / 4u; i++) {
      let o = (rowk >> 2u) + i;
      kdqkv[o] = dk[j][i] * p.scale;
      kdqkv[o + KD / 4u] = dv[j][i];
    }
  }
}

@group(0) @binding(0) var<storage, read> qd: array<vec4f>;
@group(0) @binding(1) var<storage, read> kcache: array<vec4f>;
@group(0) @binding(2) var<storage, read> vcache: array<vec4f>;
@group(0) @binding(3) var<storage, read> lens: array<u32>;
@group(0) @binding(4) var<storage, read_write> yd: array<vec4f>;

@compute @workgroup_size(64)
fn decode(@builtin(global_invocation_id) gid: vec3u) {
  let e = gid.x;
  if (e >= p.B * p.H) {
    return;
  }
  let h = e % p.H;
  let b = e / p.H;
  let D = p.H * HD;
  let KD = kv_heads() * HD;
  let kh = kv_of(h);
  let q_rs = select(p.q_rs, D, p.q_rs == 0u); // q's row stride: D, or a qkv row's width
  var q: array<vec4f, MAX_V4>;
  var acc: array<vec4f, MAX_V4>;
  for (var i = 0u; i < HD / 4u; i++) {
    q[i] = qd[(b * q_rs + h * HD) / 4u + i] * p.scale;
    acc[i] = vec4f();
  }
  var m = -3.4e38;
  var l = 0.0;
  for (var s = 0u; s < lens[b]; s++) {
    let row = (b * p.C + s) * KD + kh * HD;
    var score = 0.0;
    for (var i = 0u; i < HD / 4u; i++) {
      score += dot(q[i], kcache[row / 4u + i]);
    }
    let m_new = max(m, score);
    let c = exp(m - m_new);
    let w = exp(score - m_new);
    l = l * c + w;
    for (var i = 0u; i < HD / 4u; i++) {
      acc[i] = acc[i] * c + w * vcache[row / 4u + i];
    }
    m = m_new;
  }
  for (var i = 0u; i < HD / 4u; i++) {
    yd[(b * D + h * HD) / 4u + i] = acc[i] / max(l, 1e-30);
  }
}

@group(0) @binding(0) var<storage, read> sqkv: array<vec4f>;
@group(0) @binding(1) var<storage, read> spos: array<u32>;
@group(0) @binding(2) var<storage, read_write> skc: array<vec4f>;
@group(0) @binding(3) var<storage, read_write> svc: array<vec4f>;

// One invocation per four floats of one row's keys (and the same four of its values).
@compute @workgroup_size(64)
fn cache_store(@builtin(global_invocation_id) gid: vec3u, @builtin(num_workgroups) nwg: vec3u) {
  let e = flat(gid, nwg);
  let KD4 = kv_heads() * HD / 4u;
  if (e >= p.B * p.T * KD4) {
    return;
  }
  let i = e % KD4;
  let r = e / KD4;
  let b = r / p.T;
  let at = (r * row_width() + p.H * HD) / 4u + i;
  let to = (b * p.C + spos[b] + r % p.T) * KD4 + i;
  skc[to] = sqkv[at];
  svc[to] = sqkv[at + KD4];
}

// ================================================================================================
// Versions for heads of at most 16 floats (the lab's tiny presets, the random test checkpoints):
// forward_h16, backward_dq_h16, backward_dkdv_h16, decode_h16 — the passes above with every
// vector of a head in a struct of four vec4s instead of an array, QB = 4. Same bindings,
// uniforms, masks and summation order, so the same bits (kernels.attentionSmall.test.ts compares
// every pass). Why: SwiftShader's Subzero JIT keeps a function's arrays in memory and indexes
// them lane by lane, whatever the loop bounds; struct fields are values it keeps in registers.
// Measured on SwiftShader, 2 rows × 300 positions, 4 heads of 8: forward 45 → 14–23 ms.
// Optimising compilers (real GPUs', lavapipe's LLVM) make the same code of both.
// ================================================================================================

/** Invocations of a pass over B rows × `heads` heads × blocks of 4 positions. */
fn blocks(heads: u32) -> u32 {
  return p.B * heads * ((p.T + 3u) / 4u);
}

/** Invocation e's (row b, head, first of its 4 positions). */
fn block_of(e: u32, heads: u32) -> vec3u {
  let TQ = (p.T + 3u) / 4u;
  return vec3u(e / (TQ * heads), (e / TQ) % heads, (e % TQ) * 4u);
}

/** A head's vector: four vec4s, lanes past HD zero. */
struct Head {
  a: vec4f, b: vec4f, c: vec4f, d: vec4f,
}

/** Σ_i x_i·y_i over the head, in attention.wgsl's order (a vec4 at a time). */
fn head_dot(x: Head, y: Head) -> f32 {
  var s = dot(x.a, y.a);
  if (HD > 4u) {
    s += dot(x.b, y.b);
  }
  if (HD > 8u) {
    s += dot(x.c, y.c);
  }
  if (HD > 12u) {
    s += dot(x.d, y.d);
  }
  return s;
}

/** x·c + w·y (the online softmax's rescale and add). */
fn head_mix(x: Head, c: f32, w: f32, y: Head) -> Head {
  return Head(x.a * c + w * y.a, x.b * c + w * y.b, x.c * c + w * y.c, x.d * c + w * y.d);
}

/** x + a·y */
fn head_axpy(x: Head, a: f32, y: Head) -> Head {
  return Head(x.a + a * y.a, x.b + a * y.b, x.c + a * y.c, x.d + a * y.d);
}

/** Four vec4s of a head from `v` (in a row's vec4s from i4), the lanes past HD zero. */
fn head4(v0: vec4f, v1: vec4f, v2: vec4f, v3: vec4f) -> Head {
  var x = Head(v0, vec4f(), vec4f(), vec4f());
  if (HD > 4u) {
    x.b = v1;
  }
  if (HD > 8u) {
    x.c = v2;
  }
  if (HD > 12u) {
    x.d = v3;
  }
  return x;
}

// ---- forward_h16: one invocation per (b, h, block of 4 queries) -------------------------------


/** The head at float index i of qkv (i a multiple of 4), times `scale`. */
fn qkv_head(i: u32, scale: f32) -> Head {
  let j = i >> 2u;
  let last = arrayLength(&qkv) - 1u;
  return head4(
    qkv[j] * scale,
    qkv[min(j + 1u, last)] * scale,
    qkv[min(j + 2u, last)] * scale,
    qkv[min(j + 3u, last)] * scale,
  );
}

/** A query's running state: q (scaled), the output accumulator, max, sum, segment start. */
struct Query {
  q: Head, acc: Head, m: f32, l: f32, lo: u32, t: u32,
}

fn query_at(b: u32, t: u32, h: u32) -> Query {
  let tt = min(t, p.T - 1u);
  var lo = 0u;
  if (p.SEG != 0u) {
    lo = fseg[b * p.T + tt];
  }
  let q = qkv_head((b * p.T + tt) * row_width() + h * HD, p.scale);
  return Query(q, Head(), -3.4e38, 0.0, lo, t);
}

/** Key s (k, v) into the query's online softmax, where the query sees it. */
fn visit(x: Query, s: u32, pre: u32, k: Head, v: Head) -> Query {
  if (s > x.t || (s >= pre && s < x.lo)) {
    return x;
  }
  let score = head_dot(x.q, k);
  let m_new = max(x.m, score);
  let c = exp(x.m - m_new);
  let w = exp(score - m_new);
  return Query(x.q, head_mix(x.acc, c, w, v), m_new, x.l * c + w, x.lo, x.t);
}

fn store_query(x: Query, b: u32, h: u32) {
  if (x.t >= p.T) {
    return;
  }
  let ry = ((b * p.T + x.t) * p.H * HD + h * HD) >> 2u;
  y[ry] = x.acc.a / x.l;
  if (HD > 4u) {
    y[ry + 1u] = x.acc.b / x.l;
  }
  if (HD > 8u) {
    y[ry + 2u] = x.acc.c / x.l;
  }
  if (HD > 12u) {
    y[ry + 3u] = x.acc.d / x.l;
  }
  lse[(b * p.H + h) * p.T + x.t] = x.m + log(x.l);
}

@compute @workgroup_size(64)
fn forward_h16(@builtin(global_invocation_id) gid: vec3u, @builtin(num_workgroups) nwg: vec3u) {
  let e = flat(gid, nwg);
  if (e >= blocks(p.H)) {
    return;
  }
  let at = block_of(e, p.H);
  let b = at.x;
  let h = at.y;
  let t0 = at.z;
  let W = row_width();
  let KD = kv_heads() * HD;
  let kh = kv_of(h);
  var pre = 0u;
  if (p.SEG != 0u) {
    pre = fseg[p.B * p.T + b];
  }
  var q0 = query_at(b, t0, h);
  var q1 = query_at(b, t0 + 1u, h);
  var q2 = query_at(b, t0 + 2u, h);
  var q3 = query_at(b, t0 + 3u, h);
  let last = min(t0 + 3u, p.T - 1u);
  let lo_min = min(min(q0.lo, q1.lo), min(q2.lo, q3.lo));
  for (var s = 0u; s <= last; s++) {
    if (s == pre && lo_min > s) {
      s = lo_min; // as forward's
    }
    let rowk = (b * p.T + s) * W + p.H * HD + kh * HD;
    let k = qkv_head(rowk, 1.0);
    let v = qkv_head(rowk + KD, 1.0);
    q0 = visit(q0, s, pre, k, v);
    q1 = visit(q1, s, pre, k, v);
    q2 = visit(q2, s, pre, k, v);
    q3 = visit(q3, s, pre, k, v);
  }
  store_query(q0, b, h);
  store_query(q1, b, h);
  store_query(q2, b, h);
  store_query(q3, b, h);
}

// ---- backward_dq_h16: one invocation per (b, h, block of 4 queries) ----------------------------


fn gqkv_head(i: u32, scale: f32) -> Head {
  let j = i >> 2u;
  let last = arrayLength(&gqkv) - 1u;
  return head4(
    gqkv[j] * scale,
    gqkv[min(j + 1u, last)] * scale,
    gqkv[min(j + 2u, last)] * scale,
    gqkv[min(j + 3u, last)] * scale,
  );
}

/** y's or dy's head at float index i of the [B·T, D] rows. */
fn out_head(i: u32, grad: bool) -> Head {
  let j = i >> 2u;
  if (grad) {
    let last = arrayLength(&gdy) - 1u;
    return head4(gdy[j], gdy[min(j + 1u, last)], gdy[min(j + 2u, last)], gdy[min(j + 3u, last)]);
  }
  let last = arrayLength(&gy) - 1u;
  return head4(gy[j], gy[min(j + 1u, last)], gy[min(j + 2u, last)], gy[min(j + 3u, last)]);
}

/** A query's state in dq: q (scaled), dy, the dq accumulator, Dt = dy·y, its lse. */
struct DqQuery {
  q: Head, dy: Head, dq: Head, dt: f32, L: f32, lo: u32, t: u32,
}

fn dq_query(b: u32, t: u32, h: u32) -> DqQuery {
  let tt = min(t, p.T - 1u);
  var lo = 0u;
  if (p.SEG != 0u) {
    lo = qseg[b * p.T + tt];
  }
  let rowy = (b * p.T + tt) * p.H * HD + h * HD;
  let dy = out_head(rowy, true);
  let q = gqkv_head((b * p.T + tt) * row_width() + h * HD, p.scale);
  let L = glse[(b * p.H + h) * p.T + tt];
  return DqQuery(q, dy, Head(), head_dot(dy, out_head(rowy, false)), L, lo, t);
}

fn dq_visit(x: DqQuery, s: u32, pre: u32, k: Head, v: Head) -> DqQuery {
  if (s > x.t || (s >= pre && s < x.lo)) {
    return x;
  }
  let score = head_dot(x.q, k);
  let dp = head_dot(x.dy, v);
  let ds = exp(score - x.L) * (dp - x.dt);
  return DqQuery(x.q, x.dy, head_axpy(x.dq, ds, k), x.dt, x.L, x.lo, x.t);
}

fn dq_store(x: DqQuery, b: u32, h: u32) {
  if (x.t >= p.T) {
    return;
  }
  let o = ((b * p.T + x.t) * row_width() + h * HD) >> 2u;
  dqkv[o] = x.dq.a * p.scale;
  if (HD > 4u) {
    dqkv[o + 1u] = x.dq.b * p.scale;
  }
  if (HD > 8u) {
    dqkv[o + 2u] = x.dq.c * p.scale;
  }
  if (HD > 12u) {
    dqkv[o + 3u] = x.dq.d * p.scale;
  }
  dsum[(b * p.H + h) * p.T + x.t] = x.dt;
}

@compute @workgroup_size(64)
fn backward_dq_h16(@builtin(global_invocation_id) gid: vec3u, @builtin(num_workgroups) nwg: vec3u) {
  let e = flat(gid, nwg);
  if (e >= blocks(p.H)) {
    return;
  }
  let at = block_of(e, p.H);
  let b = at.x;
  let h = at.y;
  let t0 = at.z;
  let W = row_width();
  let KD = kv_heads() * HD;
  let kh = kv_of(h);
  var pre = 0u;
  if (p.SEG != 0u) {
    pre = qseg[p.B * p.T + b];
  }
  var q0 = dq_query(b, t0, h);
  var q1 = dq_query(b, t0 + 1u, h);
  var q2 = dq_query(b, t0 + 2u, h);
  var q3 = dq_query(b, t0 + 3u, h);
  let last = min(t0 + 3u, p.T - 1u);
  let lo_min = min(min(q0.lo, q1.lo), min(q2.lo, q3.lo));
  for (var s = 0u; s <= last; s++) {
    if (s == pre && lo_min > s) {
      s = lo_min; // as forward's
    }
    let rowk = (b * p.T + s) * W + p.H * HD + kh * HD;
    let k = gqkv_head(rowk, 1.0);
    let v = gqkv_head(rowk + KD, 1.0);
    q0 = dq_visit(q0, s, pre, k, v);
    q1 = dq_visit(q1, s, pre, k, v);
    q2 = dq_visit(q2, s, pre, k, v);
    q3 = dq_visit(q3, s, pre, k, v);
  }
  dq_store(q0, b, h);
  dq_store(q1, b, h);
  dq_store(q2, b, h);
  dq_store(q3, b, h);
}

// ---- backward_dkdv_h16: one invocation per (b, kv head, block of 4 keys) -----------------------


fn kqkv_head(i: u32) -> Head {
  let j = i >> 2u;
  let last = arrayLength(&kqkv) - 1u;
  return head4(kqkv[j], kqkv[min(j + 1u, last)], kqkv[min(j + 2u, last)], kqkv[min(j + 3u, last)]);
}

fn kdy_head(i: u32) -> Head {
  let j = i >> 2u;
  let last = arrayLength(&kdy) - 1u;
  return head4(kdy[j], kdy[min(j + 1u, last)], kdy[min(j + 2u, last)], kdy[min(j + 3u, last)]);
}

/** A key's state: k, v, and their gradients' accumulators. */
struct Key {
  k: Head, v: Head, dk: Head, dv: Head, s: u32,
}

fn key_at(b: u32, s: u32, kh: u32) -> Key {
  let rowk = (b * p.T + min(s, p.T - 1u)) * row_width() + p.H * HD + kh * HD;
  return Key(kqkv_head(rowk), kqkv_head(rowk + kv_heads() * HD), Head(), Head(), s);
}

/** Query t (q, dy, lse, Dt) into key x's gradients, where the query sees the key. */
fn key_visit(x: Key, t: u32, pre: u32, lo_t: u32, q: Head, dy: Head, lse_t: f32, dsum_t: f32) -> Key {
  if (t < x.s || (x.s >= pre && x.s < lo_t)) {
    return x;
  }
  let score = head_dot(q, x.k);
  let dp = head_dot(dy, x.v);
  let prob = exp(score * p.scale - lse_t);
  let ds = prob * (dp - dsum_t);
  return Key(x.k, x.v, head_axpy(x.dk, ds, q), head_axpy(x.dv, prob, dy), x.s);
}

fn key_store(x: Key, b: u32, kh: u32) {
  if (x.s >= p.T) {
    return;
  }
  let o = ((b * p.T + x.s) * row_width() + p.H * HD + kh * HD) >> 2u;
  let KD4 = kv_heads() * HD / 4u;
  kdqkv[o] = x.dk.a * p.scale;
  kdqkv[o + KD4] = x.dv.a;
  if (HD > 4u) {
    kdqkv[o + 1u] = x.dk.b * p.scale;
    kdqkv[o + KD4 + 1u] = x.dv.b;
  }
  if (HD > 8u) {
    kdqkv[o + 2u] = x.dk.c * p.scale;
    kdqkv[o + KD4 + 2u] = x.dv.c;
  }
  if (HD > 12u) {
    kdqkv[o + 3u] = x.dk.d * p.scale;
    kdqkv[o + KD4 + 3u] = x.dv.d;
  }
}

@compute @workgroup_size(64)
fn backward_dkdv_h16(@builtin(global_invocation_id) gid: vec3u, @builtin(num_workgroups) nwg: vec3u) {
  let KVH = kv_heads();
  let e = flat(gid, nwg);
  if (e >= blocks(KVH)) {
    return;
  }
  let at = block_of(e, KVH);
  let b = at.x;
  let kh = at.y;
  let s0 = at.z;
  let W = row_width();
  let G = p.H / KVH; // query heads per kv head
  var pre = 0u;
  if (p.SEG != 0u) {
    pre = kseg[p.B * p.T + b];
  }
  var k0 = key_at(b, s0, kh);
  var k1 = key_at(b, s0 + 1u, kh);
  var k2 = key_at(b, s0 + 2u, kh);
  var k3 = key_at(b, s0 + 3u, kh);
  let end = segment_end(b, s0, 4u, pre);
  for (var th = s0 * G; th < end * G; th++) {
    let t = th / G;
    let h = kh * G + th % G;
    let bh = b * p.H + h;
    let q = kqkv_head((b * p.T + t) * W + h * HD);
    let dy = kdy_head((b * p.T + t) * p.H * HD + h * HD);
    let lse_t = klse[bh * p.T + t];
    let dsum_t = kdsum[bh * p.T + t];
    var lo_t = 0u;
    if (p.SEG != 0u) {
      lo_t = kseg[b * p.T + t];
    }
    k0 = key_visit(k0, t, pre, lo_t, q, dy, lse_t, dsum_t);
    k1 = key_visit(k1, t, pre, lo_t, q, dy, lse_t, dsum_t);
    k2 = key_visit(k2, t, pre, lo_t, q, dy, lse_t, dsum_t);
    k3 = key_visit(k3, t, pre, lo_t, q, dy, lse_t, dsum_t);
  }
  key_store(k0, b, kh);
  key_store(k1, b, kh);
  key_store(k2, b, kh);
  key_store(k3, b, kh);
}

// ---- decode_h16: one invocation per (b, h), the query against cached keys 0..len[b] − 1 --------


fn cache_head(i4: u32, values: bool) -> Head {
  if (values) {
    let last = arrayLength(&vcache) - 1u;
    return head4(vcache[i4], vcache[min(i4 + 1u, last)], vcache[min(i4 + 2u, last)], vcache[min(i4 + 3u, last)]);
  }
  let last = arrayLength(&kcache) - 1u;
  return head4(kcache[i4], kcache[min(i4 + 1u, last)], kcache[min(i4 + 2u, last)], kcache[min(i4 + 3u, last)]);
}

@compute @workgroup_size(64)
fn decode_h16(@builtin(global_invocation_id) gid: vec3u) {
  let e = gid.x;
  if (e >= p.B * p.H) {
    return;
  }
  let h = e % p.H;
  let b = e / p.H;
  let D = p.H * HD;
  let KD = kv_heads() * HD;
  let kh = kv_of(h);
  let q_rs = select(p.q_rs, D, p.q_rs == 0u); // q's row stride: D, or a qkv row's width
  let j = (b * q_rs + h * HD) / 4u;
  let lastq = arrayLength(&qd) - 1u;
  let q = head4(
    qd[j] * p.scale,
    qd[min(j + 1u, lastq)] * p.scale,
    qd[min(j + 2u, lastq)] * p.scale,
    qd[min(j + 3u, lastq)] * p.scale,
  );
  var acc = Head();
  var m = -3.4e38;
  var l = 0.0;
  for (var s = 0u; s < lens[b]; s++) {
    let row = ((b * p.C + s) * KD + kh * HD) / 4u;
    let score = head_dot(q, cache_head(row, false));
    let m_new = max(m, score);
    let c = exp(m - m_new);
    let w = exp(score - m_new);
    l = l * c + w;
    acc = head_mix(acc, c, w, cache_head(row, true));
    m = m_new;
  }
  let o = (b * D + h * HD) / 4u;
  let inv = max(l, 1e-30);
  yd[o] = acc.a / inv;
  if (HD > 4u) {
    yd[o + 1u] = acc.b / inv;
  }
  if (HD > 8u) {
    yd[o + 2u] = acc.c / inv;
  }
  if (HD > 12u) {
    yd[o + 3u] = acc.d / inv;
  }
}
