// LoRA adapters over a frozen 16-bit Llama-family base on the kernels (DeviceLlama's weights):
// y = W·x + s·B·(A·x), s = alpha / r (rsLoRA: alpha / √r), on q/k/v/o and gate/up/down, A and B
// f32 (PEFT's shapes: A [r, in], B [out, r]) in one flat buffer with their gradients and AdamW
// moments, the adapters that share an input (q|k|v, gate|up) stacked to run as one site. A
// batch runs as rows of T positions (packedBatch.ts: a sequence a row, right-padded, or a GRPO
// group's shared prompt once with its completions after it). The forward keeps every layer's
// activations; the backward goes from a per-token gradient on the log-probs of the next tokens
// (GRPO's dlogp) through head_logprob.wgsl, the head and every layer — RMSNorm dx, SwiGLU
// backward, GQA attention backward, RoPE's inverse, Qwen3's q/k norm, 16-bit input gradients
// (matmul v6_b16t) — to the adapters' gradients only (the base gets none), all in one
// submission; then a guarded AdamW step (adamw.wgsl) over the adapters.
import { Rng } from '../../tasks/random';
import type { AdapterSite, DeviceLlama, DeviceMatrix } from './deviceLlama';
import {
  type AdamWStep,
  adamw,
  adamwUniforms,
  attentionBackward,
  attentionForward,
  gatherRows,
  headLogprobBackward,
  headLogprobForward,
  MM_ACCUMULATE,
  matmul,
  NORM_PARTIALS,
  scatterRows,
} from './ops';
import {
  embeddingLookup,
  matmul16T,
  rmsNormBackward,
  rmsNormForward,
  rope,
  swigluBackward,
  swigluForward,
} from './opsLlama';
import { type LoraColumns, loraGradB, loraGradU, loraUp } from './opsLora';
import {
  headGradient,
  logProbsOf,
  type PackedPart,
  packBatch,
  type TokenBatch,
} from './packedBatch';
import { ALIGN_FLOATS, type Bindable, type DispatchSpec, type GpuRuntime } from './runtime';

export const LORA_TARGETS = [
  'q_proj',
  'k_proj',
  'v_proj',
  'o_proj',
  'gate_proj',
  'up_proj',
  'down_proj',
] as const;
export type LoraTarget = (typeof LORA_TARGETS)[number];

export interface LoraShape {
  rank: number;
  alpha: number;
  targets: readonly LoraTarget[];
  /** rsLoRA's scale alpha / √r instead of alpha / r. */
  rslora?: boolean;
}

/** One adapter's tensors in PEFT's shapes: A [r, in], B [out, r], row-major. */
export interface AdapterTensors {
  A: Float32Array;
  B: Float32Array;
}

/** Adapters by `${layer}.${target}` (adapterKey). */
export type Adapters = Map<string, AdapterTensors>;

export const adapterKey = (layer: number, target: LoraTarget) => `${layer}.${target}`;

export interface AdamWOptions {
  lr: number;
  beta1?: number;
  beta2?: number;
  eps?: number;
  weightDecay?: number;
  /** Global-norm clipping (0: none). */
  maxGradNorm?: number;
}

/** Where an adapter's output columns lie in the frozen projection's output rows. */
interface Geometry {
  inDim: number;
  outDim: number;
  rowStride: number;
  offset: number;
}

interface Slot extends Geometry {
  key: string;
  layer: number;
  target: LoraTarget;
  aOff: number;
  bOff: number;
}

/** The targets that share an input, in the order their columns lie in its output rows. */
const SITE_TARGETS: Record<AdapterSite, readonly LoraTarget[]> = {
  qkv: ['q_proj', 'k_proj', 'v_proj'],
  o: ['o_proj'],
  gateUp: ['gate_proj', 'up_proj'],
  down: ['down_proj'],
};

/**
 * A layer's adapted targets at one site, run together (lora.wgsl): their A stacked
 * [n·r, in] from aOff, their B stacked [Σ out, r] from bOff, their output columns segments of
 * rows rowStride wide.
 */
interface Site {
  key: string;
  slots: Slot[];
  inDim: number;
  rowStride: number;
  aOff: number;
  bOff: number;
  width: number;
}

type Acts = ReturnType<DeviceLlamaPolicy['allocate']>;

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

const align = (n: number) => Math.ceil(n / ALIGN_FLOATS) * ALIGN_FLOATS;

