// The policy a role's GRPO update and sampler call on the kernels, over the one model (a
// DeviceTransformer, any config: the Llama family's or GPT-2's switches), training one of:
// LoRA's adapters over the frozen model (loraAdapters.ts: their layout in one flat buffer with
// their gradients and AdamW's moments, their products at each site), or the model's own
// weights (deviceWeights.ts: a trainable model's flat f32 buffer and each weight's gradient),
// or nothing (a KL reference's log-probs). A batch runs as rows of T positions (packedBatch.ts:
// a sequence a row, right-padded, or a GRPO group's shared prompt once with its completions
// after it). The forward is the model's own (DeviceTransformer.layerForward, as sampling runs it),
// each layer's activations kept in buffers of their own; the backward goes from a per-token
// gradient on the log-probs of the next tokens (GRPO's dlogp) through head_logprob.wgsl, the
// head and every layer — the norm's dx (RMSNorm or LayerNorm), the activation's backward
// (SwiGLU, or GELU after fc's adapter), GQA attention backward, RoPE's inverse, Qwen3's q/k
// norm, input gradients through the weights (16-bit: matmul v6_b16t) — to the trained
// parameters' gradients, all in one submission; then their guarded AdamW step.
import type { DeviceMatrix, DeviceNorm } from './deviceCheckpoint';
import type {
  AdapterSite,
  DeviceTransformer,
  LayerBuffers,
  LayerPasses,
} from './deviceTransformer';
import { DeviceWeights, type NamedTensors } from './deviceWeights';
import type { FlatAdam } from './flatAdam';
import { type AdamWOptions, type Adapters, DeviceAdapters, type LoraShape } from './loraAdapters';
import {
  attentionBackward,
  attentionForward,
  gatherRows,
  geluBackward,
  headLogprobBackward,
  headLogprobForward,
  layerNormBackwardDx,
  MM_ACCUMULATE,
  matmul,
  matmul16T,
  rmsNormBackward,
  rope,
  scatterRows,
  swigluBackward,
} from './ops';
import {
  headGradient,
  logProbsOf,
  type PackedPart,
  packBatch,
  type TokenBatch,
} from './packedBatch';
import type { Bindable, DispatchSpec, GpuRuntime, Slice } from './runtime';

export {
  type AdamWOptions,
  type Adapters,
  type AdapterTensors,
  adapterKey,
  LORA_TARGETS,
  type LoraShape,
  type LoraTarget,
} from './loraAdapters';

type Acts = ReturnType<DevicePolicy['allocate']>;

/** Per sequence [len − 1]: the log-probs of its next tokens and its distributions' entropies. */
interface HeadStats {
  logp: Float32Array[];
  entropy: Float32Array[];
}

/** A list of dispatches and buffer copies / clears, submitted at once. */
class Seq {
  readonly parts: (DispatchSpec[] | ((e: GPUCommandEncoder) => void))[] = [];
  run(...specs: DispatchSpec[]) {
    const last = this.parts[this.parts.length - 1];
    if (Array.isArray(last)) last.push(...specs);
    else this.parts.push([...specs]);
  }
  copy(from: GPUBuffer, to: GPUBuffer, floats: number) {
    this.parts.push((e) => e.copyBufferToBuffer(from, 0, to, 0, floats * 4));
  }
  /** Floats from one offset to another (in floats). */
  copyAt(from: GPUBuffer, fromAt: number, to: GPUBuffer, toAt: number, floats: number) {
    this.parts.push((e) => e.copyBufferToBuffer(from, fromAt * 4, to, toAt * 4, floats * 4));
  }
  clear(buffer: GPUBuffer) {
    this.parts.push((e) => e.clearBuffer(buffer));
  }
  submit(rt: GpuRuntime) {
    const built = this.parts.map((p) => (Array.isArray(p) ? rt.program(p) : p));
    rt.submit(built);
    for (const p of built) if (typeof p !== 'function') rt.destroyProgram(p);
  }
}

/**
 * The policy the GRPO trainer calls on the kernels: log-probs of a batch, the adapters'
 * gradients for a dlogp, an AdamW step, adapters in and out in PEFT's shapes.
 */
export class DevicePolicy {
  /** LoRA's adapters: their layout, products, import and export, AdamW (loraAdapters.ts). */
  readonly adapters: DeviceAdapters | null;
  /** The model's own weights, trained in full (deviceWeights.ts): no adapters, a trainable model. */
  readonly weights: DeviceWeights | null;
  private acts: Acts | null = null;
  private actsKey = '';

