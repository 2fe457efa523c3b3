// The lab's kernels in the self-check's registry (registry.ts): every matmul version the tuner
// may pick, bias gradients, layer norm, embedding, attention forward and backward, the head's
// log-softmax, AdamW, the row gather/scatter and the one model's decode step. Shapes
// are small but off every tile (37, 70, 76 against tiles of 16, 32, 64), span several
// workgroups, and — for the `sized` ones — take the run's width, heads, MLP width and vocabulary.
import { gptTransformerConfig, makeConfig } from '../../../model/config';
import { initialValues, parameterSpecs } from '../../../model/params';
import { tokenLogprobReference } from '../../kernels/reference';
import {
  adamwRef,
  attentionBackwardRef,
  attentionRef,
  embeddingBackwardRef,
  embeddingRef,
  geluRef,
  headLogprobBackwardRef,
  layerNormBackwardRef,
  layerNormRef,
  matmulRef,
  transposeRef,
} from '../../kernels/referenceOps';
import { float32Tensors } from '../deviceCheckpoint';
import { DeviceTransformer } from '../deviceTransformer';
import { sampleOnModel } from '../modelSampling';
import * as op from '../ops';
import { embeddingLookup, MATMUL_VERSIONS, type MatmulVersion } from '../ops';
import { nextTokenLogProbsRef } from './gptReference';
import {
  ints,
  type KernelCheck,
  type Outputs,
  packedRows,
  randoms,
  registerKernelCheck,
} from './registry';

// matmul: three products per version — bias + residual; Aᵀ with the GELU forward (aux);
// Bᵀ, GELU backward and accumulation — at odd sizes, then the run's own: X·W_qkv, the tied
// head (Bᵀ, a padded row stride, the vocabulary as N) and a weight gradient (Aᵀ, K = rows).
interface MatmulCase {
  M: number;
  N: number;
  K: number;
  transA: boolean;
  transB: boolean;
  flags: number;
  cStride: number;
  a: Float32Array;
  b: Float32Array;
  bias?: Float32Array;
  residual?: Float32Array;
  aux?: Float32Array;
  c0?: Float32Array;
}

function matmulCases(
  s: { nEmbd: number; nInner: number; vocabSize: number },
  rng: import('./registry').Rng,
) {
  const mk = (
    M: number,
    N: number,
    K: number,
    o: Partial<Pick<MatmulCase, 'transA' | 'transB' | 'flags'>> & {
      bias?: boolean;
      residual?: boolean;
      pad?: boolean;
    },
  ): MatmulCase => {
    const flags = o.flags ?? 0;
    const cStride = o.pad ? Math.ceil(N / 4) * 4 : N;
    return {
      M,
      N,
      K,
      transA: !!o.transA,
      transB: !!o.transB,
      flags,
      cStride,
      a: randoms(rng, M * K),
      b: randoms(rng, K * N),
      ...(o.bias ? { bias: randoms(rng, N) } : {}),
      ...(o.residual ? { residual: randoms(rng, M * cStride) } : {}),
      ...(flags & op.MM_GELU_GRAD ? { aux: randoms(rng, M * cStride, 3) } : {}),
      ...(flags & op.MM_ACCUMULATE ? { c0: randoms(rng, M * cStride) } : {}),
    };
  };
  const { nEmbd: D, nInner: F, vocabSize: V } = s;
  return {
    fixed: [
      mk(70, 76, 20, { bias: true, residual: true }),
      mk(68, 76, 20, { transA: true, bias: true, flags: op.MM_GELU }),
      mk(70, 44, 28, { transB: true, flags: op.MM_GELU_GRAD | op.MM_ACCUMULATE }),
    ],
    sized: [
      mk(37, 3 * D, D, { bias: true }),
      mk(37, V, D, { transB: true, pad: true }),
      mk(D, F, 36, { transA: true, flags: op.MM_ACCUMULATE }),
    ],
  };
}

