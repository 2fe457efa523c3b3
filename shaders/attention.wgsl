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
// as in its own unpacked row, so its output is the same to the bit.
// No shared memory, no barriers. The head size HD is a pipeline constant (a multiple of 4,
// ≤ 4·MAX_V4: 64 here; ops.ts' attentionShader loads attention.wgsl?MAX_V4=32 for Qwen3's
// 128-wide heads): loops over it have constant bounds, so optimising compilers (LLVM in
// lavapipe and real GPUs' drivers) unroll them and keep q, the accumulators and dk/dv in
// registers, as vec4s. SwiftShader's Subzero JIT does not: it keeps the arrays in memory, so
// heads up to 16 run attention_small.wgsl (the same passes, a head in a struct of vec4s).

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
  for (var s = 0u; s <= last; s++) {
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
  for (var s = 0u; s <= last; s++) {
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
  for (var th = s0 * G; th < p.T * G; th++) {
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