  /** The adapters' shape (null: no adapters). */
  readonly lora: LoraShape | null;

  /**
   * `trains`: LoRA adapters of this shape over the frozen model; 'weights': the model's own
   * (a trainable DeviceTransformer); 'nothing': log-probs only (a KL reference).
   */
  constructor(
    private readonly rt: GpuRuntime,
    readonly model: DeviceTransformer,
    trains: LoraShape | 'weights' | 'nothing',
    adapters?: Adapters,
    seed = 1,
  ) {
    this.lora = typeof trains === 'object' ? trains : null;
    this.adapters = this.lora ? new DeviceAdapters(rt, model, this.lora, adapters, seed) : null;
    this.weights = trains === 'weights' ? new DeviceWeights(rt, model) : null;
    const rowBytes = 4 * model.Vp;
    const limit = rt.device.limits.maxStorageBufferBindingSize;
    this.logitsRows = Math.max(64, Math.floor(limit / rowBytes / 64) * 64);
  }

  /** The parameters this policy trains (their gradients, Adam). */
  private get trained(): FlatAdam {
    const t = this.adapters ?? this.weights;
    if (!t) throw new Error('this policy trains nothing (a frozen reference)');
    return t;
  }

  /** The adapters, where the policy has them. */
  private get lo(): DeviceAdapters {
    if (!this.adapters) throw new Error('this policy holds no LoRA adapters');
    return this.adapters;
  }

  get scale(): number {
    return this.lo.scale;
  }

  /** Floats of the trained parameters (and of their gradients, and of each moment). */
  get size(): number {
    return this.trained.size;
  }

  /** AdamW steps taken. */
  get steps(): number {
    return this.trained.steps;
  }

  /** PEFT's start: A ~ U(±1/√in) (kaiming_uniform with a = √5), B = 0 (the base's outputs). */
  initialAdapters(seed: number): Adapters {
    return this.lo.initialAdapters(seed);
  }

  /** Writes adapters (every slot must be given, in PEFT's shapes); resets nothing else. */
  importAdapters(adapters: Adapters): void {
    this.lo.importAdapters(adapters);
  }

  exportAdapters(): Promise<Adapters> {
    return this.lo.exportAdapters();
  }

  /** AdamW's first and second moments in PEFT's shapes, and the steps taken (a snapshot's). */
  exportMoments(): Promise<{ m: Adapters; v: Adapters; steps: number }> {
    return this.lo.exportMoments();
  }

  /** Restores exportMoments' state (a resumed run's Adam continues where it stopped). */
  importMoments(m: Adapters, v: Adapters, steps: number): void {
    this.lo.importMoments(m, v, steps);
  }

  /**
   * One AdamW step over the trained parameters from the gradients on the device (guarded: a
   * non-finite gradient skips it); returns the gradients' global norm and whether it was taken.
   */
  applyAdamW(o: AdamWOptions): Promise<{ gradNorm: number; ok: boolean }> {
    return this.trained.applyAdamW(o);
  }