function matmulCheck(version: MatmulVersion, sized: boolean): KernelCheck<MatmulCase[]> {
  return {
    name: sized ? `matmul/${version}@run` : `matmul/${version}`,
    matmulVersion: version,
    indispensable: version === 'v1_regblock',
    // Sums of up to K ≈ 1000 products of numbers in [−1, 1]: float32's rounding stays below;
    // a skipped k, a wrong tile edge or a race is off by ~0.1 or more.
    tolerance: { atol: 1e-4, rtol: 1e-3 },
    sized,
    inputs: (s, rng) => (sized ? matmulCases(s, rng).sized : matmulCases(s, rng).fixed),
    async gpu(ctx, cases) {
      const out: Record<string, Float32Array> = {};
      const specs = [];
      const reads: [string, GPUBuffer, number][] = [];
      for (const [i, c] of cases.entries()) {
        const C = c.c0 ? ctx.upload(c.c0) : ctx.buffer(c.M * c.cStride);
        const aux = c.aux
          ? ctx.upload(c.aux)
          : c.flags & op.MM_GELU
            ? ctx.buffer(c.M * c.cStride)
            : undefined;
        specs.push(
          op.matmul({
            M: c.M,
            N: c.N,
            K: c.K,
            a: ctx.upload(c.a),
            ...(c.transA ? { aStride: [1, c.M] as [number, number] } : {}),
            b: ctx.upload(c.b),
            ...(c.transB ? { bStride: [1, c.K] as [number, number] } : {}),
            ...(c.bias ? { bias: ctx.upload(c.bias) } : {}),
            ...(c.residual ? { residual: ctx.upload(c.residual) } : {}),
            ...(aux ? { aux } : {}),
            c: C,
            cStride: c.cStride,
            flags: c.flags,
            dummy: ctx.rt.dummy,
            version,
          }),
        );
        reads.push([`c${i}`, C, c.M * c.cStride]);
        if (c.flags & op.MM_GELU && aux) reads.push([`gelu${i}`, aux, c.M * c.cStride]);
      }
      await ctx.run(specs);
      for (const [name, buffer, n] of reads) out[name] = await ctx.read(buffer, n);
      // Padding columns (j ≥ N in a padded row) are not the kernel's to write: compare N of each row.
      for (const [i, c] of cases.entries()) {
        for (const key of [`c${i}`, `gelu${i}`]) {
          const v = out[key];
          if (v && c.cStride !== c.N) out[key] = unpad(v, c.M, c.N, c.cStride);
        }
      }
      return out;
    },
    reference(cases) {
      const out: Record<string, Float64Array> = {};
      for (const [i, c] of cases.entries()) {
        // The stored arrays are Aᵀ [K,M] and Bᵀ [N,K] where transposed: turn them row-major.
        const a = c.transA ? transposeRef(c.a, c.K, c.M) : c.a;
        const b = c.transB ? transposeRef(c.b, c.N, c.K) : c.b;
        const un = (x?: Float32Array) =>
          x && c.cStride !== c.N ? unpad(x, c.M, c.N, c.cStride) : x;
        const pre = matmulRef(a, b, c.M, c.N, c.K, {
          ...(c.bias ? { bias: c.bias } : {}),
          ...(c.residual ? { residual: un(c.residual) as Float32Array } : {}),
          ...(c.aux ? { geluGradOf: un(c.aux) as Float32Array } : {}),
          ...(c.c0 ? { accumulate: un(c.c0) as Float32Array } : {}),
        });
        out[`c${i}`] = pre;
        if (c.flags & op.MM_GELU) out[`gelu${i}`] = pre.map(geluRef);
      }
      return out;
    },
  };
}

function unpad(x: ArrayLike<number>, rows: number, cols: number, stride: number): Float32Array {
  const out = new Float32Array(rows * cols);
  for (let r = 0; r < rows; r++)
    for (let j = 0; j < cols; j++) out[r * cols + j] = x[r * stride + j] ?? 0;
  return out;
}