/**
 * The policy the GRPO trainer calls on the kernels: log-probs of a batch, the adapters'
 * gradients for a dlogp, an AdamW step, adapters in and out in PEFT's shapes.
 */
export class DeviceLlamaPolicy {
  readonly scale: number;
  private readonly slots: Slot[] = [];
  private readonly sites = new Map<string, Site>();
  readonly size: number;
  private readonly params: GPUBuffer;
  private readonly grads: GPUBuffer;
  private readonly m: GPUBuffer;
  private readonly v: GPUBuffer;
  private readonly decay: GPUBuffer;
  private readonly partials: GPUBuffer;
  private readonly stats: GPUBuffer;
  private readonly loss: GPUBuffer;
  private acts: Acts | null = null;
  private actsKey = '';
  /** AdamW steps taken (bias correction). */
  steps = 0;

  constructor(
    private readonly rt: GpuRuntime,
    readonly model: DeviceLlama,
    readonly lora: LoraShape,
    adapters?: Adapters,
    seed = 1,
  ) {
    const c = model.config;
    if (!Number.isInteger(lora.rank) || lora.rank < 1)
      throw new Error(`LoRA rank ${lora.rank} is not a positive integer`);
    for (const t of lora.targets)
      if (!LORA_TARGETS.includes(t))
        throw new Error(`LoRA target ${t} is not one of ${LORA_TARGETS.join(', ')}`);
    this.scale = lora.rslora ? lora.alpha / Math.sqrt(lora.rank) : lora.alpha / lora.rank;
    const rowBytes = 4 * model.Vp;
    const limit = rt.device.limits.maxStorageBufferBindingSize;
    this.logitsRows = Math.max(64, Math.floor(limit / rowBytes / 64) * 64);
    // Per layer and site, its targets' A stacked, then their B stacked (each block aligned).
    let at = 0;
    const r = lora.rank;
    for (let layer = 0; layer < c.numLayers; layer++)
      for (const [site, all] of Object.entries(SITE_TARGETS)) {
        const targets = all.filter((t) => lora.targets.includes(t));
        if (targets.length === 0) continue;
        const geometry = targets.map((t) => this.geometry(t));
        const inDim = (geometry[0] as Geometry).inDim;
        const aOff = at;
        const bOff = align(aOff + targets.length * r * inDim);
        const width = geometry.reduce((n, g) => n + g.outDim, 0);
        at = align(bOff + width * r);
        let b = bOff;
        const slots = targets.map((target, i) => {
          const g = geometry[i] as Geometry;
          const slot = {
            ...g,
            key: adapterKey(layer, target),
            layer,
            target,
            aOff: aOff + i * r * inDim,
            bOff: b,
          };
          b += g.outDim * r;
          return slot;
        });
        this.slots.push(...slots);
        const rowStride = (geometry[0] as Geometry).rowStride;
        this.sites.set(`${layer}.${site}`, {
          key: `${layer}.${site}`,
          slots,
          inDim,
          rowStride,
          aOff,
          bOff,
          width,
        });
      }
    this.size = Math.max(at, ALIGN_FLOATS);
    this.params = rt.buffer(this.size, 'lora params');
    this.grads = rt.buffer(this.size, 'lora grads');
    this.m = rt.buffer(this.size, 'lora adam m');
    this.v = rt.buffer(this.size, 'lora adam v');
    this.decay = rt.buffer(this.size, 'lora decay');
    rt.write(this.decay, new Float32Array(this.size).fill(1));
    this.partials = rt.buffer(3 * NORM_PARTIALS, 'lora norm partials');
    this.stats = rt.buffer(4, 'lora adam stats');
    this.loss = rt.buffer(4, 'lora loss');
    this.importAdapters(adapters ?? this.initialAdapters(seed));
  }

  private geometry(t: LoraTarget): Geometry {
    const c = this.model.config;
    const D = c.hiddenSize;
    const I = c.intermediateSize;
    const HD = c.numHeads * c.headDim;
    const KD = c.numKvHeads * c.headDim;
    const W = this.model.W;
    switch (t) {
      case 'q_proj':
        return { inDim: D, outDim: HD, rowStride: W, offset: 0 };
      case 'k_proj':
        return { inDim: D, outDim: KD, rowStride: W, offset: HD };
      case 'v_proj':
        return { inDim: D, outDim: KD, rowStride: W, offset: HD + KD };
      case 'o_proj':
        return { inDim: HD, outDim: D, rowStride: D, offset: 0 };
      case 'gate_proj':
        return { inDim: D, outDim: I, rowStride: 2 * I, offset: 0 };
      case 'up_proj':
        return { inDim: D, outDim: I, rowStride: 2 * I, offset: I };
      case 'down_proj':
        return { inDim: I, outDim: D, rowStride: D, offset: 0 };
    }
  }