  /**
   * Activations for B rows of T positions, kept for the backward; reused while the shape holds.
   * `buffer` makes each one (activationFloatsPerRow passes a counter instead).
   */
  private allocate(
    B: number,
    T: number,
    buffer: (floats: number, label: string) => GPUBuffer = (floats, label) =>
      this.rt.buffer(floats, label),
  ) {
    const rt = { buffer, device: this.rt.device };
    const c = this.model.config;
    const R = B * T;
    const { hidden: D, intermediate: I, heads: H, headDim: hd } = c;
    const W = this.model.W;
    const r = this.lora?.rank ?? 0;
    const L = Math.min(R, this.logitsRows);
    const layers = Array.from({ length: c.layers }, (_, l) => l);
    // RMSNorm keeps rstd per row; LayerNorm its mean and rstd.
    const stats = c.norm === 'layernorm' ? 2 : 1;
    return {
      B,
      T,
      R,
      ids: rt.buffer(R, 'ids'),
      targets: rt.buffer(R, 'targets'),
      positions: rt.buffer(R, 'positions'),
      // attention.wgsl's segments [lo per position | pre per row] where prompts are shared.
      segments: rt.buffer(R + B, 'segments'),
      shared: false,
      g: rt.buffer(R, 'dlogp'),
      xs: Array.from({ length: c.layers + 1 }, (_, l) => rt.buffer(R * D, `x ${l}`)),
      layers: layers.map((l) => ({
        xn1: rt.buffer(R * D, `xn1 ${l}`),
        rstd1: rt.buffer(R * stats, `norm stats 1 ${l}`),
        qkvPre: c.qkNorm ? rt.buffer(R * W, `qkv pre-norm ${l}`) : null,
        qRstd: rt.buffer(R * H, `q rstd ${l}`),
        kRstd: rt.buffer(R * c.kvHeads, `k rstd ${l}`),
        qkv: rt.buffer(R * W, `qkv ${l}`),
        att: rt.buffer(R * H * hd, `att ${l}`),
        lse: rt.buffer(R * H, `lse ${l}`),
        xMid: rt.buffer(R * D, `x mid ${l}`),
        xn2: rt.buffer(R * D, `xn2 ${l}`),
        rstd2: rt.buffer(R * stats, `norm stats 2 ${l}`),
        gu: rt.buffer(R * 2 * I, `gate|up ${l}`),
        hm: rt.buffer(R * I, `mlp ${l}`),
      })),
      u: new Map(
        [...(this.adapters?.sites.values() ?? [])].map((s) => [
          s.key,
          rt.buffer(R * s.slots.length * r, `u ${s.key}`),
        ]),
      ),
      xnF: rt.buffer(R * D, 'xn final'),
      rstdF: rt.buffer(R * stats, 'norm stats final'),
      // The head's rows (scored positions, in order): R while every position is scored; else
      // their indices (gather), each row's place among them (scatter), and their xn and dxn.
      headRows: R,
      scored: new Uint32Array(0) as Uint32Array,
      sel: rt.buffer(R, 'scored rows'),
      inv: rt.buffer(R, 'row → scored'),
      xnS: rt.buffer(R * D, 'xn of scored rows'),
      dxnS: rt.buffer(R * D, 'dxn of scored rows'),
      // The head's logits for L of the R rows at a time (L = R where they fit one binding).
      logitsRows: L,
      logits: rt.buffer(L * this.model.Vp, 'logits'),
      headStats: rt.buffer(3 * R, 'logp|entropy|lse'),
      chunkStats: L < R ? rt.buffer(3 * L, 'logp|entropy|lse of a chunk') : null,
      dx: rt.buffer(R * D, 'dx'),
      dxn: rt.buffer(R * D, 'dxn'),
      datt: rt.buffer(R * H * hd, 'datt'),
      dqkv: rt.buffer(R * W, 'dqkv'),
      dqkvPre: c.qkNorm ? rt.buffer(R * W, 'dqkv pre-norm') : null,
      dsum: rt.buffer(R * H, 'dsum'),
      dgu: rt.buffer(R * 2 * I, 'dgate|up'),
      dhm: rt.buffer(R * I, 'dmlp'),
      du: r > 0 ? rt.buffer(R * 3 * r, 'du') : null,
    };
  }

  /**
   * The most rows of logits held at once: the device's binding limit over a row's bytes, in
   * steps of 64 rows (a chunk's offsets stay 256-byte aligned). Past it the head runs in row
   * chunks, recomputing a chunk's logits for the backward. Settable (tests force chunks).
   */
  logitsRows: number;

  private floatsPerRow = 0;

  /**
   * Floats of activations one position (a row of B·T) holds: every buffer is linear in rows.
   * Counted once, by allocating one row with a counter in place of buffers.
   */
  activationFloatsPerRow(): number {
    if (this.floatsPerRow === 0)
      this.allocate(1, 1, (n) => {
        this.floatsPerRow += n;
        return this.rt.dummy.r as unknown as GPUBuffer;
      });
    return this.floatsPerRow;
  }

  /**
   * The most positions (B·T) a micro-batch of the update may hold: its activations within
   * `budgetBytes`, and each of its buffers within the device's binding limit (the logits' rows
   * are the widest). At least `atLeast` (one sequence must fit).
   */
  rowsPerMicroBatch(budgetBytes: number, atLeast: number): number {
    const c = this.model.config;
    // The logits go in row chunks (logitsRows): the widest other buffer bounds a micro-batch.
    const widest = Math.max(2 * c.intermediate, this.model.W, c.hidden);
    const byLimit = Math.floor(this.rt.device.limits.maxStorageBufferBindingSize / (4 * widest));
    const byBudget = Math.floor(budgetBytes / (4 * this.activationFloatsPerRow()));
    return Math.max(atLeast, Math.min(byLimit, byBudget));
  }

