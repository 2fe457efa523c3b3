// The one transformer (model/transformerConfig.ts) on the lab's own kernels, for inference: a
// checkpoint's weights by the config's names, matrices kept 16-bit on the device (F16/BF16 two
// to a u32 word, decoded in matmul.wgsl v5_b16 with f32 accumulation; F32 checkpoints stay f32
// and run v4_vec4), a prefill over a prompt and KV-cache decode steps, each giving the last
// position's logits, in rows of batch caches (one sequence is row 0: the model keeps no caches
// of its own). The kernels are chosen by the config's switches, never by a family's name:
//   x = embed(ids) (+ learned positions: embedding.wgsl's lookup, added)
//   per layer: norm (RMSNorm | LayerNorm) → fused q|k|v projection (+bias) → q/k RMSNorm per
//   head (qkNorm) → RoPE (positions 'rope') → the k, v rows into the cache → grouped-query
//   attention → o added to the residual (+bias) → norm → the MLP's input projection, fused
//   gate|up then SwiGLU, or fc (+bias) with GELU in its epilogue → down added to the residual
//   (+bias); then the final norm and the head (the embedding when tied), split in row ranges
//   when the adapter's binding limit is below the matrix (a 151,936-token vocabulary).
// The weights are placed by deviceCheckpoint.ts (Conv1D's transposed as they are uploaded).
// LoRA, training and sampling, runs over this model for any config (devicePolicy.ts).
import { ropeInverseFrequencies, ropeTable } from '../../model/families/rope';
import type { TransformerConfig } from '../../model/transformerConfig';
import {
  type DeviceMatrix,
  type DeviceNorm,
  type FlatWeights,
  WeightPlacer,
  type WeightTensors,
} from './deviceCheckpoint';
import {
  attentionCacheStore,
  attentionDecode,
  attentionForward,
  decodeLayer,
  decodeLayerBytes,
  embeddingLookup,
  gatherRows,
  geluForward,
  layerNormForward,
  MAX_HEAD_DIM,
  type MatmulVersion,
  MM_ACCUMULATE,
  MM_GELU,
  matmul,
  matmul16,
  rmsNormForward,
  rope,
  swigluForward,
} from './ops';
import {
  asSlice,
  type Bindable,
  type DispatchSpec,
  type GpuRuntime,
  type Program,
  type Slice,
  uniforms,
} from './runtime';

export interface DeviceLayer {
  inNorm: DeviceNorm;
  qkv: DeviceMatrix;
  qkvBias: Slice | null;
  qNorm: Slice | null;
  kNorm: Slice | null;
  o: DeviceMatrix;
  oBias: Slice | null;
  postNorm: DeviceNorm;
  /** The MLP's input projection: gate|up (SwiGLU) or fc (GELU). */
  gateUp: DeviceMatrix;
  gateUpBias: Slice | null;
  down: DeviceMatrix;
  downBias: Slice | null;
}

/** Where a pass keeps keys and values: B sequences of C positions per layer, their positions and lengths. */
interface CacheTarget {
  B: number;
  C: number;
  k: (layer: number) => Bindable;
  v: (layer: number) => Bindable;
  pos: GPUBuffer;
  lens: GPUBuffer;
}

/** The projections LoRA adapts: q|k|v, o, gate|up, down. */
export type AdapterSite = 'qkv' | 'o' | 'gateUp' | 'down';

/** Dispatches that add an adapter's output to y [rows, …] from the projection's input x. */
export type AdapterHook = (
  rows: number,
  layer: number,
  site: AdapterSite,
  x: GPUBuffer,
  y: GPUBuffer,
) => DispatchSpec[];

/** Where a layer's forward records: dispatches, and the update's buffer copies between them. */
export interface Recorder {
  run(...specs: DispatchSpec[]): void;
  copy(from: GPUBuffer, to: GPUBuffer, floats: number): void;
}

/**
 * What one layer's forward reads and writes. Sampling's: one set for every layer, mid and out
 * being x (the residual updated in place). The update's: each layer's own, kept for the
 * backward (qkvPre: q|k|v before the q/k norm; mid and out: buffers of their own, the residual
 * copied in first).
 */
export interface LayerBuffers {
  x: GPUBuffer;
  xn1: GPUBuffer;
  stats1: GPUBuffer;
  qkvPre: GPUBuffer | null;
  qkv: GPUBuffer;
  qStats: GPUBuffer;
  kStats: GPUBuffer;
  att: GPUBuffer;
  lse: GPUBuffer;
  mid: GPUBuffer;
  xn2: GPUBuffer;
  stats2: GPUBuffer;
  gu: GPUBuffer;
  hm: GPUBuffer;
  out: GPUBuffer;
}