const biasGradCheck: KernelCheck<{ dc: Float32Array; db0: Float32Array; M: number; Ns: number[] }> =
  {
    name: 'matmul/bias_grad',
    indispensable: true,
    tolerance: { atol: 1e-4, rtol: 1e-4 },
    sized: false,
    // bias_grad4 at N = 76 (× 4), bias_grad at N = 3; 70 rows.
    inputs: (_s, rng) => ({ dc: randoms(rng, 70 * 76), db0: randoms(rng, 76), M: 70, Ns: [76, 3] }),
    async gpu(ctx, x) {
      const out: Record<string, Float32Array> = {};
      for (const N of x.Ns) {
        const db = ctx.upload(x.db0.slice(0, N));
        await ctx.run([
          op.biasGrad(ctx.upload(x.dc.slice(0, x.M * N)), x.M, N, db, true, ctx.rt.dummy),
        ]);
        out[`db${N}`] = await ctx.read(db, N);
      }
      return out;
    },
    reference(x) {
      const out: Record<string, Float64Array> = {};
      for (const N of x.Ns) {
        const db = Float64Array.from(x.db0.slice(0, N));
        for (let i = 0; i < x.M; i++)
          for (let j = 0; j < N; j++) db[j] = (db[j] ?? 0) + (x.dc[i * N + j] ?? 0);
        out[`db${N}`] = db;
      }
      return out;
    },
  };

interface LnInputs {
  R: number;
  D: number;
  x: Float32Array;
  g: Float32Array;
  b: Float32Array;
  dy: Float32Array;
  dx0: Float32Array;
}
const LN_EPS = 1e-5;

const layerNormCheck: KernelCheck<LnInputs> = {
  name: 'layernorm/forward+backward',
  indispensable: true,
  tolerance: { atol: 1e-4, rtol: 1e-3 },
  sized: true,
  inputs: (s, rng) => {
    const [R, D] = [70, s.nEmbd];
    return {
      R,
      D,
      x: randoms(rng, R * D, 3),
      g: randoms(rng, D).map((v) => 1 + v / 2),
      b: randoms(rng, D),
      dy: randoms(rng, R * D),
      dx0: randoms(rng, R * D),
    };
  },
  async gpu(ctx, i) {
    const { R, D } = i;
    const [X, G, B, DY] = [i.x, i.g, i.b, i.dy].map((t) => ctx.upload(t)) as GPUBuffer[];
    const Y = ctx.buffer(R * D);
    const stats = ctx.buffer(2 * R);
    const DX = ctx.upload(i.dx0);
    const grads = ctx.buffer(2 * D);
    await ctx.run([
      op.layerNormForward(X!, G!, B!, Y, stats, R, D, LN_EPS),
      op.layerNormBackwardDx(X!, G!, DY!, stats, DX, R, D, true),
      op.layerNormBackwardParams(X!, DY!, stats, grads, 0, D, R, D),
    ]);
    const gr = await ctx.read(grads, 2 * D);
    return {
      y: await ctx.read(Y, R * D),
      dx: await ctx.read(DX, R * D),
      dgamma: gr.subarray(0, D),
      dbeta: gr.subarray(D),
    };
  },
  reference(i) {
    const { R, D } = i;
    const bwd = layerNormBackwardRef(i.x, i.g, i.dy, R, D, LN_EPS);
    return {
      y: layerNormRef(i.x, i.g, i.b, R, D, LN_EPS).y,
      dx: bwd.dx.map((v, k) => v + (i.dx0[k] ?? 0)),
      dgamma: bwd.dg,
      dbeta: bwd.db,
    };
  },
};

interface EmbInputs {
  B: number;
  T: number;
  D: number;
  V: number;
  wpeOff: number;
  params: Float32Array;
  ids: Uint32Array;
  dx: Float32Array;
  /** Each row's position (packed rows), or none (row b·T + t at t). */
  positions?: Uint32Array;
}