  private activations(B: number, T: number): Acts {
    const key = `${B}×${T}`;
    if (this.acts && this.actsKey === key) return this.acts;
    this.freeActivations();
    const { value, buffers } = this.rt.collect(() => this.allocate(B, T));
    this.actBuffers = buffers;
    this.acts = value;
    this.actsKey = key;
    return value;
  }

  private actBuffers: GPUBuffer[] = [];

  /** Frees the activations (the next call allocates them again). */
  freeActivations(): void {
    for (const b of this.actBuffers) this.rt.free(b);
    this.actBuffers = [];
    this.acts = null;
    this.actsKey = '';
  }

  private scratch: GPUBuffer | null = null;

  /**
   * The model's prefill and decode steps (sampling) run with these adapters from now on;
   * detach() returns it to the base.
   */
  attach(): void {
    const adapters = this.adapters;
    if (!adapters || !this.lora) return; // the model's own weights: nothing to attach
    // u for a site of up to three adapters, as many rows as a call may run.
    this.scratch ??= this.rt.buffer(
      this.model.contextLength * 3 * this.lora.rank,
      'lora u (sampling)',
    );
    const u = this.scratch;
    this.model.setAdapterHook((rows, layer, site, x, y) =>
      adapters.forwardSpecs(rows, layer, site, x, y, () => u),
    );
  }

  detach(): void {
    this.model.setAdapterHook(null);
  }

  /** dx [M, m.cols] (+)= dy·W over W's row ranges (dy's rows dyStride floats apart). */
  private projectT(
    M: number,
    dy: GPUBuffer,
    dyStride: number,
    m: DeviceMatrix,
    dx: Bindable,
  ): DispatchSpec[] {
    return m.parts.map((part, i) => {
      const a = { buffer: dy, offset: part.row0 };
      if (m.dtype === 'F32')
        return matmul({
          M,
          N: m.cols,
          K: part.rows,
          a,
          aStride: [dyStride, 1],
          b: part.buffer,
          c: dx,
          flags: i > 0 ? MM_ACCUMULATE : 0,
          version: this.model.matmul,
          dummy: this.rt.dummy,
        });
      return matmul16T({
        M,
        N: m.cols,
        K: part.rows,
        a,
        aStride: dyStride,
        w: part.buffer,
        dtype: m.dtype,
        c: dx,
        accumulate: i > 0,
        dummy: this.rt.dummy,
      });
    });
  }

  /** Uploads a part's ids, positions, segments, scored rows, their targets and dlogp. */
  private upload(batch: TokenBatch, part: PackedPart, dlogp?: readonly ArrayLike<number>[]): Acts {
    const c = this.model.config;
    const { B, T } = part;
    if (T < 2) throw new Error('every batch needs a sequence of at least 2 tokens');
    // The part's own sequences (a micro-batch checks its share, not the whole batch again).
    for (const { sequence } of part.runs) {
      const seq = batch.sequences[sequence] as readonly number[];
      if (seq.length > this.model.contextLength)
        throw new Error(
          `a sequence of ${seq.length} tokens exceeds the context of ${this.model.contextLength}`,
        );
      for (const id of seq)
        if (!Number.isInteger(id) || id < 0 || id >= c.vocabSize)
          throw new Error(`token id ${id} is outside the vocabulary (${c.vocabSize})`);
    }
    const a = this.activations(B, T);
    // Without scoredFrom the head runs on every row of the padded batch, as it always has.
    a.scored = part.scored ?? new Uint32Array(0);
    a.headRows = part.scored ? part.scored.length : a.R;
    if (a.headRows < a.R) {
      const inv = new Uint32Array(a.R).fill(a.R);
      a.scored.forEach((row, i) => {
        inv[row] = i;
      });
      this.rt.write(a.sel, a.scored);
      this.rt.write(a.inv, inv);
    }
    a.shared = part.segments !== null;
    if (part.segments) this.rt.write(a.segments, part.segments);
    this.rt.write(a.g, headGradient(batch, part, dlogp));
    this.rt.write(a.ids, part.ids);
    this.rt.write(a.positions, part.positions);
    this.rt.write(
      a.targets,
      part.scored ? part.scored.map((r) => part.targets[r] as number) : part.targets,
    );
    return a;
  }