/** What differs between sampling's layer forward and the update's. */
export interface LayerPasses {
  /** An adapter's addition to a site's output y from its input x (none: []). */
  adapt(layer: number, site: AdapterSite, x: GPUBuffer, y: GPUBuffer): DispatchSpec[];
  /** RoPE on q|k at the rows' positions (asked only where the config has RoPE). */
  rope(qkv: GPUBuffer): DispatchSpec;
  /** Attention of q|k|v into att (lse its softmax's log-sum): over the caches, or packed rows. */
  attend(layer: number, qkv: GPUBuffer, att: GPUBuffer, lse: GPUBuffer): DispatchSpec[];
  /** GELU on its own after fc (its pre-activation kept, or an adapter adding to it first). */
  geluApart: boolean;
}

export interface DeviceTransformerOptions {
  /** Most positions a sequence may reach (the KV cache's length); default 512. */
  contextLength?: number;
  /** Most bytes one binding may hold (default: the device's limit); tests set it low. */
  maxBindingBytes?: number;
  /**
   * Every weight f32 in one flat buffer (`flat`), for full-parameter training
   * (deviceWeights.ts): a checkpoint's 16-bit tensors are widened, and the whole must fit one
   * binding.
   */
  trainable?: boolean;
  /**
   * The matmul version of the f32 products (the engine's: the fastest its self-check passed);
   * default v4_vec4.
   */
  matmul?: MatmulVersion;
  /**
   * Invocations per row of a fused decode layer (decode_layer.wgsl; a trainable model decodes a
   * layer in one dispatch where fusesDecode): 16 on CPU drivers, 64 (default) on GPUs; 0 decodes
   * layer by layer.
   */
  decodeThreads?: number;
}

const layerSizes = (c: TransformerConfig) => ({
  D: c.hidden,
  H: c.heads,
  kvH: c.kvHeads,
  hd: c.headDim,
  I: c.intermediate,
});

/**
 * Whether a trainable model of this config decodes a layer in one dispatch on this device
 * (decode_layer.wgsl): RoPE's halves whole vec4s, the layer's rows in the workgroup's storage.
 */
export function fusesDecode(c: TransformerConfig, device: GPUDevice): boolean {
  if (c.positions === 'rope' && c.headDim % 8 !== 0) return false;
  const bytes = decodeLayerBytes(layerSizes(c), c.mlp === 'swiglu');
  return bytes <= device.limits.maxComputeWorkgroupStorageSize;
}

/** Why this config cannot run on the kernels, in words (null: it can). */
export function deviceProblem(c: TransformerConfig): string | null {
  if (c.headDim % 4 !== 0 || c.headDim > MAX_HEAD_DIM)
    return `head size ${c.headDim}: the attention kernels take a multiple of 4 up to ${MAX_HEAD_DIM}`;
  if (c.hidden % 4 !== 0) return `hidden size ${c.hidden} is not a multiple of 4`;
  if (c.intermediate % 4 !== 0) return `MLP width ${c.intermediate} is not a multiple of 4`;
  if (c.heads % c.kvHeads !== 0)
    return `${c.heads} attention heads are not a multiple of ${c.kvHeads} key/value heads`;
  if (c.positions === 'learned' && !c.names.positions) return 'learned positions without a table';
  return null;
}

export class DeviceTransformer {
  // Read by the LoRA trainer (devicePolicy.ts), which runs its own passes over them.
  readonly layers: DeviceLayer[] = [];
  readonly embed: DeviceMatrix;
  /** Learned positions' table [contextLength, hidden] (positions 'learned'). */
  readonly positions: DeviceMatrix | null;
  readonly head: DeviceMatrix;
  readonly finalNorm: DeviceNorm;
  /** RoPE's cos/sin table for contextLength positions (positions 'rope'). */
  readonly table: GPUBuffer | null;
  /** The matmul version of every f32 product over this model (its adapters' and gradients' too). */
  readonly matmul: MatmulVersion;
  /** Invocations per row of the fused decode layer (0: none). */
  private readonly decodeThreads: number;
  /** A trainable model's flat weights (null: each tensor in its own buffer, as stored). */
  readonly flat: FlatWeights | null;
  /** Positions held in the cache (the next token's position). */
  length = 0;
  readonly contextLength: number;
  /** A q|k|v row's width, (H + 2·kvH)·hd. */
  readonly W: number;
  /** The vocabulary rounded up to 4 (the logits' row stride). */
  readonly Vp: number;
  private readonly maxBinding: number;
  private readonly ids: GPUBuffer;
  /** Activations sized for `rows` positions (a prefill's); grown on demand. */
  private act: Record<'x' | 'xn' | 'qkv' | 'att' | 'gu' | 'hm' | 'rstd' | 'lse', GPUBuffer> | null =
    null;
  private actRows = 0;
  /** Caches, positions and logits of batched sampling (batchCaches), with a program per row count. */
  private batch: {
    rows: number;
    C: number;
    k: GPUBuffer[];
    v: GPUBuffer[];
    pos: GPUBuffer;
    lens: GPUBuffer;
    logits: GPUBuffer;
    /** One row of a layer's cache or of logits: copies between rows of a buffer go through it. */
    scratch: GPUBuffer;
    /**
     * A batched prefill's ids [rows, C], each row's first position (0), its last row's index, xn
     * and logits (copied into the batch's rows: a binding's offset must be 256-byte aligned).
     */
    prefill: {
      ids: GPUBuffer;
      starts: GPUBuffer;
      sel: GPUBuffer;
      last: GPUBuffer;
      logits: GPUBuffer;
    };
    programs: Map<number, Program>;
  } | null = null;
  /** LoRA's low-rank path after each projection (set by DevicePolicy.attach). */
  private adapterHook: AdapterHook | null = null;