  /** PEFT's start: A ~ U(±1/√in) (kaiming_uniform with a = √5), B = 0 (the base's outputs). */
  initialAdapters(seed: number): Adapters {
    const rng = new Rng(seed);
    const out: Adapters = new Map();
    for (const s of this.slots) {
      const bound = 1 / Math.sqrt(s.inDim);
      const A = Float32Array.from(
        { length: this.lora.rank * s.inDim },
        () => (2 * rng.next() - 1) * bound,
      );
      out.set(s.key, { A, B: new Float32Array(s.outDim * this.lora.rank) });
    }
    return out;
  }

  /** Writes adapters (every slot must be given, in PEFT's shapes); resets nothing else. */
  importAdapters(adapters: Adapters): void {
    const r = this.lora.rank;
    for (const s of this.slots) {
      const a = adapters.get(s.key);
      if (!a) throw new Error(`no LoRA adapter for layer ${s.layer} ${s.target}`);
      if (a.A.length !== r * s.inDim || a.B.length !== s.outDim * r)
        throw new Error(
          `LoRA adapter ${s.key}: A holds ${a.A.length} and B ${a.B.length} values, expected [${r}, ${s.inDim}] and [${s.outDim}, ${r}]`,
        );
      this.rt.write(this.params, a.A, s.aOff);
      this.rt.write(this.params, a.B, s.bOff);
    }
  }

  async exportAdapters(): Promise<Adapters> {
    return this.unpack(this.params);
  }

  /** AdamW's first and second moments in PEFT's shapes, and the steps taken (a snapshot's). */
  async exportMoments(): Promise<{ m: Adapters; v: Adapters; steps: number }> {
    return { m: await this.unpack(this.m), v: await this.unpack(this.v), steps: this.steps };
  }

  /** Restores exportMoments' state (a resumed run's Adam continues where it stopped). */
  importMoments(m: Adapters, v: Adapters, steps: number): void {
    for (const [buffer, moments] of [
      [this.m, m],
      [this.v, v],
    ] as const)
      for (const s of this.slots) {
        const a = moments.get(s.key);
        if (!a) throw new Error(`no Adam moments for layer ${s.layer} ${s.target}`);
        this.rt.write(buffer, a.A, s.aOff);
        this.rt.write(buffer, a.B, s.bOff);
      }
    this.steps = steps;
  }