  /**
   * The norm's input gradient: dx (+)= ∂/∂x from dy; and its weight's and bias's where the
   * model's own weights are trained.
   */
  private normBackward(
    x: GPUBuffer,
    n: DeviceNorm,
    dy: GPUBuffer,
    stats: GPUBuffer,
    dx: GPUBuffer,
    R: number,
    accumulate: boolean,
  ): DispatchSpec[] {
    const D = this.model.config.hidden;
    const params = this.weights ? [this.weights.normGrads(x, n, dy, stats, R)] : [];
    if (n.bias)
      return [layerNormBackwardDx(x, n.weight, dy, stats, dx, R, D, accumulate), ...params];
    const dummy = this.rt.dummy;
    return [
      rmsNormBackward(x, n.weight, dy, stats, dx, dummy.w, R, D, accumulate)[0] as DispatchSpec,
      ...params,
    ];
  }

  /**
   * What the backward gives the trained parameters at a projection (W [rows, ·], dy [R, rows],
   * its input x): the adapters' gradients (dx += their path's), or W's and its bias's own.
   */
  private trainedBackward(
    seq: Seq,
    a: Acts,
    layer: number,
    site: AdapterSite,
    x: GPUBuffer,
    dy: GPUBuffer,
    dx: GPUBuffer,
    m: DeviceMatrix,
    bias: Slice | null,
  ) {
    if (this.adapters) {
      const u = (s: { key: string }) => a.u.get(s.key) as GPUBuffer;
      const du = a.du as GPUBuffer;
      seq.run(...this.adapters.backwardSpecs(a.R, layer, site, x, dy, dx, u, du));
    }
    if (this.weights) seq.run(...this.weights.projectionGrads(a.R, dy, x, m, bias));
  }

  private forward(seq: Seq, a: Acts, invTemp: number) {
    const model = this.model;
    const c = model.config;
    const { hidden: D, heads: H, kvHeads: kvH, headDim: hd } = c;
    const { R, B, T } = a;
    // Learned positions: each row's place in its sequence (a shared row's segments restart).
    seq.run(...model.embedSpecs(a.ids, a.xs[0] as GPUBuffer, R, { rows: a.positions }));
    const passes: LayerPasses = {
      adapt: (l, site, x, y) =>
        this.adapters?.forwardSpecs(R, l, site, x, y, (s) => a.u.get(s.key) as GPUBuffer) ?? [],
      // Each position's angle from its place in its sequence (a shared row's segments restart).
      rope: (qkv) =>
        rope({ R, T: 1, H, kvH, hd }, model.table as GPUBuffer, qkv, a.positions, this.rt.dummy),
      attend: (_, qkv, att, lse) => [
        attentionForward({ B, T, H, hd, kvH }, qkv, att, lse, this.segmentsOf(a)),
      ],
      // The backward reads fc's pre-activation.
      geluApart: true,
    };
    model.layers.forEach((_, l) => {
      const s = a.layers[l] as Acts['layers'][number];
      const buffers: LayerBuffers = {
        ...{ x: a.xs[l] as GPUBuffer, mid: s.xMid, out: a.xs[l + 1] as GPUBuffer },
        ...{ xn1: s.xn1, stats1: s.rstd1, qkvPre: s.qkvPre, qkv: s.qkv, qStats: s.qRstd },
        ...{ kStats: s.kRstd, att: s.att, lse: s.lse, xn2: s.xn2, stats2: s.rstd2 },
        ...{ gu: s.gu, hm: s.hm },
      };
      model.layerForward(seq, l, R, buffers, passes);
    });
    const last = a.xs[c.layers] as GPUBuffer;
    seq.run(model.norm(last, model.finalNorm, a.xnF, a.rstdF, R));
    const S = a.headRows;
    if (S < R) seq.run(gatherRows(a.xnF, a.sel, a.xnS, S, R, D));
    // In row chunks of logitsRows where the logits would pass the binding limit (one chunk
    // otherwise, its stats straight into the batch's).
    for (let r0 = 0; r0 < S; r0 += a.logitsRows) {
      const n = Math.min(a.logitsRows, S - r0);
      this.headChunk(seq, a, invTemp, r0, n);
      // The chunk's [logp | entropy | lse] into the batch's, each at its rows.
      if (n < S)
        for (let k = 0; k < 3; k++)
          seq.copyAt(a.chunkStats as GPUBuffer, k * n, a.headStats, k * S + r0, n);
    }
  }

  private segmentsOf(a: Acts): GPUBuffer | undefined {
    return a.shared ? a.segments : undefined;
  }

  /** The head's input rows: every position's final xn, or the scored ones gathered. */
  private headInput(a: Acts): GPUBuffer {
    return a.headRows < a.R ? a.xnS : a.xnF;
  }