const embeddingCheck = (packed: boolean): KernelCheck<EmbInputs> => ({
  name: packed ? 'embedding/positions per row (packed rows)' : 'embedding/forward+backward',
  indispensable: true,
  tolerance: { atol: 1e-5, rtol: 1e-4 },
  sized: true,
  inputs: (s, rng) => {
    const [B, T, D, V] = [3, 23, s.nEmbd, s.vocabSize];
    const wpeOff = Math.ceil((V * D) / 64) * 64;
    return {
      B,
      T,
      D,
      V,
      wpeOff,
      params: randoms(rng, wpeOff + T * D),
      ids: ints(rng, B * T, V),
      dx: randoms(rng, B * T * D),
      ...(packed ? { positions: packedRows(B, T).positions } : {}),
    };
  },
  async gpu(ctx, i) {
    const { B, T, D, wpeOff } = i;
    const I = ctx.upload(i.ids);
    const P = ctx.upload(i.params);
    const X = ctx.buffer(B * T * D);
    const grads = ctx.buffer(i.params.length);
    const R = B * T;
    // Without packed rows, row b·T + t sits at position t.
    const at = ctx.upload(i.positions ?? Uint32Array.from({ length: R }, (_, r) => r % T));
    const wpe = { buffer: P, offset: wpeOff };
    await ctx.run([
      embeddingLookup(I, P, X, R, D, 'F32'),
      embeddingLookup(at, wpe, X, R, D, 'F32', 0, 0xffffffff, { add: true }),
      ...op.embeddingBackward(I, ctx.upload(i.dx), grads, R, D, 0, { buffer: at, wpeOff }),
    ]);
    const g = await ctx.read(grads, i.params.length);
    return {
      x: await ctx.read(X, B * T * D),
      dwte: g.subarray(0, i.V * D),
      dwpe: g.subarray(wpeOff, wpeOff + T * D),
    };
  },
  reference(i) {
    const { B, T, D, V, wpeOff } = i;
    const wte = i.params.subarray(0, V * D);
    const wpe = i.params.subarray(wpeOff, wpeOff + T * D);
    const bwd = embeddingBackwardRef(i.ids, i.dx, V, B, T, D, i.positions);
    return {
      x: embeddingRef(i.ids, wte, wpe, B, T, D, i.positions),
      dwte: bwd.dwte,
      dwpe: bwd.dwpe,
    };
  },
});

interface AttnInputs {
  B: number;
  T: number;
  H: number;
  hd: number;
  qkv: Float32Array;
  dy: Float32Array;
  /** attention.wgsl's segments (packed rows: shared prompts), or none. */
  segments?: Uint32Array;
}

function attentionCheck(part: 'forward' | 'backward', packed = false): KernelCheck<AttnInputs> {
  return {
    name: `attention/${part}${packed ? ' (packed rows: shared prompts)' : ''}`,
    indispensable: true,
    tolerance: part === 'forward' ? { atol: 1e-4, rtol: 1e-3 } : { atol: 2e-4, rtol: 2e-3 },
    sized: true,
    // B·H·⌈T/4⌉ = 96 invocations at 4 heads: two workgroups; T = 13 leaves a partial block.
    inputs: (s, rng) => {
      const [B, T, H] = [6, 13, s.nHead];
      const hd = s.nEmbd / H;
      return {
        B,
        T,
        H,
        hd,
        qkv: randoms(rng, B * T * 3 * H * hd, 2),
        dy: randoms(rng, B * T * H * hd),
        ...(packed ? { segments: packedRows(B, T).segments } : {}),
      };
    },
    async gpu(ctx, i) {
      const { B, T, H, hd } = i;
      const D = H * hd;
      const QKV = ctx.upload(i.qkv);
      const Y = ctx.buffer(B * T * D);
      const lse = ctx.buffer(B * H * T);
      const dqkv = ctx.buffer(B * T * 3 * D);
      const shape = { B, T, H, hd };
      const seg = i.segments ? ctx.upload(i.segments) : undefined;
      const specs = [op.attentionForward(shape, QKV, Y, lse, seg)];
      if (part === 'backward')
        specs.push(
          ...op.attentionBackward(
            shape,
            QKV,
            Y,
            ctx.upload(i.dy),
            lse,
            dqkv,
            ctx.buffer(B * H * T),
            seg,
          ),
        );
      await ctx.run(specs);
      const out: Outputs =
        part === 'forward'
          ? { y: await ctx.read(Y, B * T * D) }
          : { dqkv: await ctx.read(dqkv, B * T * 3 * D) };
      return out;
    },
    reference(i): Outputs {
      return part === 'forward'
        ? { y: attentionRef(i.qkv, i.B, i.T, i.H, i.hd, i.H, i.segments).y }
        : { dqkv: attentionBackwardRef(i.qkv, i.dy, i.B, i.T, i.H, i.hd, i.H, i.segments) };
    },
  };
}