  private async unpack(buffer: GPUBuffer): Promise<Adapters> {
    const [all] = await this.rt.read([{ buffer, offset: 0, length: this.size }]);
    const f = all as Float32Array;
    const r = this.lora.rank;
    const out: Adapters = new Map();
    for (const s of this.slots)
      out.set(s.key, {
        A: f.slice(s.aOff, s.aOff + r * s.inDim),
        B: f.slice(s.bOff, s.bOff + s.outDim * r),
      });
    return out;
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
    const { hiddenSize: D, intermediateSize: I, numHeads: H, headDim: hd } = c;
    const W = this.model.W;
    const r = this.lora.rank;
    const L = Math.min(R, this.logitsRows);
    const layers = Array.from({ length: c.numLayers }, (_, l) => l);
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
      xs: Array.from({ length: c.numLayers + 1 }, (_, l) => rt.buffer(R * D, `x ${l}`)),
      layers: layers.map((l) => ({
        xn1: rt.buffer(R * D, `xn1 ${l}`),
        rstd1: rt.buffer(R, `rstd1 ${l}`),
        qkvPre: c.qkNorm ? rt.buffer(R * W, `qkv pre-norm ${l}`) : null,
        qRstd: rt.buffer(R * H, `q rstd ${l}`),
        kRstd: rt.buffer(R * c.numKvHeads, `k rstd ${l}`),
        qkv: rt.buffer(R * W, `qkv ${l}`),
        att: rt.buffer(R * H * hd, `att ${l}`),
        lse: rt.buffer(R * H, `lse ${l}`),
        xMid: rt.buffer(R * D, `x mid ${l}`),
        xn2: rt.buffer(R * D, `xn2 ${l}`),
        rstd2: rt.buffer(R, `rstd2 ${l}`),
        gu: rt.buffer(R * 2 * I, `gate|up ${l}`),
        hm: rt.buffer(R * I, `mlp ${l}`),
      })),
      u: new Map(
        [...this.sites.values()].map((s) => [
          s.key,
          rt.buffer(R * s.slots.length * r, `u ${s.key}`),
        ]),
      ),
      xnF: rt.buffer(R * D, 'xn final'),
      rstdF: rt.buffer(R, 'rstd final'),
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
      du: rt.buffer(R * 3 * r, 'du'),
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
    const widest = Math.max(2 * c.intermediateSize, this.model.W, c.hiddenSize);
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

  private site(layer: number, site: AdapterSite): Site | undefined {
    return this.sites.get(`${layer}.${site}`);
  }

  private cols(s: Site, R: number): LoraColumns {
    return {
      M: R,
      r: this.lora.rank,
      scale: this.scale,
      rowStride: s.rowStride,
      segments: s.slots.map((slot) => ({ offset: slot.offset, width: slot.outDim })),
    };
  }

  /** The site's A stacked [n·r, in]. */
  private aSlice(s: Site, buffer = this.params): Bindable {
    return { buffer, offset: s.aOff, length: s.slots.length * this.lora.rank * s.inDim };
  }

  /** The site's B stacked [Σ out, r]. */
  private bSlice(s: Site, buffer = this.params): Bindable {
    return { buffer, offset: s.bOff, length: s.width * this.lora.rank };
  }

  /** y[:, site's columns] += s·B·A·x for the layer's adapters at `site` (x [R, in]). */
  private loraForward(
    seq: Seq,
    a: Acts,
    layer: number,
    site: AdapterSite,
    x: GPUBuffer,
    y: GPUBuffer,
  ) {
    seq.run(...this.loraSpecs(a.R, layer, site, x, y, (s) => a.u.get(s.key) as GPUBuffer));
  }

  /** The site's down projection (one matmul over its stacked A) and up (lora.wgsl). */
  private loraSpecs(
    R: number,
    layer: number,
    site: AdapterSite,
    x: GPUBuffer,
    y: GPUBuffer,
    uOf: (s: Site) => GPUBuffer,
  ): DispatchSpec[] {
    const s = this.site(layer, site);
    if (!s) return [];
    const u = uOf(s);
    return [
      matmul({
        M: R,
        N: s.slots.length * this.lora.rank,
        K: s.inDim,
        a: x,
        b: this.aSlice(s),
        bStride: [1, s.inDim],
        c: u,
        version: 'v4_vec4',
        dummy: this.rt.dummy,
        label: `lora_down ${site}`,
      }),
      loraUp(this.cols(s, R), u, this.bSlice(s), y),
    ];
  }

  private scratch: GPUBuffer | null = null;

  /**
   * The model's prefill and decode steps (sampling) run with these adapters from now on;
   * detach() returns it to the base.
   */
  attach(): void {
    // u for a site of up to three adapters, as many rows as a call may run.
    this.scratch ??= this.rt.buffer(
      this.model.contextLength * 3 * this.lora.rank,
      'lora u (sampling)',
    );
    const u = this.scratch;
    this.model.setAdapterHook((rows, layer, site, x, y) =>
      this.loraSpecs(rows, layer, site, x, y, () => u),
    );
  }

  detach(): void {
    this.model.setAdapterHook(null);
  }

  /** dA, dB of the layer's adapters at `site` from dy (y's gradient); dx [R, in] += theirs. */
  private loraBackward(
    seq: Seq,
    a: Acts,
    layer: number,
    site: AdapterSite,
    x: GPUBuffer,
    dy: GPUBuffer,
    dx: GPUBuffer,
  ) {
    const s = this.site(layer, site);
    if (!s) return;
    const nr = s.slots.length * this.lora.rank;
    const u = a.u.get(s.key) as GPUBuffer;
    const cols = this.cols(s, a.R);
    seq.run(
      loraGradB(cols, dy, u, this.bSlice(s, this.grads), true),
      loraGradU(cols, dy, this.bSlice(s), a.du),
      matmul({
        M: nr,
        N: s.inDim,
        K: a.R,
        a: a.du,
        aStride: [1, nr],
        b: x,
        c: this.aSlice(s, this.grads),
        flags: MM_ACCUMULATE,
        version: 'v4_vec4',
        dummy: this.rt.dummy,
        label: `lora_dA ${site}`,
      }),
      matmul({
        M: a.R,
        N: s.inDim,
        K: nr,
        a: a.du,
        b: this.aSlice(s),
        c: dx,
        flags: MM_ACCUMULATE,
        version: 'v4_vec4',
        dummy: this.rt.dummy,
        label: `lora_dx ${site}`,
      }),
    );
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
          version: 'v4_vec4',
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
    const longest = Math.max(...batch.sequences.map((s) => s.length));
    if (longest > this.model.contextLength)
      throw new Error(
        `a sequence of ${longest} tokens exceeds the context of ${this.model.contextLength}`,
      );
    for (const seq of batch.sequences)
      for (const id of seq)
        if (!Number.isInteger(id) || id < 0 || id >= c.vocabSize)
          throw new Error(`token id ${id} is outside the vocabulary (${c.vocabSize})`);
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

  private forward(seq: Seq, a: Acts, invTemp: number) {
    const model = this.model;
    const c = model.config;
    const { hiddenSize: D, intermediateSize: I, numHeads: H, numKvHeads: kvH, headDim: hd } = c;
    const { R, B, T } = a;
    const eps = c.rmsNormEps;
    const dummy = this.rt.dummy;
    const W = model.W;
    for (const part of model.embed.parts)
      seq.run(
        embeddingLookup(
          a.ids,
          part.buffer,
          a.xs[0] as GPUBuffer,
          R,
          D,
          model.embed.dtype,
          part.row0,
          part.row0 + part.rows,
        ),
      );
    model.layers.forEach((w, l) => {
      const x = a.xs[l] as GPUBuffer;
      const s = a.layers[l] as Acts['layers'][number];
      seq.run(rmsNormForward(x, w.inNorm, s.xn1, s.rstd1, R, D, eps, dummy));
      const pre = s.qkvPre ?? s.qkv;
      seq.run(...model.project(R, s.xn1, w.qkv, pre, { bias: w.qkvBias }));
      this.loraForward(seq, a, l, 'qkv', s.xn1, pre);
      if (s.qkvPre && w.qNorm && w.kNorm) {
        seq.copy(s.qkvPre, s.qkv, R * W);
        seq.run(
          rmsNormForward(null, w.qNorm, s.qkv, s.qRstd, R * H, hd, eps, dummy, {
            group: H,
            stride: W,
          }),
          rmsNormForward(null, w.kNorm, s.qkv, s.kRstd, R * kvH, hd, eps, dummy, {
            group: kvH,
            stride: W,
            off: H * hd,
          }),
        );
      }
      seq.run(
        // Each position's angle from its place in its sequence (a shared row's segments restart).
        rope({ R, T: 1, H, kvH, hd }, model.table, s.qkv, a.positions, dummy),
        attentionForward({ B, T, H, hd, kvH }, s.qkv, s.att, s.lse, this.segmentsOf(a)),
      );
      seq.copy(x, s.xMid, R * D);
      seq.run(...model.project(R, s.att, w.o, s.xMid, { accumulate: true }));
      this.loraForward(seq, a, l, 'o', s.att, s.xMid);
      seq.run(
        rmsNormForward(s.xMid, w.postNorm, s.xn2, s.rstd2, R, D, eps, dummy),
        ...model.project(R, s.xn2, w.gateUp, s.gu),
      );
      this.loraForward(seq, a, l, 'gateUp', s.xn2, s.gu);
      seq.run(swigluForward(s.gu, s.hm, R, I));
      const next = a.xs[l + 1] as GPUBuffer;
      seq.copy(s.xMid, next, R * D);
      seq.run(...model.project(R, s.hm, w.down, next, { accumulate: true }));
      this.loraForward(seq, a, l, 'down', s.hm, next);
    });
    const last = a.xs[c.numLayers] as GPUBuffer;
    seq.run(rmsNormForward(last, model.finalNorm, a.xnF, a.rstdF, R, D, eps, dummy));
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
    const xn = { buffer: this.headInput(a), offset: r0 * c.hiddenSize };
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
    const { hiddenSize: D, intermediateSize: I, numHeads: H, numKvHeads: kvH, headDim: hd } = c;
    const { R, B, T } = a;
    const W = model.W;
    const dummy = this.rt.dummy;
    const dxOnly = (specs: DispatchSpec[]) => specs[0] as DispatchSpec;
    // Every adapter gradient below adds to this.grads: a micro-batch after the first adds on.
    if (clearGradients) seq.clear(this.grads);
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
    }
    if (S < R) seq.run(scatterRows(a.dxnS, a.inv, a.dxn, S, R, D));
    seq.run(
      dxOnly(
        rmsNormBackward(
          a.xs[c.numLayers] as GPUBuffer,
          model.finalNorm,
          a.dxn,
          a.rstdF,
          a.dx,
          dummy.w,
          R,
          D,
          false,
        ),
      ),
    );
    for (let l = c.numLayers - 1; l >= 0; l--) {
      const w = model.layers[l] as DeviceLlama['layers'][number];
      const s = a.layers[l] as Acts['layers'][number];
      // MLP: x_{l+1} = xMid + down(silu(gate)·up)(RMSNorm(xMid)).
      seq.run(...this.projectT(R, a.dx, D, w.down, a.dhm));
      this.loraBackward(seq, a, l, 'down', s.hm, a.dx, a.dhm);
      seq.run(swigluBackward(s.gu, a.dhm, a.dgu, R, I));
      seq.run(...this.projectT(R, a.dgu, 2 * I, w.gateUp, a.dxn));
      this.loraBackward(seq, a, l, 'gateUp', s.xn2, a.dgu, a.dxn);
      seq.run(
        dxOnly(rmsNormBackward(s.xMid, w.postNorm, a.dxn, s.rstd2, a.dx, dummy.w, R, D, true)),
      );
      // Attention: xMid = x_l + o(attention(RoPE(norm_qk(qkv(RMSNorm(x_l)))))).
      seq.run(...this.projectT(R, a.dx, D, w.o, a.datt));
      this.loraBackward(seq, a, l, 'o', s.att, a.dx, a.datt);
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
        rope({ R, T: 1, H, kvH, hd }, model.table, a.dqkv, a.positions, dummy, true),
      );
      let dPre = a.dqkv;
      if (s.qkvPre && a.dqkvPre && w.qNorm && w.kNorm) {
        seq.copy(a.dqkv, a.dqkvPre, R * W);
        seq.run(
          dxOnly(
            rmsNormBackward(
              s.qkvPre,
              w.qNorm,
              a.dqkv,
              s.qRstd,
              a.dqkvPre,
              dummy.w,
              R * H,
              hd,
              false,
              {
                group: H,
                stride: W,
              },
            ),
          ),
          dxOnly(
            rmsNormBackward(
              s.qkvPre,
              w.kNorm,
              a.dqkv,
              s.kRstd,
              a.dqkvPre,
              dummy.w,
              R * kvH,
              hd,
              false,
              { group: kvH, stride: W, off: H * hd },
            ),
          ),
        );
        dPre = a.dqkvPre;
      }
      seq.run(...this.projectT(R, dPre, W, w.qkv, a.dxn));
      this.loraBackward(seq, a, l, 'qkv', s.xn1, dPre, a.dxn);
      seq.run(
        dxOnly(
          rmsNormBackward(
            a.xs[l] as GPUBuffer,
            w.inNorm,
            a.dxn,
            s.rstd1,
            a.dx,
            dummy.w,
            R,
            D,
            true,
          ),
        ),
      );
    }
  }