  /**
   * Rows r0..r0+n of the head: their logits, then their log-probs into headChunkStats (the
   * batch's own stats when the chunk is every head row).
   */
  private headChunk(seq: Seq, a: Acts, invTemp: number, r0: number, n: number) {
    const model = this.model;
    const c = model.config;
    const xn = { buffer: this.headInput(a), offset: r0 * c.hidden };
    seq.run(
      ...model.project(n, xn, model.head, a.logits, { cStride: model.Vp }),
      headLogprobForward(
        a.logits,
        { buffer: a.targets, offset: r0 },
        this.headChunkStats(a, n),
        n,
        c.vocabSize,
        invTemp,
        model.Vp,
      ),
    );
  }

  private headChunkStats(a: Acts, n: number): GPUBuffer {
    return n < a.headRows ? (a.chunkStats as GPUBuffer) : a.headStats;
  }

  private backward(seq: Seq, a: Acts, invTemp: number, clearGradients = true) {
    const model = this.model;
    const c = model.config;
    const { hidden: D, intermediate: I, heads: H, kvHeads: kvH, headDim: hd } = c;
    const { R, B, T } = a;
    const W = model.W;
    const dummy = this.rt.dummy;
    // q/k norms: their input gradient, and their weights' where the model's own are trained.
    const dxOnly = (specs: DispatchSpec[]) => (this.weights ? specs : [specs[0] as DispatchSpec]);
    const dwOf = (weight: Slice) => (this.weights ? this.weights.gradOf(weight) : dummy.w);
    // Every adapter gradient below adds to the adapters' gradients: a micro-batch after the
    // first adds on.
    if (clearGradients) seq.clear(this.trained.grads);
    const S = a.headRows;
    // The head's rows' dxn: every position's, or the scored ones', scattered after (zero rows
    // for the others).
    const dxnHead = S < R ? a.dxnS : a.dxn;
    // Chunk by chunk as the forward ran them; a chunk short of every head row computes its
    // logits again (one chunk's are still there).
    for (let r0 = 0; r0 < S; r0 += a.logitsRows) {
      const n = Math.min(a.logitsRows, S - r0);
      if (n < S) this.headChunk(seq, a, invTemp, r0, n);
      seq.run(
        headLogprobBackward(
          { buffer: a.targets, offset: r0 },
          { buffer: a.g, offset: r0 },
          this.headChunkStats(a, n),
          a.logits,
          n,
          c.vocabSize,
          invTemp,
          model.Vp,
        ),
        ...this.projectT(n, a.logits, model.Vp, model.head, { buffer: dxnHead, offset: r0 * D }),
      );
      // The head's (the embedding's where tied) from the chunk's dlogits and its rows' xn.
      if (this.weights)
        seq.run(
          this.weights.matrixGrad(
            n,
            a.logits,
            model.Vp,
            { buffer: this.headInput(a), offset: r0 * D },
            model.head,
          ),
        );
    }
    if (S < R) seq.run(scatterRows(a.dxnS, a.inv, a.dxn, S, R, D));
    seq.run(
      ...this.normBackward(
        a.xs[c.layers] as GPUBuffer,
        model.finalNorm,
        a.dxn,
        a.rstdF,
        a.dx,
        R,
        false,
      ),
    );
    for (let l = c.layers - 1; l >= 0; l--) {
      const w = model.layers[l] as DeviceTransformer['layers'][number];
      const s = a.layers[l] as Acts['layers'][number];
      // MLP: x_{l+1} = xMid + down(act(gateUp(norm(xMid)))), act SwiGLU or GELU.
      seq.run(...this.projectT(R, a.dx, D, w.down, a.dhm));
      this.trainedBackward(seq, a, l, 'down', s.hm, a.dx, a.dhm, w.down, w.downBias);
      seq.run(
        c.mlp === 'swiglu'
          ? swigluBackward(s.gu, a.dhm, a.dgu, R, I)
          : geluBackward(s.gu, a.dhm, a.dgu, R * I),
      );
      seq.run(...this.projectT(R, a.dgu, w.gateUp.rows, w.gateUp, a.dxn));
      this.trainedBackward(seq, a, l, 'gateUp', s.xn2, a.dgu, a.dxn, w.gateUp, w.gateUpBias);
      seq.run(...this.normBackward(s.xMid, w.postNorm, a.dxn, s.rstd2, a.dx, R, true));
      // Attention: xMid = x_l + o(attention(RoPE(norm_qk(qkv(RMSNorm(x_l)))))).
      seq.run(...this.projectT(R, a.dx, D, w.o, a.datt));
      this.trainedBackward(seq, a, l, 'o', s.att, a.dx, a.datt, w.o, w.oBias);
      seq.run(
        ...attentionBackward(
          { B, T, H, hd, kvH },
          s.qkv,
          s.att,
          a.datt,
          s.lse,
          a.dqkv,
          a.dsum,
          this.segmentsOf(a),
        ),
      );
      if (model.table)
        seq.run(rope({ R, T: 1, H, kvH, hd }, model.table, a.dqkv, a.positions, dummy, true));
      let dPre = a.dqkv;
      if (s.qkvPre && a.dqkvPre && w.qNorm && w.kNorm) {
        seq.copy(a.dqkv, a.dqkvPre, R * W);
        seq.run(
          ...dxOnly(
            rmsNormBackward(
              s.qkvPre,
              w.qNorm,
              a.dqkv,
              s.qRstd,
              a.dqkvPre,
              dwOf(w.qNorm),
              R * H,
              hd,
              false,
              {
                group: H,
                stride: W,
              },
            ),
          ),
          ...dxOnly(
            rmsNormBackward(
              s.qkvPre,
              w.kNorm,
              a.dqkv,
              s.kRstd,
              a.dqkvPre,
              dwOf(w.kNorm),
              R * kvH,
              hd,
              false,
              {
                group: kvH,
                stride: W,
                off: H * hd,
              },
            ),
          ),
        );
        dPre = a.dqkvPre;
      }
      seq.run(...this.projectT(R, dPre, W, w.qkv, a.dxn));
      this.trainedBackward(seq, a, l, 'qkv', s.xn1, dPre, a.dxn, w.qkv, w.qkvBias);
      seq.run(...this.normBackward(a.xs[l] as GPUBuffer, w.inNorm, a.dxn, s.rstd1, a.dx, R, true));
    }
    // The embedding's rows (and learned positions') from the first layer's input gradient.
    if (this.weights) seq.run(...this.weights.embeddingGrads(a.ids, a.dx, a.positions, R));
  }