  /** Prefill and decode steps add the adapters' y += s·B·A·x (null: the base alone). */
  setAdapterHook(hook: AdapterHook | null): void {
    this.adapterHook = hook;
    this.forgetPrograms();
  }

  /** Drops the cached decode programs (they bind the activations and the adapter hook). */
  private forgetPrograms(): void {
    for (const p of this.batch?.programs.values() ?? []) this.rt.destroyProgram(p);
    this.batch?.programs.clear();
  }

  constructor(
    readonly rt: GpuRuntime,
    readonly config: TransformerConfig,
    weights: WeightTensors,
    options: DeviceTransformerOptions = {},
  ) {
    const problem = deviceProblem(config);
    if (problem) throw new Error(`this model cannot run on the kernels: ${problem}`);
    this.matmul = options.matmul ?? 'v4_vec4';
    this.decodeThreads = options.decodeThreads ?? 64;
    const c = config;
    const n = c.names;
    this.contextLength = options.contextLength ?? Math.min(512, c.contextLength || 512);
    const limits = rt.device.limits;
    this.maxBinding =
      options.maxBindingBytes ?? Math.min(limits.maxStorageBufferBindingSize, limits.maxBufferSize);
    const { hidden: D, headDim: hd, intermediate: I } = c;
    const Q = c.heads * hd;
    const KD = c.kvHeads * hd;
    this.W = Q + 2 * KD;
    this.Vp = Math.ceil(c.vocabSize / 4) * 4;
    // Embedding tables are [rows, hidden] in either layout; projections are transposed from
    // Conv1D's [in, out] where the checkpoint stores them so.
    const placer = new WeightPlacer(rt, weights, this.maxBinding, options.trainable ?? false);
    const table = (name: string, rows: number) => placer.matrix([[name, rows]], D, 'out-in');
    const project = (names: [string, number][], cols: number) =>
      placer.matrix(names, cols, c.weightLayout);
    const vector = (name: string, size: number) => placer.vector(name, size);
    const norm = (prefix: string): DeviceNorm => ({
      weight: vector(`${prefix}.weight`, D),
      bias: c.norm === 'layernorm' ? vector(`${prefix}.bias`, D) : null,
    });
    this.embed = table(n.embed, c.vocabSize);
    this.positions =
      c.positions === 'learned' ? table(n.positions as string, c.contextLength) : null;
    if (this.contextLength > c.contextLength && c.positions === 'learned')
      throw new Error(
        `a context of ${this.contextLength} positions: the model learned ${c.contextLength}`,
      );
    this.head = c.tiedHead ? this.embed : table(n.head as string, c.vocabSize);
    this.finalNorm = norm(n.finalNorm);
    for (let i = 0; i < c.layers; i++) {
      const at = (module: string | undefined) => `${n.layer(i)}.${module}`;
      const qkvNames: [string, number][] = c.fusedQkv
        ? [[at(n.qkv), this.W]]
        : [
            [at(n.q), Q],
            [at(n.k), KD],
            [at(n.v), KD],
          ];
      const mlpIn: [string, number][] =
        c.mlp === 'swiglu'
          ? [
              [at(n.gate), I],
              [at(n.up), I],
            ]
          : [[at(n.fc), I]];
      this.layers.push({
        inNorm: norm(at(n.inNorm)),
        qkv: project(
          qkvNames.map(([m, rows]) => [`${m}.weight`, rows]),
          D,
        ),
        qkvBias: c.qkvBias
          ? placer.concatVectors(
              qkvNames.map(([m]) => `${m}.bias`),
              qkvNames.map(([, rows]) => rows),
            )
          : null,
        qNorm: c.qkNorm ? vector(`${at(n.qNorm)}.weight`, hd) : null,
        kNorm: c.qkNorm ? vector(`${at(n.kNorm)}.weight`, hd) : null,
        o: project([[`${at(n.o)}.weight`, D]], Q),
        oBias: c.projBias ? vector(`${at(n.o)}.bias`, D) : null,
        postNorm: norm(at(n.postNorm)),
        gateUp: project(
          mlpIn.map(([m, rows]) => [`${m}.weight`, rows]),
          D,
        ),
        gateUpBias: c.projBias && c.mlp === 'gelu' ? vector(`${at(n.fc)}.bias`, I) : null,
        down: project([[`${at(n.down)}.weight`, D]], I),
        downBias: c.projBias ? vector(`${at(n.down)}.bias`, D) : null,
      });
    }
    if (c.positions === 'rope') {
      const rope = c.rope ?? { theta: 10000 };
      this.table = rt.buffer(this.contextLength * hd, 'rope table');
      rt.write(
        this.table,
        ropeTable(
          this.contextLength,
          ropeInverseFrequencies({
            headDim: hd,
            ropeTheta: rope.theta,
            ...(rope.scaling ? { ropeScaling: rope.scaling } : {}),
          }),
        ),
      );
    } else this.table = null;
    this.flat = placer.finish();
    this.ids = rt.buffer(this.contextLength, 'ids');
  }