  /** The head's log-probs of the part on the device, in its scored order (every row's without). */
  private async readHead(a: Acts): Promise<Float32Array> {
    const [all] = await this.rt.read([{ buffer: a.headStats, offset: 0, length: a.headRows }]);
    return all as Float32Array;
  }

  /**
   * Per sequence, the log-probs of its next tokens [len − 1], with the adapters applied; in
   * micro-batches of at most maxRows positions (at least one row each), as step() takes them.
   */
  async logProbs(batch: TokenBatch, maxRows = Number.POSITIVE_INFINITY): Promise<Float32Array[]> {
    const parts = packBatch(batch, maxRows);
    const values: Float32Array[] = [];
    for (const part of parts) values.push((await this.forwardPass(batch, part)).head);
    return logProbsOf(batch, parts, values);
  }

  /** The forward over a part, its activations kept for a backward, and its head's log-probs. */
  private async forwardPass(batch: TokenBatch, part: PackedPart) {
    const a = this.upload(batch, part);
    const invTemp = 1 / (batch.temperature ?? 1);
    const seq = new Seq();
    this.forward(seq, a, invTemp);
    seq.submit(this.rt);
    return { a, invTemp, head: await this.readHead(a) };
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
    const values: Float32Array[] = [];
    for (const [p, part] of parts.entries()) {
      const a = this.upload(batch, part, dlogp);
      const invTemp = 1 / (batch.temperature ?? 1);
      const seq = new Seq();
      this.forward(seq, a, invTemp);
      this.backward(seq, a, invTemp, p === 0);
      seq.submit(this.rt);
      values.push(await this.readHead(a));
    }
    return logProbsOf(batch, parts, values);
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
    return { logp, grads: await this.unpack(this.grads) };
  }