  /**
   * The head's log-probs of the part on the device and the entropies of its distributions
   * ([logp | entropy | lse]), in its scored order (every row's without).
   */
  private async readHeadStats(a: Acts): Promise<{ logp: Float32Array; entropy: Float32Array }> {
    const S = a.headRows;
    const [logp, entropy] = await this.rt.read([
      { buffer: a.headStats, offset: 0, length: S },
      { buffer: a.headStats, offset: S, length: S },
    ]);
    return { logp: logp as Float32Array, entropy: entropy as Float32Array };
  }

  /**
   * Per sequence, the log-probs of its next tokens [len − 1], with the adapters applied; in
   * micro-batches of at most maxRows positions (at least one row each), as step() takes them.
   */
  logProbs(batch: TokenBatch, maxRows = Number.POSITIVE_INFINITY): Promise<Float32Array[]> {
    return this.partsHeadStats(batch, packBatch(batch, maxRows)).then((stats) => stats.logp);
  }

  /** Per sequence, its log-probs and its distributions' entropies, part by part. */
  private async partsHeadStats(batch: TokenBatch, parts: PackedPart[]): Promise<HeadStats> {
    const heads: { logp: Float32Array; entropy: Float32Array }[] = [];
    for (const part of parts) heads.push((await this.forwardPass(batch, part)).head);
    return {
      logp: logProbsOf(
        batch,
        parts,
        heads.map((h) => h.logp),
      ),
      entropy: logProbsOf(
        batch,
        parts,
        heads.map((h) => h.entropy),
      ),
    };
  }

  /** The forward over a part, its activations kept for a backward, and its head's stats. */
  private async forwardPass(batch: TokenBatch, part: PackedPart) {
    const a = this.upload(batch, part);
    const invTemp = 1 / (batch.temperature ?? 1);
    const seq = new Seq();
    this.forward(seq, a, invTemp);
    seq.submit(this.rt);
    return { a, invTemp, head: await this.readHeadStats(a) };
  }

  /**
   * Forward and backward of Σ dlogp·logp: the adapters' gradients stay on the device (for
   * step()); returns the forward's log-probs.
   */
  async backwardOnDevice(
    batch: TokenBatch,
    dlogp: readonly ArrayLike<number>[],
  ): Promise<Float32Array[]> {
    const parts = packBatch(batch);
    return logProbsOf(batch, parts, await this.forwardBackward(batch, parts, dlogp, true));
  }