  /** C [M, m.rows] (+)= A·Wᵀ for every row range of W. */
  project(
    M: number,
    a: Bindable,
    m: DeviceMatrix,
    c: Bindable,
    o: {
      bias?: Bindable | null;
      accumulate?: boolean;
      cStride?: number;
      /** GELU in the epilogue: c keeps the pre-activation, this buffer takes gelu(c). */
      gelu?: GPUBuffer;
    } = {},
  ): DispatchSpec[] {
    const cStride = o.cStride ?? m.rows;
    const into = asSlice(c);
    return m.parts.map((part) => {
      const out: Slice = { buffer: into.buffer, offset: (into.offset ?? 0) + part.row0 };
      if ((o.bias || o.gelu) && m.parts.length > 1)
        throw new Error('a bias or GELU on a split matrix');
      if (m.dtype === 'F32')
        return matmul({
          M,
          N: part.rows,
          K: m.cols,
          a,
          b: part.buffer,
          bStride: [1, m.cols],
          c: out,
          cStride,
          ...(o.bias ? { bias: o.bias } : {}),
          ...(o.gelu ? { aux: o.gelu } : {}),
          flags: (o.accumulate ? MM_ACCUMULATE : 0) | (o.gelu ? MM_GELU : 0),
          version: this.matmul,
          dummy: this.rt.dummy,
        });
      return matmul16({
        M,
        N: part.rows,
        K: m.cols,
        a,
        w: part.buffer,
        dtype: m.dtype,
        ...(o.bias ? { bias: o.bias } : {}),
        ...(o.gelu ? { gelu: o.gelu } : {}),
        c: out,
        cStride,
        accumulate: o.accumulate ?? false,
        dummy: this.rt.dummy,
      });
    });
  }

  private activations(rows: number) {
    if (this.act && this.actRows >= rows) return this.act;
    if (this.act) for (const b of Object.values(this.act)) this.rt.free(b);
    const c = this.config;
    const rt = this.rt;
    this.act = {
      x: rt.buffer(rows * c.hidden, 'x'),
      xn: rt.buffer(rows * c.hidden, 'xn'),
      qkv: rt.buffer(rows * this.W, 'qkv'),
      att: rt.buffer(rows * c.heads * c.headDim, 'att'),
      gu: rt.buffer(rows * 2 * c.intermediate, 'gate|up'),
      hm: rt.buffer(rows * c.intermediate, 'mlp'),
      // RMSNorm's rstd per row (per head for q/k norms), LayerNorm's mean and rstd per row.
      rstd: rt.buffer(rows * Math.max(c.heads, 2), 'norm stats'),
      lse: rt.buffer(rows * c.heads, 'lse'),
    };
    this.actRows = rows;
    // The decode programs bind the activations: rebuilt with them.
    this.forgetPrograms();
    return this.act;
  }

  /**
   * x [R, hidden] = the tokens' rows of the embedding (every row range of it), plus learned
   * positions where the config has them: each row's own (`rows`: a position per row) or each
   * sequence's from its first (`starts`, T rows a sequence).
   */
  embedSpecs(
    ids: Bindable,
    x: GPUBuffer,
    R: number,
    positions: { rows: Bindable } | { starts: Bindable; T: number },
  ): DispatchSpec[] {
    const D = this.config.hidden;
    const lookup = (m: DeviceMatrix, from: Bindable, o?: { add: boolean; fromStarts?: number }) =>
      m.parts.map((part) =>
        embeddingLookup(from, part.buffer, x, R, D, m.dtype, part.row0, part.row0 + part.rows, o),
      );
    const specs = lookup(this.embed, ids);
    if (this.positions)
      specs.push(
        ...('rows' in positions
          ? lookup(this.positions, positions.rows, { add: true })
          : lookup(this.positions, positions.starts, { add: true, fromStarts: positions.T })),
      );
    return specs;
  }