interface HeadInputs {
  R: number;
  V: number;
  invTemp: number;
  logits: Float32Array;
  targets: Uint32Array;
  g: Float32Array;
}

const headCheck: KernelCheck<HeadInputs> = {
  name: 'head_logprob/forward+backward',
  indispensable: true,
  tolerance: { atol: 1e-5, rtol: 1e-4 },
  sized: true,
  // 70 rows of the run's vocabulary in rows padded to a multiple of 4, as the engine lays them.
  inputs: (s, rng) => {
    const [R, V] = [70, s.vocabSize];
    return {
      R,
      V,
      invTemp: 1 / 0.7,
      logits: randoms(rng, R * V, 4),
      targets: ints(rng, R, V),
      g: randoms(rng, R),
    };
  },
  async gpu(ctx, i) {
    const { R, V, invTemp } = i;
    const VP = Math.ceil(V / 4) * 4;
    const padded = new Float32Array(R * VP);
    for (let r = 0; r < R; r++) padded.set(i.logits.subarray(r * V, (r + 1) * V), r * VP);
    const L = ctx.upload(padded);
    const Tg = ctx.upload(i.targets);
    const out = ctx.buffer(3 * R);
    await ctx.run([
      op.headLogprobForward(L, Tg, out, R, V, invTemp, VP),
      op.headLogprobBackward(Tg, ctx.upload(i.g), out, L, R, V, invTemp, VP),
    ]);
    const o = await ctx.read(out, 3 * R);
    return {
      logp: o.subarray(0, R),
      entropy: o.subarray(R, 2 * R),
      dlogits: unpad(await ctx.read(L, R * VP), R, V, VP),
    };
  },
  reference(i) {
    const ref = tokenLogprobReference(
      i.logits.map((v) => v * i.invTemp),
      i.targets,
      i.R,
      i.V,
    );
    return {
      logp: ref.logp,
      entropy: ref.entropy,
      dlogits: headLogprobBackwardRef(i.logits, i.targets, i.g, i.R, i.V, i.invTemp),
    };
  },
};

interface AdamInputs {
  n: number;
  params: Float32Array;
  grads: Float32Array;
  m: Float32Array;
  v: Float32Array;
  decay: Float32Array;
}
const ADAM = {
  lr: 3e-3,
  beta1: 0.9,
  beta2: 0.95,
  eps: 1e-8,
  weightDecay: 0.1,
  step: 3,
  maxGradNorm: 0.5,
};