  /**
   * Each part's forward and backward, submitted part by part, the adapters' gradients summed on
   * the device; with `read`, each part's head log-probs read back after it.
   */
  private async forwardBackward(
    batch: TokenBatch,
    parts: PackedPart[],
    dlogp: readonly ArrayLike<number>[],
    read: boolean,
  ): Promise<Float32Array[]> {
    const invTemp = 1 / (batch.temperature ?? 1);
    const values: Float32Array[] = [];
    for (const [p, part] of parts.entries()) {
      const a = this.upload(batch, part, dlogp);
      const seq = new Seq();
      this.forward(seq, a, invTemp);
      this.backward(seq, a, invTemp, p === 0);
      seq.submit(this.rt);
      if (read) values.push((await this.readHeadStats(a)).logp);
    }
    return values;
  }

  /**
   * What backwardOnDevice submits, uploaded but not run: dispatches and the encoder commands
   * between them (benches time each dispatch alone).
   */
  trainingParts(
    batch: TokenBatch,
    dlogp: readonly ArrayLike<number>[],
  ): (DispatchSpec[] | ((e: GPUCommandEncoder) => void))[] {
    const a = this.upload(batch, packBatch(batch)[0] as PackedPart, dlogp);
    const invTemp = 1 / (batch.temperature ?? 1);
    const seq = new Seq();
    this.forward(seq, a, invTemp);
    this.backward(seq, a, invTemp);
    return seq.parts;
  }

  /** The gradients of Σ_b Σ_t dlogp[b][t]·logp[b][t] for every adapter, PEFT's shapes. */
  async adapterGradients(
    batch: TokenBatch,
    dlogp: readonly ArrayLike<number>[],
  ): Promise<{ logp: Float32Array[]; grads: Adapters }> {
    const logp = await this.backwardOnDevice(batch, dlogp);
    return { logp, grads: await this.lo.unpack(this.lo.grads) };
  }

  /** The gradients of Σ dlogp·logp for every weight of the model (trained in full), by name. */
  async weightGradients(
    batch: TokenBatch,
    dlogp: readonly ArrayLike<number>[],
  ): Promise<{ logp: Float32Array[]; grads: NamedTensors }> {
    const weights = this.weights;
    if (!weights) throw new Error('this policy does not train the model’s own weights');
    const logp = await this.backwardOnDevice(batch, dlogp);
    return { logp, grads: await weights.unpack(weights.grads) };
  }

  /**
   * A training step: log-probs (and entropies, for the metrics), the host's loss and its dlogp
   * (e.g. GRPO's), the backward, AdamW. One forward: its activations stay on the device while
   * the host computes the loss, and the backward starts from them (the same numbers as a second
   * forward would give).
   */
  async step(
    batch: TokenBatch,
    lossFn: (
      logp: Float32Array[],
      entropy: Float32Array[],
    ) => { loss: number; dlogp: ArrayLike<number>[] },
    o: AdamWOptions,
    maxRows = Number.POSITIVE_INFINITY,
  ): Promise<{ loss: number; gradNorm: number; ok: boolean; microBatches: number }> {
    const parts = packBatch(batch, maxRows);
    if (parts.length === 1) {
      const part = parts[0] as PackedPart;
      const { a, invTemp, head } = await this.forwardPass(batch, part);
      const { loss, dlogp } = lossFn(
        logProbsOf(batch, parts, [head.logp]),
        logProbsOf(batch, parts, [head.entropy]),
      );
      this.rt.write(a.g, headGradient(batch, part, dlogp));
      this.rt.write(this.trained.loss, Float32Array.from([loss]));
      const backward = new Seq();
      this.backward(backward, a, invTemp);
      backward.submit(this.rt);
      return { loss, ...(await this.applyAdamW(o)), microBatches: 1 };
    }
    // Micro-batches (packBatch's parts, all as wide as the longest row): every part's log-probs
    // first, then the loss over all of them on the host, then each part's forward again and its
    // backward, the gradients summed on the device.
    const stats = await this.partsHeadStats(batch, parts);
    const { loss, dlogp } = lossFn(stats.logp, stats.entropy);
    this.rt.write(this.trained.loss, Float32Array.from([loss]));
    await this.forwardBackward(batch, parts, dlogp, false);
    return { loss, ...(await this.applyAdamW(o)), microBatches: parts.length };
  }

  /** Frees the adapters, their moments and the activations (the base stays, detached). */
  free(): void {
    this.detach();
    this.freeActivations();
    if (this.scratch) this.rt.free(this.scratch);
    this.adapters?.free();
    this.weights?.free();
  }
}