  /**
   * Every layer and the final norm over T rows: a prefill from position 0 (T = prompt length,
   * causal attention over the rows) or one decode step (T = 1, at the position in `pos`,
   * attention over the cache). The activations are shared by the layers, the residual updated
   * in place.
   */
  private body(
    T: number,
    decode: boolean,
    at: CacheTarget,
    ids: GPUBuffer = this.ids,
  ): DispatchSpec[] {
    const { heads: H, kvHeads: kvH, headDim: hd } = this.config;
    // A decode step is one position of each of B sequences; a prefill, T positions of each.
    const B = at.B;
    const R = B * T;
    const a = this.activations(R);
    const shape = { B, T, H, hd, kvH };
    const specs: DispatchSpec[] = [];
    const recorder: Recorder = {
      run: (...more) => specs.push(...more),
      copy: () => {
        throw new Error('sampling’s forward copies no buffer');
      },
    };
    // Learned positions: each sequence's rows from its first position (at.pos) on.
    specs.push(...this.embedSpecs(ids, a.x, R, { starts: at.pos, T }));
    const buffers: LayerBuffers = {
      ...{ x: a.x, mid: a.x, out: a.x, xn1: a.xn, xn2: a.xn, qkvPre: null, qkv: a.qkv },
      ...{ stats1: a.rstd, stats2: a.rstd, qStats: a.rstd, kStats: a.rstd },
      ...{ att: a.att, lse: a.lse, gu: a.gu, hm: a.hm },
    };
    const passes: LayerPasses = {
      adapt: (i, site, x, y) => this.adapterHook?.(R, i, site, x, y) ?? [],
      rope: (qkv) =>
        rope({ R, T, H, kvH, hd }, this.table as GPUBuffer, qkv, at.pos, this.rt.dummy),
      attend: (i, qkv, att, lse) => [
        attentionCacheStore(shape, at.C, qkv, at.pos, at.k(i), at.v(i)),
        decode
          ? attentionDecode(B, H, hd, at.C, qkv, at.k(i), at.v(i), at.lens, att, {
              kvH,
              qStride: this.W,
            })
          : attentionForward(shape, qkv, att, lse),
      ],
      // An adapter on fc adds to the pre-activation: GELU after it, on its own.
      geluApart: this.adapterHook !== null,
    };
    for (let i = 0; i < this.layers.length; i++) this.layerForward(recorder, i, R, buffers, passes);
    specs.push(this.norm(a.x, this.finalNorm, a.xn, a.rstd, R));
    return specs;
  }

  /**
   * One layer's forward over R rows, the one both uses run: sampling's (its activations shared,
   * the residual updated in place, keys and values into the caches) and the update's (each
   * layer's activations its own, kept for the backward; devicePolicy.ts).
   */
  layerForward(out: Recorder, i: number, R: number, b: LayerBuffers, p: LayerPasses): void {
    const c = this.config;
    const l = this.layers[i] as DeviceLayer;
    const { hidden: D, heads: H, kvHeads: kvH, headDim: hd, normEps: eps } = c;
    const dummy = this.rt.dummy;
    out.run(this.norm(b.x, l.inNorm, b.xn1, b.stats1, R));
    const pre = b.qkvPre ?? b.qkv;
    out.run(...this.project(R, b.xn1, l.qkv, pre, { bias: l.qkvBias }));
    out.run(...p.adapt(i, 'qkv', b.xn1, pre));
    if (l.qNorm && l.kNorm) {
      // Qwen3's norm of each q and k head (in place; the update keeps its input).
      if (b.qkvPre) out.copy(b.qkvPre, b.qkv, R * this.W);
      out.run(
        rmsNormForward(null, l.qNorm, b.qkv, b.qStats, R * H, hd, eps, dummy, {
          group: H,
          stride: this.W,
        }),
        rmsNormForward(null, l.kNorm, b.qkv, b.kStats, R * kvH, hd, eps, dummy, {
          group: kvH,
          stride: this.W,
          off: H * hd,
        }),
      );
    }
    if (this.table) out.run(p.rope(b.qkv));
    out.run(...p.attend(i, b.qkv, b.att, b.lse));
    if (b.mid !== b.x) out.copy(b.x, b.mid, R * D);
    out.run(...this.project(R, b.att, l.o, b.mid, { accumulate: true, bias: l.oBias }));
    out.run(...p.adapt(i, 'o', b.att, b.mid));
    out.run(this.norm(b.mid, l.postNorm, b.xn2, b.stats2, R));
    if (c.mlp === 'swiglu') {
      out.run(...this.project(R, b.xn2, l.gateUp, b.gu));
      out.run(...p.adapt(i, 'gateUp', b.xn2, b.gu));
      out.run(swigluForward(b.gu, b.hm, R, c.intermediate));
    } else if (p.geluApart) {
      out.run(...this.project(R, b.xn2, l.gateUp, b.gu, { bias: l.gateUpBias }));
      out.run(...p.adapt(i, 'gateUp', b.xn2, b.gu));
      out.run(geluForward(b.gu, b.hm, R * c.intermediate));
    } else {
      out.run(...this.project(R, b.xn2, l.gateUp, b.gu, { bias: l.gateUpBias, gelu: b.hm }));
    }
    if (b.out !== b.mid) out.copy(b.mid, b.out, R * D);
    out.run(...this.project(R, b.hm, l.down, b.out, { accumulate: true, bias: l.downBias }));
    out.run(...p.adapt(i, 'down', b.hm, b.out));
  }