  /**
   * One AdamW step over the adapters from the gradients on the device (guarded: a non-finite
   * gradient skips it); returns the gradients' global norm and whether the step was taken.
   */
  async applyAdamW(o: AdamWOptions): Promise<{ gradNorm: number; ok: boolean }> {
    const beta1 = o.beta1 ?? 0.9;
    const beta2 = o.beta2 ?? 0.999;
    const t = this.steps + 1;
    const step: AdamWStep = {
      lr: o.lr,
      beta1,
      beta2,
      eps: o.eps ?? 1e-8,
      weightDecay: o.weightDecay ?? 0,
      c1: 1 - beta1 ** t,
      c2: 1 - beta2 ** t,
      maxGradNorm: o.maxGradNorm ?? 0,
    };
    const seq = new Seq();
    seq.run(
      ...adamw(this.size, adamwUniforms(this.size, step), {
        grads: this.grads,
        partials: this.partials,
        loss: this.loss,
        stats: this.stats,
        decay: this.decay,
        params: this.params,
        m: this.m,
        v: this.v,
      }),
    );
    seq.submit(this.rt);
    const [stats] = await this.rt.read([{ buffer: this.stats, offset: 0, length: 4 }]);
    const ok = (stats as Float32Array)[1] === 1;
    if (ok) this.steps = t;
    return { gradNorm: (stats as Float32Array)[0] as number, ok };
  }