const adamwCheck: KernelCheck<AdamInputs> = {
  name: 'adamw/guarded_step',
  indispensable: true,
  tolerance: { atol: 1e-6, rtol: 1e-4 },
  sized: false,
  // 3,000 parameters: the norm's 256 partials each sum a dozen, the update spans 47 workgroups.
  inputs: (_s, rng) => {
    const n = 3000;
    return {
      n,
      params: randoms(rng, n),
      grads: randoms(rng, n, 0.1),
      m: randoms(rng, n, 0.01),
      v: randoms(rng, n, 0.01).map(Math.abs),
      decay: Float32Array.from({ length: n }, (_, k) => (k % 3 === 0 ? 0 : 1)),
    };
  },
  async gpu(ctx, i) {
    const n = i.n;
    const b = {
      grads: ctx.upload(i.grads),
      partials: ctx.buffer(3 * op.NORM_PARTIALS),
      loss: ctx.upload(new Float32Array([1.5])),
      stats: ctx.buffer(4),
      decay: ctx.upload(i.decay),
      params: ctx.upload(i.params),
      m: ctx.upload(i.m),
      v: ctx.upload(i.v),
    };
    const s = { ...ADAM, c1: 1 - ADAM.beta1 ** ADAM.step, c2: 1 - ADAM.beta2 ** ADAM.step };
    await ctx.run(op.adamw(n, op.adamwUniforms(n, s), b));
    const stats = await ctx.read(b.stats, 4);
    return {
      norm: stats.subarray(0, 1),
      applied: stats.subarray(1, 2),
      params: await ctx.read(b.params, n),
      m: await ctx.read(b.m, n),
      v: await ctx.read(b.v, n),
    };
  },
  reference(i) {
    const r = adamwRef(i.params, i.grads, i.m, i.v, i.decay, 1.5, ADAM);
    return { norm: [r.norm], applied: [1], params: r.params, m: r.m, v: r.v };
  },
};

interface RowsInputs {
  R: number;
  D: number;
  src: Float32Array;
  rows: Uint32Array;
}

const rowsCheck: KernelCheck<RowsInputs> = {
  name: 'rows/gather+scatter',
  indispensable: true,
  tolerance: { atol: 0, rtol: 0 },
  sized: true,
  inputs: (s, rng) => {
    const [R, D] = [70, s.nEmbd];
    // Every other row and a few more: the head's picked positions.
    const rows = Uint32Array.from({ length: R }, (_, r) => r).filter(
      (r) => r % 2 === 0 || rng.next() < 0.3,
    );
    return { R, D, src: randoms(rng, R * D), rows };
  },
  async gpu(ctx, i) {
    const { R, D, rows } = i;
    const n = rows.length;
    const inv = new Uint32Array(R).fill(0xffffffff);
    rows.forEach((r, k) => {
      inv[r] = k;
    });
    const picked = ctx.buffer(R * D);
    const back = ctx.upload(new Float32Array(R * D).fill(7)); // every row is overwritten
    await ctx.run([
      op.gatherRows(ctx.upload(i.src), ctx.upload(rows), picked, n, R, D),
      op.scatterRows(picked, ctx.upload(inv), back, n, R, D),
    ]);
    return { gathered: await ctx.read(picked, n * D), scattered: await ctx.read(back, R * D) };
  },
  reference(i) {
    const { R, D, rows } = i;
    const gathered = new Float32Array(rows.length * D);
    const scattered = new Float32Array(R * D);
    rows.forEach((r, k) => {
      gathered.set(i.src.subarray(r * D, (r + 1) * D), k * D);
      scattered.set(i.src.subarray(r * D, (r + 1) * D), r * D);
    });
    return { gathered, scattered };
  },
};

interface DecodeInputs {
  config: ReturnType<typeof makeConfig>;
  values: Map<string, Float32Array>;
  prompts: number[][];
}
const DECODE_NEW = 5;

/**
 * A one-layer GPT-2 at the run's sizes on the one model decoding greedily with the device's
 * draw: layer by layer, or (`fused`: a trainable model, as the lab's GPT-2 trained in full
 * samples) each layer in one dispatch (decode_layer.wgsl).
 */