  /** The config's norm (LayerNorm with its bias, or RMSNorm) over R rows of x into y. */
  norm(x: GPUBuffer, n: DeviceNorm, y: GPUBuffer, stats: GPUBuffer, R: number): DispatchSpec {
    const { hidden: D, normEps: eps } = this.config;
    return n.bias
      ? layerNormForward(x, n.weight, n.bias, y, stats, R, D, eps)
      : rmsNormForward(x, n.weight, y, stats, R, D, eps, this.rt.dummy);
  }

  /**
   * Room for `rows` sequences of up to `length` positions each, for batched sampling
   * (prefillRow, copyRow, decodeRows): a GRPO group's samples decode together, one pass per
   * token for all of them. Kept while a later call fits in it.
   */
  batchCaches(rows: number, length: number): void {
    if (length > this.contextLength)
      throw new Error(
        `batchCaches: ${length} positions exceed the context of ${this.contextLength}`,
      );
    const held = this.batch;
    if (held && held.rows >= rows && held.C >= length) return;
    this.freeBatch();
    const rt = this.rt;
    const c = this.config;
    const KD = c.kvHeads * c.headDim;
    // A row's cache starts on a binding-aligned offset (256 bytes): C a multiple of 64.
    const C = Math.ceil(length / 64) * 64;
    this.batch = {
      rows,
      C,
      k: this.layers.map((_, i) => rt.buffer(rows * C * KD, `k batch cache ${i}`)),
      v: this.layers.map((_, i) => rt.buffer(rows * C * KD, `v batch cache ${i}`)),
      pos: rt.buffer(Math.max(4, rows), 'batch pos'),
      lens: rt.buffer(Math.max(4, rows), 'batch lens'),
      logits: rt.buffer(rows * this.Vp, 'batch logits'),
      // Room for a row of a layer's cache, or a row of logits.
      scratch: rt.buffer(Math.max(C * KD, this.Vp), 'batch row copy'),
      prefill: {
        ids: rt.buffer(rows * C, 'prefill ids'),
        starts: rt.buffer(Math.max(4, rows), 'prefill starts'),
        sel: rt.buffer(Math.max(4, rows), 'prefill last rows'),
        last: rt.buffer(rows * c.hidden, 'prefill last xn'),
        logits: rt.buffer(rows * this.Vp, 'prefill logits'),
      },
      programs: new Map(),
    };
  }

  private freeBatch(): void {
    const b = this.batch;
    if (!b) return;
    for (const p of b.programs.values()) this.rt.destroyProgram(p);
    for (const buffer of [...b.k, ...b.v, b.pos, b.lens, b.logits, b.scratch]) this.rt.free(buffer);
    for (const buffer of Object.values(b.prefill)) this.rt.free(buffer);
    this.batch = null;
  }

  private needBatch(row: number): NonNullable<DeviceTransformer['batch']> {
    const b = this.batch;
    if (!b || row < 0 || row >= b.rows) throw new Error(`no batch row ${row} (batchCaches first)`);
    return b;
  }

  /** The batch caches as a decode step sees them: the first B rows. */
  private batchTarget(B: number): CacheTarget {
    const b = this.needBatch(B - 1);
    return {
      B,
      C: b.C,
      k: (i) => b.k[i] as GPUBuffer,
      v: (i) => b.v[i] as GPUBuffer,
      pos: b.pos,
      lens: b.lens,
    };
  }

  /** Prefills `ids` into batch row `row`; the last position's logits [vocab]. */
  async prefillRow(row: number, ids: readonly number[]): Promise<Float32Array> {
    this.prefillRowsOnDevice(row, [ids]);
    const at = row * this.Vp;
    const b = this.needBatch(row);
    const [out] = await this.rt.read([
      { buffer: b.logits, offset: at, length: this.config.vocabSize },
    ]);
    return out as Float32Array;
  }

  /** Batch row `to` takes row `from`'s first `length` positions (a prompt prefilled once). */
  copyRow(from: number, to: number, length: number): void {
    this.copyRows([{ from, to, length }], false);
  }

  /**
   * Each row `to` takes its row `from`'s first `length` positions, and (`logits`) its next
   * token's logits: a prompt prefilled once, its other rows drawing from it. One submission.
   */
  copyRows(copies: readonly { from: number; to: number; length: number }[], logits: boolean): void {
    const b = this.needBatch(Math.max(0, ...copies.flatMap((c) => [c.from, c.to])));
    const KD = this.config.kvHeads * this.config.headDim;
    const row = this.Vp * 4;
    // WebGPU copies between two buffers only: through the scratch row, in order.
    const scratch = b.scratch;
    this.rt.submit([
      (encoder: GPUCommandEncoder) => {
        for (const { from, to, length } of copies) {
          const bytes = length * KD * 4;
          for (const buffer of [...b.k, ...b.v]) {
            encoder.copyBufferToBuffer(buffer, from * b.C * KD * 4, scratch, 0, bytes);
            encoder.copyBufferToBuffer(scratch, 0, buffer, to * b.C * KD * 4, bytes);
          }
          if (logits) {
            encoder.copyBufferToBuffer(b.logits, from * row, scratch, 0, row);
            encoder.copyBufferToBuffer(scratch, 0, b.logits, to * row, row);
          }
        }
      },
    ]);
  }

