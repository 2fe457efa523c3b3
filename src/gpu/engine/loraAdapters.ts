// LoRA's adapters on the device, for any of the model's linear layers that a target names:
// y = W·x + s·B·(A·x), s = alpha / r (rsLoRA: alpha / √r), A and B f32 in PEFT's shapes (A [r,
// in], B [out, r]), in one flat buffer with their gradients and AdamW's moments. The adapters
// that share an input (q, k, v of q|k|v; gate, up of gate|up) are a site: their A stacked
// [n·r, in] for one down projection and one dA and dx matmul, their B stacked [Σ out, r] for
// lora.wgsl's B side over up to three column segments of the fused rows (gaps where a target is
// not adapted). DevicePolicy runs the model around them; this file owns their layout, their
// products, their import and export, and their guarded AdamW step.
import { LLAMA_LORA_TARGETS } from '../../model/loraSettings';
import { Rng } from '../../tasks/random';
import type { AdapterSite, DeviceTransformer } from './deviceTransformer';
import { FlatAdam } from './flatAdam';
import { type LoraColumns, loraGradB, loraGradU, loraUp, MM_ACCUMULATE, matmul } from './ops';
import { ALIGN_FLOATS, type Bindable, type DispatchSpec, type GpuRuntime } from './runtime';

/** The Llama family's projections LoRA may target (PEFT's names), as the run's settings list them. */
export const LORA_TARGETS = LLAMA_LORA_TARGETS;

/**
 * GPT-2's projections as the device's adapters name them: PEFT's c_attn and c_fc, and its c_proj
 * told apart by module (attention's and the MLP's share the name).
 */
export const GPT2_DEVICE_TARGETS = [
  'attn.c_attn',
  'attn.c_proj',
  'mlp.c_fc',
  'mlp.c_proj',
] as const;

export type LoraTarget = (typeof LORA_TARGETS)[number] | (typeof GPT2_DEVICE_TARGETS)[number];

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

/**
 * A module's adapter key on the device: its layer and target (the Llama family's projections by
 * their last name, GPT-2's by module: attn.c_proj and mlp.c_proj share the last name).
 */
export function moduleKey(module: string): string {
  const match = /\.(?:layers|h)\.(\d+)\.(.+)$/.exec(module);
  if (!match) throw new Error(`${module} is not a layer's projection`);
  const rest = match[2] as string;
  const last = rest.slice(rest.lastIndexOf('.') + 1);
  const target = ((LORA_TARGETS as readonly string[]).includes(last) ? last : rest) as LoraTarget;
  return adapterKey(Number(match[1]), target);
}

export const targetOfKey = (key: string) => key.slice(key.indexOf('.') + 1) as LoraTarget;

export type { AdamWOptions } from './flatAdam';

/** Where an adapter's output columns lie in the frozen projection's output rows. */
interface Geometry {
  inDim: number;
  outDim: number;
  rowStride: number;
  offset: number;
}

export interface Slot extends Geometry {
  key: string;
  layer: number;
  target: LoraTarget;
  aOff: number;
  bOff: number;
}

/** The targets that share an input, in the order their columns lie in its output rows. */
const SITE_TARGETS: Record<AdapterSite, readonly LoraTarget[]> = {
  qkv: ['q_proj', 'k_proj', 'v_proj', 'attn.c_attn'],
  o: ['o_proj', 'attn.c_proj'],
  gateUp: ['gate_proj', 'up_proj', 'mlp.c_fc'],
  down: ['down_proj', 'mlp.c_proj'],
};

/**
 * A layer's adapted targets at one site, run together (lora.wgsl): their A stacked
 * [n·r, in] from aOff, their B stacked [Σ out, r] from bOff, their output columns segments of
 * rows rowStride wide.
 */
export interface Site {
  key: string;
  slots: Slot[];
  inDim: number;
  rowStride: number;
  aOff: number;
  bOff: number;
  width: number;
}

const align = (n: number) => Math.ceil(n / ALIGN_FLOATS) * ALIGN_FLOATS;

/** Where a target's adapter reads and writes, in the model's rows. */
function geometryOf(model: DeviceTransformer, t: LoraTarget): Geometry {
  const c = model.config;
  const D = c.hidden;
  const I = c.intermediate;
  const HD = c.heads * c.headDim;
  const KD = c.kvHeads * c.headDim;
  const W = model.W;
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
    case 'mlp.c_proj':
      return { inDim: I, outDim: D, rowStride: D, offset: 0 };
    case 'attn.c_attn':
      return { inDim: D, outDim: W, rowStride: W, offset: 0 };
    case 'attn.c_proj':
      return { inDim: HD, outDim: D, rowStride: D, offset: 0 };
    case 'mlp.c_fc': // fc's rows hold its I columns alone (no up beside them)
      return { inDim: D, outDim: I, rowStride: I, offset: 0 };
  }
}