const decodeCheck = (fused: boolean): KernelCheck<DecodeInputs> => ({
  name: fused ? 'decode/fused layer+pick' : 'decode/step+pick',
  indispensable: true,
  // Log-probs through a whole (one-layer) model: a few float32 roundings per op.
  tolerance: { atol: 2e-4, rtol: 1e-3 },
  sized: true,
  // Five rows of prompts of different lengths prefilled on the device (a partly empty
  // workgroup of four rows in the fused layer), greedy decoding.
  inputs: (s, rng) => {
    const config = makeConfig('tiny', s.vocabSize, 'shared', {
      nEmbd: s.nEmbd,
      nHead: s.nHead,
      nLayer: 1,
      nCtx: 16,
    });
    config.nInner = s.nInner;
    const values = initialValues(config, rng.below(2 ** 31));
    // Larger embeddings: peaked distributions, so a wrong kernel changes the greedy tokens.
    const wte = values.get('transformer.wte.weight') as Float32Array;
    for (let k = 0; k < wte.length; k++) wte[k] = (wte[k] ?? 0) * 40;
    const prompts = [3, 1, 6, 2, 4].map((n) =>
      Array.from({ length: n }, () => 1 + rng.below(s.vocabSize - 1)),
    );
    return { config, values, prompts };
  },
  async gpu(ctx, i) {
    const shapes = new Map(parameterSpecs(i.config).map((p) => [p.name, p.shape]));
    const weights = float32Tensors(i.values, (name) => shapes.get(name));
    const { value: model, buffers } = ctx.rt.collect(
      () =>
        new DeviceTransformer(ctx.rt, gptTransformerConfig(i.config), weights, {
          contextLength: 16,
          matmul: ctx.matmul,
          trainable: fused,
          decodeThreads: fused ? (ctx.software ? 16 : 64) : 0,
        }),
    );
    ctx.own(buffers);
    const options = { maxNewTokens: DECODE_NEW, temperature: 0, topK: 0, seed: 1, stopId: 0xffff };
    const out = await sampleOnModel(model, i.prompts, options, ctx.software ? 16 : 64);
    // The reference is computed on the tokens the device chose: keep them for it.
    decodeTokens.set(i, out.tokens);
    return { logp: out.logProbs.flat(), argmaxGap: out.tokens.flat().map(() => 0) };
  },
  reference(i) {
    const tokens = decodeTokens.get(i) ?? i.prompts.map(() => []);
    const logp: number[] = [];
    const gap: number[] = [];
    i.prompts.forEach((p, b) => {
      const seq = [...p];
      for (const t of tokens[b] ?? []) {
        const lp = nextTokenLogProbsRef(i.config, i.values, seq);
        logp.push(lp[t] ?? Number.NaN);
        // Greedy: the token taken must be the reference's best (up to rounding).
        gap.push(Math.max(...lp) - (lp[t] ?? Number.NEGATIVE_INFINITY));
        seq.push(t);
      }
    });
    if (logp.length !== i.prompts.length * DECODE_NEW) logp.push(Number.NaN); // rows stopped early
    return { logp, argmaxGap: gap };
  },
});

/** The device's tokens per decode input, for its reference (which follows the same path). */
const decodeTokens = new WeakMap<DecodeInputs, number[][]>();

/** The lab's checks, in the order they run: matmul versions first (the tuner needs them). */
export const LAB_CHECKS: readonly KernelCheck[] = [
  ...MATMUL_VERSIONS.map((v) => matmulCheck(v, false)),
  ...MATMUL_VERSIONS.map((v) => matmulCheck(v, true)),
  biasGradCheck,
  layerNormCheck,
  embeddingCheck(false),
  embeddingCheck(true),
  attentionCheck('forward'),
  attentionCheck('backward'),
  // The update's rows when a group shares its prompt (every GRPO step does).
  attentionCheck('backward', true),
  headCheck,
  adamwCheck,
  rowsCheck,
  decodeCheck(false),
  decodeCheck(true),
] as KernelCheck[];

for (const check of LAB_CHECKS) registerKernelCheck(check);