  /**
   * How many prompts of T tokens one batched prefill takes: its activations' widest buffer
   * within one binding, and a few thousand positions at most.
   */
  prefillRowsPerPass(T: number): number {
    const c = this.config;
    const widest = 4 * Math.max(2 * c.intermediate, this.W, c.hidden);
    return Math.max(1, Math.floor(Math.min(this.maxBinding / widest, 4096) / T));
  }

  /**
   * Prefills prompts into batch rows first, first + 1, … in one pass (each row right-padded to
   * the longest: the padding's keys and values land past its prompt, where the row's decode
   * writes before it reads) and leaves each row's next-token logits in its batch logits row;
   * nothing is read back.
   */
  prefillRowsOnDevice(first: number, prompts: readonly (readonly number[])[]): void {
    const n = prompts.length;
    const b = this.needBatch(first + n - 1);
    const T = Math.max(...prompts.map((p) => p.length));
    if (prompts.some((p) => p.length === 0) || T > b.C)
      throw new Error(`prefillRows: prompts of 1..${b.C} tokens, not ${T}`);
    const ids = new Uint32Array(n * T);
    prompts.forEach((p, u) => {
      this.checkIds(p);
      ids.set(p, u * T);
    });
    const { prefill } = b;
    this.rt.write(prefill.ids, ids);
    this.rt.write(
      prefill.sel,
      Uint32Array.from(prompts, (p, u) => u * T + p.length - 1),
    );
    const KD = this.config.kvHeads * this.config.headDim;
    const rows = (buffer: GPUBuffer): Bindable => ({
      buffer,
      offset: first * b.C * KD,
      length: n * b.C * KD,
    });
    const target: CacheTarget = {
      B: n,
      C: b.C,
      k: (i) => rows(b.k[i] as GPUBuffer),
      v: (i) => rows(b.v[i] as GPUBuffer),
      pos: prefill.starts,
      lens: prefill.starts,
    };
    const body = this.body(T, false, target, prefill.ids);
    const D = this.config.hidden;
    const xn = (this.act as NonNullable<typeof this.act>).xn;
    const program = this.rt.program([
      ...body,
      gatherRows(xn, prefill.sel, prefill.last, n, n * T, D),
      ...this.project(n, prefill.last, this.head, prefill.logits, { cStride: this.Vp }),
    ]);
    const row = this.Vp * 4;
    this.rt.submit([
      program,
      (encoder) => encoder.copyBufferToBuffer(prefill.logits, 0, b.logits, first * row, n * row),
    ]);
    this.rt.destroyProgram(program);
  }

  /**
   * One token for each of the first ids.length batch rows, row r at position positions[r] (its
   * cache holding the positions before): every row's logits, [rows, vocab] row after row.
   */
  async decodeRows(ids: readonly number[], positions: readonly number[]): Promise<Float32Array[]> {
    const n = ids.length;
    const b = this.needBatch(n - 1);
    if (positions.length !== n || positions.some((p) => !(p >= 1 && p < b.C)))
      throw new Error(`decodeRows: positions must be 1..${b.C - 1}, one per row`);
    this.checkIds(ids);
    this.activations(n);
    let program = b.programs.get(n);
    if (!program) {
      program = this.rt.program(this.decodeSpecs(n));
      b.programs.set(n, program);
    }
    this.rt.write(this.ids, Uint32Array.from(ids));
    this.rt.write(b.pos, Uint32Array.from(positions));
    this.rt.write(
      b.lens,
      Uint32Array.from(positions, (p) => p + 1),
    );
    this.rt.submit([program]);
    const V = this.config.vocabSize;
    const [all] = await this.rt.read([{ buffer: b.logits, offset: 0, length: n * this.Vp }]);
    // Views of the one read, not copies: a decode loop reads each row once.
    return Array.from({ length: n }, (_, r) =>
      (all as Float32Array).subarray(r * this.Vp, r * this.Vp + V),
    );
  }

  private checkIds(ids: readonly number[]) {
    for (const id of ids)
      if (!Number.isInteger(id) || id < 0 || id >= this.config.vocabSize)
        throw new Error(`token id ${id} is outside the vocabulary (${this.config.vocabSize})`);
  }

  /**
   * Runs the prompt from an empty cache (batch row 0, room for contextLength positions); the last
   * position's logits [vocab]. step() then continues it.
   */
  async prefill(ids: readonly number[]): Promise<Float32Array> {
    if (ids.length === 0) throw new Error('prefill: an empty prompt');
    if (ids.length > this.contextLength)
      throw new Error(`prefill: ${ids.length} tokens exceed the context of ${this.contextLength}`);
    this.batchCaches(1, this.contextLength);
    const logits = await this.prefillRow(0, ids);
    this.length = ids.length;
    return logits;
  }