  /**
   * A training step: log-probs, the host's loss and its dlogp (e.g. GRPO's), the backward,
   * AdamW. One forward: its activations stay on the device while the host computes the loss,
   * and the backward starts from them (the same numbers as a second forward would give).
   */
  async step(
    batch: TokenBatch,
    lossFn: (logp: Float32Array[]) => { loss: number; dlogp: ArrayLike<number>[] },
    o: AdamWOptions,
    maxRows = Number.POSITIVE_INFINITY,
  ): Promise<{ loss: number; gradNorm: number; ok: boolean; microBatches: number }> {
    const parts = packBatch(batch, maxRows);
    if (parts.length === 1) {
      const part = parts[0] as PackedPart;
      const { a, invTemp, head } = await this.forwardPass(batch, part);
      const { loss, dlogp } = lossFn(logProbsOf(batch, parts, [head]));
      this.rt.write(a.g, headGradient(batch, part, dlogp));
      this.rt.write(this.loss, Float32Array.from([loss]));
      const backward = new Seq();
      this.backward(backward, a, invTemp);
      backward.submit(this.rt);
      return { loss, ...(await this.applyAdamW(o)), microBatches: 1 };
    }
    // Micro-batches (packBatch's parts, all as wide as the longest row): every part's log-probs
    // first, then the loss over all of them on the host, then each part's forward again and its
    // backward, the gradients summed on the device.
    const { loss, dlogp } = lossFn(await this.logProbs(batch, maxRows));
    this.rt.write(this.loss, Float32Array.from([loss]));
    const invTemp = 1 / (batch.temperature ?? 1);
    parts.forEach((part, p) => {
      const a = this.upload(batch, part, dlogp);
      const seq = new Seq();
      this.forward(seq, a, invTemp);
      this.backward(seq, a, invTemp, p === 0);
      seq.submit(this.rt);
    });
    return { loss, ...(await this.applyAdamW(o)), microBatches: parts.length };
  }

  /** Frees the adapters, their moments and the activations (the base stays, detached). */
  free(): void {
    this.detach();
    this.freeActivations();
    if (this.scratch) this.rt.free(this.scratch);
    for (const b of [
      this.params,
      this.grads,
      this.m,
      this.v,
      this.decay,
      this.partials,
      this.stats,
      this.loss,
    ])
      this.rt.free(b);
  }
}