/** The adapters' places in the flat buffer: per layer and site, A stacked, then B stacked. */
function adapterLayout(model: DeviceTransformer, lora: LoraShape) {
  const slots: Slot[] = [];
  const sites = new Map<string, Site>();
  let at = 0;
  const r = lora.rank;
  for (let layer = 0; layer < model.config.layers; layer++)
    for (const [site, all] of Object.entries(SITE_TARGETS)) {
      const targets = all.filter((t) => lora.targets.includes(t));
      if (targets.length === 0) continue;
      const geometry = targets.map((t) => geometryOf(model, t));
      const inDim = (geometry[0] as Geometry).inDim;
      const aOff = at;
      const bOff = align(aOff + targets.length * r * inDim);
      const width = geometry.reduce((n, g) => n + g.outDim, 0);
      at = align(bOff + width * r);
      let b = bOff;
      const siteSlots = targets.map((target, i) => {
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
      slots.push(...siteSlots);
      const rowStride = (geometry[0] as Geometry).rowStride;
      sites.set(`${layer}.${site}`, {
        key: `${layer}.${site}`,
        slots: siteSlots,
        inDim,
        rowStride,
        aOff,
        bOff,
        width,
      });
    }
  return { slots, sites, size: Math.max(at, ALIGN_FLOATS) };
}

export class DeviceAdapters extends FlatAdam {
  readonly scale: number;
  private readonly slots: Slot[];
  readonly sites: Map<string, Site>;

  constructor(
    rt: GpuRuntime,
    readonly model: DeviceTransformer,
    readonly lora: LoraShape,
    adapters?: Adapters,
    seed = 1,
  ) {
    const c = model.config;
    if (!Number.isInteger(lora.rank) || lora.rank < 1)
      throw new Error(`LoRA rank ${lora.rank} is not a positive integer`);
    // The config's own projections: the Llama family's (q, k, v apart) or GPT-2's (fused q|k|v).
    const known: readonly LoraTarget[] = c.fusedQkv ? GPT2_DEVICE_TARGETS : LORA_TARGETS;
    for (const t of lora.targets)
      if (!known.includes(t))
        throw new Error(`LoRA target ${t} is not one of this model's ${known.join(', ')}`);
    const layout = adapterLayout(model, lora);
    super(rt, rt.buffer(layout.size, 'lora params'), layout.size, 'lora');
    this.slots = layout.slots;
    this.sites = layout.sites;
    this.scale = lora.rslora ? lora.alpha / Math.sqrt(lora.rank) : lora.alpha / lora.rank;
    this.importAdapters(adapters ?? this.initialAdapters(seed));
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

  /** A buffer laid out as the adapters (theirs, their gradients', a moment's) in PEFT's shapes. */
  async unpack(buffer: GPUBuffer): Promise<Adapters> {
    const f = await this.readAll(buffer);
    const r = this.lora.rank;
    const out: Adapters = new Map();
    for (const s of this.slots)
      out.set(s.key, {
        A: f.slice(s.aOff, s.aOff + r * s.inDim),
        B: f.slice(s.bOff, s.bOff + s.outDim * r),
      });
    return out;
  }

  site(layer: number, site: AdapterSite): Site | undefined {
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

  /** The site's down projection (one matmul over its stacked A) and up (lora.wgsl). */
  forwardSpecs(
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
        version: this.model.matmul,
        dummy: this.rt.dummy,
        label: `lora_down ${site}`,
      }),
      loraUp(this.cols(s, R), u, this.bSlice(s), y),
    ];
  }

  /**
   * dA, dB (added to the gradients) of the layer's adapters at `site` from dy (y's gradient, R
   * rows), given the forward's u; dx [R, in] += theirs. du: scratch of R·3·r floats.
   */
  backwardSpecs(
    R: number,
    layer: number,
    site: AdapterSite,
    x: GPUBuffer,
    dy: GPUBuffer,
    dx: GPUBuffer,
    uOf: (s: Site) => GPUBuffer,
    du: GPUBuffer,
  ): DispatchSpec[] {
    const s = this.site(layer, site);
    if (!s) return [];
    const nr = s.slots.length * this.lora.rank;
    const u = uOf(s);
    const cols = this.cols(s, R);
    return [
      loraGradB(cols, dy, u, this.bSlice(s, this.grads), true),
      loraGradU(cols, dy, this.bSlice(s), du),
      matmul({
        M: nr,
        N: s.inDim,
        K: R,
        a: du,
        aStride: [1, nr],
        b: x,
        c: this.aSlice(s, this.grads),
        flags: MM_ACCUMULATE,
        version: this.model.matmul,
        dummy: this.rt.dummy,
        label: `lora_dA ${site}`,
      }),
      matmul({
        M: R,
        N: s.inDim,
        K: nr,
        a: du,
        b: this.aSlice(s),
        c: dx,
        flags: MM_ACCUMULATE,
        version: this.model.matmul,
        dummy: this.rt.dummy,
        label: `lora_dx ${site}`,
      }),
    ];
  }

  free(): void {
    this.freeState();
    this.rt.free(this.params);
  }
}