  /**
   * A decode step of the first n batch rows that the device feeds itself: each row's token and
   * position from `state` (decode.wgsl's row state, which its `pick` writes), the layers, and the
   * head into the batch's logits (rows Vp apart). Put a pick before it and replay the two.
   */
  fedDecodeSpecs(n: number, state: GPUBuffer): DispatchSpec[] {
    const b = this.needBatch(n - 1);
    const feed: DispatchSpec = {
      shader: 'decode.wgsl',
      entry: 'feed',
      bindings: [
        ['r', state],
        ['w', this.ids],
        ['w', b.pos],
        ['w', b.lens],
      ],
      uniforms: uniforms([
        ['u', n],
        ['u', 0],
        ['u', 0],
        ['u', 0],
      ]),
      workgroups: [Math.ceil(n / 64)],
      label: 'decode_feed',
    };
    return [feed, ...this.decodeSpecs(n)];
  }

  /** One position of each of the first n batch rows through the layers, the head into the batch's logits. */
  private decodeSpecs(n: number): DispatchSpec[] {
    const at = this.batchTarget(n);
    const body = this.fusedBody(n, at) ?? this.body(1, true, at);
    const xn = (this.act as NonNullable<typeof this.act>).xn;
    const logits = this.needBatch(n - 1).logits;
    return [...body, ...this.project(n, xn, this.head, logits, { cStride: this.Vp })];
  }

  /** Whether a decode step runs each layer in one dispatch (fusedBody). */
  get decodesFused(): boolean {
    const fits = this.flat && this.decodeThreads > 0 && !this.adapterHook;
    return !!fits && fusesDecode(this.config, this.rt.device);
  }

  /**
   * A decode step's body with each layer one dispatch (decode_layer.wgsl), or null where this
   * model does not take it: its weights not one flat f32 buffer, an adapter attached, RoPE over
   * a head size not a multiple of 8, or the layer's workgroup arrays past the adapter's storage.
   */
  private fusedBody(n: number, at: CacheTarget): DispatchSpec[] | null {
    const c = this.config;
    if (!this.decodesFused) return null;
    const sizes = { ...layerSizes(c), C: at.C };
    const swiglu = c.mlp === 'swiglu';
    const a = this.activations(n);
    const off = (slice: Slice | null) => slice?.offset ?? 0;
    const matrix = (m: DeviceMatrix) => off((m.parts[0] as DeviceMatrix['parts'][number]).buffer);
    const specs = this.embedSpecs(this.ids, a.x, n, { starts: at.pos, T: 1 });
    this.layers.forEach((l, i) => {
      const weights = {
        ln1: [off(l.inNorm.weight), off(l.inNorm.bias)] as [number, number],
        qkv: [matrix(l.qkv), off(l.qkvBias)] as [number, number],
        o: [matrix(l.o), off(l.oBias)] as [number, number],
        ln2: [off(l.postNorm.weight), off(l.postNorm.bias)] as [number, number],
        up: [matrix(l.gateUp), off(l.gateUpBias)] as [number, number],
        down: [matrix(l.down), off(l.downBias)] as [number, number],
        qkNorm: l.qNorm && l.kNorm ? ([off(l.qNorm), off(l.kNorm)] as [number, number]) : null,
        layerNorm: c.norm === 'layernorm',
        swiglu,
        qkvBias: l.qkvBias !== null,
        projBias: l.oBias !== null,
        fcBias: l.gateUpBias !== null,
      };
      const buffers = {
        weights: (this.flat as FlatWeights).buffer,
        x: a.x,
        k: at.k(i),
        v: at.v(i),
        pos: at.pos,
      };
      specs.push(
        decodeLayer(
          { ...sizes, B: n, eps: c.normEps },
          weights,
          buffers,
          this.table,
          this.decodeThreads,
          this.rt.dummy,
        ),
      );
    });
    specs.push(this.norm(a.x, this.finalNorm, a.xn, a.rstd, n));
    return specs;
  }

  /** The batch's logits, [rows, Vp] (batchCaches first). */
  get batchLogits(): GPUBuffer {
    return this.needBatch(0).logits;
  }

  /** One token at the next position of prefill()'s sequence, attending to its cache; its logits. */
  async step(id: number): Promise<Float32Array> {
    if (this.length === 0) throw new Error('step: prefill a prompt first');
    if (this.length >= this.contextLength)
      throw new Error(`step: the context of ${this.contextLength} positions is full`);
    const [logits] = await this.decodeRows([id], [this.length]);
    this.length++;
    return logits as Float32Array;
  }

  /** Bytes of weights on the device. */
  get weightBytes(): number {
    const mats = [this.embed, ...(this.head === this.embed ? [] : [this.head])];
    for (const l of this.layers) mats.push(l.qkv, l.o, l.gateUp, l.down);
    return mats.reduce((s, m) => s + m.rows * m.cols * (m.dtype === 'F32' ? 4 : 2), 0);
  }
}
