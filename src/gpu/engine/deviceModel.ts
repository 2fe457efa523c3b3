// The lab's GPT (src/model/gpt.ts: learned positions, pre-LN blocks, GELU MLP, tied head) with
// its weights in GPU buffers, and a whole GRPO training step — forward, per-token loss,
// backward, guarded AdamW — recorded as one program and submitted as one command buffer.
// Activations live per (B, T) shape; the program for a shape is built once and replayed.
import type { ModelConfig } from '../../model/config';
import {
  decayMask,
  entry,
  type ParamLayout,
  packParams,
  paramLayout,
  unpackParams,
} from './layout';
import { checkBatchFits, checkModelFits, limitsOf } from './limits';
import type { GrpoOptions, MatmulVersion } from './ops';
import * as op from './ops';
import type { Bindable, DispatchSpec, GpuRuntime, Program, Slice } from './runtime';

export interface AdamWConfig {
  beta1: number;
  beta2: number;
  eps: number;
  weightDecay: number;
}

/** One micro-batch of the GRPO update, as flat row-major arrays over B rows of T tokens. */
export interface TrainBatch {
  B: number;
  T: number;
  /** [B·T] token ids (padding: any id, weight 0). */
  ids: Uint32Array;
  /**
   * Per position r = b·T + t (predicting ids[b, t+1]; t = T−1 has weight 0), [B·T] each:
   * the sampling policy's and the reference's log-probs, the advantage of row b, and the weight
   * mask / normalizer (dapo: 1 / tokens; grpo: 1 / (G · length_b); dr_grpo: 1 / (G · L)).
   */
  oldLogp: Float32Array;
  refLogp: Float32Array;
  advantage: Float32Array;
  weight: Float32Array;
  /** Rows that hold a shared prompt and then its completions (packedBatch.ts' layout). */
  packed?: PackedRows;
}

/** Each position's place in its sequence [B·T] and attention.wgsl's segments [B·T + B]. */
export interface PackedRows {
  positions: Uint32Array;
  segments: Uint32Array;
}

export interface StepOptions extends GrpoOptions {
  lr: number;
  maxGradNorm: number;
  /** Log-probs of softmax(logits / temperature), as sampled. */
  temperature: number;
}

export interface StepReport {
  loss: number;
  gradNorm: number;
  applied: boolean;
  clipped: boolean;
  /**
   * Per position r: log π(ids[b, t+1]) and entropy, [B·T], where the weight is not 0 (the head
   * runs there only; 0 elsewhere and at each sequence's last position).
   */
  logp?: Float32Array;
  entropy?: Float32Array;
}

/** Dispatches built for n = R whose uniform blocks are rewritten for each batch's n ≤ R. */
interface Resizable {
  specs: DispatchSpec[];
  resize(n: number): void;
  buffers: GPUBuffer[];
}

interface Activations {
  B: number;
  T: number;
  ids: GPUBuffer;
  /** Where the rows are packed (shared prompts): positions and segments to write. */
  packed: { positions: GPUBuffer; segments: GPUBuffer } | null;
  /**
   * The rows whose next-token log-prob is computed (the head runs there only), with their
   * targets; the head's outputs, the loss's inputs and dlogp are then compact: entry i is row
   * rows[i]'s.
   */
  pick(rows: Uint32Array, targets: Uint32Array): void;
  /** The picked rows' targets (compact). */
  targets: GPUBuffer;
  /** The loss's inputs at the picked rows (compact). */
  old: GPUBuffer;
  ref: GPUBuffer;
  adv: GPUBuffer;
  weight: GPUBuffer;
  program: Program;
  /** logp | entropy | lse, n each (n = the picked rows). */
  head: GPUBuffer;
  /** loss·w [n] | dlogp [n] at grpoGradOffset(R). */
  loss: GPUBuffer;
  lossSum: GPUBuffer;
  /** Residual streams per layer: x[l] is layer l's input, x[L] the last block's output. */
  x: GPUBuffer[];
  qkv: GPUBuffer[];
  /** Frees what this shape holds on the device. */
  release(): void;
}

/** Whether the fused kernels hold this model's shape (width ≤ 256, head size ≤ 64, widths ×4). */
export function deviceHoldsModel(config: ModelConfig): boolean {
  const head = config.nEmbd / config.nHead;
  // decode.wgsl reads widths and heads four floats at a time
  return config.nEmbd <= 256 && head <= 64 && head % 4 === 0 && config.nInner % 4 === 0;
}

export class DeviceModel {
  readonly layout: ParamLayout;
  readonly params: GPUBuffer;
  readonly grads: GPUBuffer;
  readonly m: GPUBuffer;
  readonly v: GPUBuffer;
  readonly decay: GPUBuffer;
  readonly partials: GPUBuffer;
  /** [norm, ok, clip coefficient, loss] of the last step. */
  readonly stats: GPUBuffer;
  private readonly adamUniforms: GPUBuffer;
  /** The step's loss summed over its micro-batches (what the guard checks). */
  private readonly lossTotal: GPUBuffer;
  private updateProgram: Program | null = null;
  private readonly shapes = new Map<string, Activations>();
  step = 0;
  matmulVersion: MatmulVersion = 'v1_regblock';

  constructor(
    readonly rt: GpuRuntime,
    readonly config: ModelConfig,
    values: Map<string, Float32Array>,
    readonly adam: AdamWConfig = { beta1: 0.9, beta2: 0.95, eps: 1e-8, weightDecay: 0.01 },
  ) {
    if (!deviceHoldsModel(config))
      throw new Error(
        'the fused kernels hold width ≤ 256 and head size ≤ 64, both multiples of 4 (and the MLP width)',
      );
    // Planned before any buffer or upload: a model the adapter cannot hold is refused in words.
    checkModelFits(config, limitsOf(rt.device));
    this.layout = paramLayout(config);
    const n = this.layout.total;
    this.params = rt.buffer(n, 'params');
    rt.write(this.params, packParams(this.layout, values));
    this.grads = rt.buffer(n, 'grads');
    this.m = rt.buffer(n, 'adam-m');
    this.v = rt.buffer(n, 'adam-v');
    this.decay = rt.buffer(n, 'decay');
    rt.write(this.decay, decayMask(this.layout));
    this.partials = rt.buffer(3 * op.NORM_PARTIALS, 'norm-partials');
    this.stats = rt.buffer(4, 'step-stats');
    this.adamUniforms = rt.uniformBuffer(48);
    this.lossTotal = rt.buffer(1, 'loss-total');
  }

  /** Norm, guard, clip and AdamW over the flat buffers: the same program for every shape. */
  private update(): Program {
    this.updateProgram ??= this.rt.program(
      op
        .adamw(this.layout.total, new ArrayBuffer(48), {
          grads: this.grads,
          partials: this.partials,
          loss: this.lossTotal,
          stats: this.stats,
          decay: this.decay,
          params: this.params,
          m: this.m,
          v: this.v,
        })
        .map((spec) => ({ ...spec, uniformBuffer: this.adamUniforms })),
    );
    return this.updateProgram;
  }

  /** A parameter's range of the flat buffer (params, or grads/m/v of the same layout). */
  slice(name: string, buffer: GPUBuffer = this.params): Slice {
    const e = entry(this.layout, name);
    return { buffer, offset: e.offset, length: e.size };
  }

  off(name: string): number {
    return entry(this.layout, name).offset;
  }

  async readParams(): Promise<Map<string, Float32Array>> {
    const [flat] = await this.rt.read([this.params]);
    return unpackParams(this.layout, flat as Float32Array);
  }

  async readGrads(): Promise<Map<string, Float32Array>> {
    const [flat] = await this.rt.read([this.grads]);
    return unpackParams(this.layout, flat as Float32Array);
  }

  writeParams(values: Map<string, Float32Array>): void {
    this.rt.write(this.params, packParams(this.layout, values));
  }

  /** Adam's moments in the layout's order (as AdamW.exportState: names with /m, /v). */
  async readMoments(): Promise<{ m: Map<string, Float32Array>; v: Map<string, Float32Array> }> {
    const [m, v] = await this.rt.read([this.m, this.v]);
    return {
      m: unpackParams(this.layout, m as Float32Array),
      v: unpackParams(this.layout, v as Float32Array),
    };
  }

  writeMoments(m: Map<string, Float32Array>, v: Map<string, Float32Array>, step: number): void {
    this.rt.write(this.m, packParams(this.layout, m));
    this.rt.write(this.v, packParams(this.layout, v));
    this.step = step;
  }

  /**
   * The forward pass's dispatches over ids [B, T], from the embedding to the last block;
   * `packed` rows take their positions and attention segments from those buffers.
   */
  forwardSpecs(
    B: number,
    T: number,
    ids: Bindable,
    x: GPUBuffer[],
    save: LayerBuffers[],
    packed?: { positions: Bindable; segments: Bindable } | null,
  ): DispatchSpec[] {
    const { nEmbd: D, nHead: H, nLayer: L, nInner: F, layerNormEps: eps } = this.config;
    const R = B * T;
    const P = this.params;
    const w = (l: number, name: string) => this.slice(`transformer.h.${l}.${name}`);
    const dummy = this.rt.dummy;
    const version = this.matmulVersion;
    const specs: DispatchSpec[] = [
      op.embeddingForward(
        ids,
        P,
        x[0]!,
        B,
        T,
        D,
        this.off('transformer.wte.weight'),
        this.off('transformer.wpe.weight'),
        packed?.positions,
      ),
    ];
    for (let l = 0; l < L; l++) {
      const s = save[l]!;
      specs.push(
        op.layerNormForward(
          x[l]!,
          w(l, 'ln_1.weight'),
          w(l, 'ln_1.bias'),
          s.a,
          s.stats1,
          R,
          D,
          eps,
        ),
        op.matmul({
          M: R,
          N: 3 * D,
          K: D,
          a: s.a,
          b: w(l, 'attn.c_attn.weight'),
          bias: w(l, 'attn.c_attn.bias'),
          c: s.qkv,
          dummy,
          version,
        }),
        op.attentionForward({ B, T, H, hd: D / H }, s.qkv, s.y, s.lse, packed?.segments),
        op.matmul({
          M: R,
          N: D,
          K: D,
          a: s.y,
          b: w(l, 'attn.c_proj.weight'),
          bias: w(l, 'attn.c_proj.bias'),
          residual: x[l]!,
          c: s.xm,
          dummy,
          version,
        }),
        op.layerNormForward(
          s.xm,
          w(l, 'ln_2.weight'),
          w(l, 'ln_2.bias'),
          s.mm,
          s.stats2,
          R,
          D,
          eps,
        ),
        op.matmul({
          M: R,
          N: F,
          K: D,
          a: s.mm,
          b: w(l, 'mlp.c_fc.weight'),
          bias: w(l, 'mlp.c_fc.bias'),
          c: s.pre,
          aux: s.act,
          flags: op.MM_GELU,
          dummy,
          version,
        }),
        op.matmul({
          M: R,
          N: D,
          K: F,
          a: s.act,
          b: w(l, 'mlp.c_proj.weight'),
          bias: w(l, 'mlp.c_proj.bias'),
          residual: s.xm,
          c: x[l + 1]!,
          dummy,
          version,
        }),
      );
    }
    return specs;
  }

  layerBuffers(R: number): LayerBuffers {
    const { nEmbd: D, nHead: H, nInner: F } = this.config;
    const rt = this.rt;
    return {
      a: rt.buffer(R * D),
      stats1: rt.buffer(2 * R),
      qkv: rt.buffer(R * 3 * D),
      y: rt.buffer(R * D),
      lse: rt.buffer(H * R),
      xm: rt.buffer(R * D),
      mm: rt.buffer(R * D),
      stats2: rt.buffer(2 * R),
      pre: rt.buffer(R * F),
      act: rt.buffer(R * F),
    };
  }

  /** Shapes whose buffers and programs are kept (a run's batches change shape every update). */
  keepShapes = 2;

  private activations(B: number, T: number, invTemp: number, packed = false): Activations {
    // A packed row may be longer than the context; its positions are checked where written.
    if (T > this.config.nCtx && !packed)
      throw new Error(`sequence of ${T} tokens exceeds the context of ${this.config.nCtx}`);
    const key = `${B}x${T}@${invTemp}${packed ? ' packed' : ''}`;
    const cached = this.shapes.get(key);
    if (cached) {
      this.shapes.delete(key); // most recent last
      this.shapes.set(key, cached);
      return cached;
    }
    while (this.shapes.size >= Math.max(1, this.keepShapes)) {
      const [oldest, acts] = this.shapes.entries().next().value as [string, Activations];
      this.shapes.delete(oldest);
      acts.release();
    }
    checkBatchFits(this.config, B, T, limitsOf(this.rt.device));
    const { value, buffers } = this.rt.collect(() => this.buildActivations(B, T, invTemp, packed));
    const release = value.release;
    value.release = () => {
      release();
      for (const buffer of buffers) this.rt.free(buffer);
    };
    this.shapes.set(key, value);
    return value;
  }

  /** Specs for n = R with uniform buffers of their own, rewritten by resize(n) (n ≤ R). */
  private resizable(R: number, build: (n: number) => DispatchSpec[]): Resizable {
    const specs = build(R);
    const queue = this.rt.device.queue;
    const buffers = specs.map((spec) => {
      const buffer = this.rt.uniformBuffer(spec.uniforms.byteLength);
      spec.uniformBuffer = buffer;
      queue.writeBuffer(buffer, 0, spec.uniforms);
      return buffer;
    });
    return {
      specs,
      buffers,
      resize(n: number) {
        build(n).forEach((spec, i) => {
          if (spec.entry !== specs[i]?.entry) throw new Error(`resize: ${spec.entry} changed`);
          queue.writeBuffer(buffers[i]!, 0, spec.uniforms);
        });
      },
    };
  }

  private buildActivations(
    B: number,
    T: number,
    invTemp: number,
    packedRows: boolean,
  ): Activations {
    const {
      nEmbd: D,
      nHead: H,
      nLayer: L,
      nInner: F,
      vocabSize: V,
      layerNormEps: eps,
    } = this.config;
    const R = B * T;
    const rt = this.rt;
    const dummy = rt.dummy;
    const version = this.matmulVersion;
    const ids = rt.buffer(R);
    const packed = packedRows
      ? { positions: rt.buffer(R, 'positions'), segments: rt.buffer(R + B, 'segments') }
      : null;
    const x = Array.from({ length: L + 1 }, () => rt.buffer(R * D));
    const save = Array.from({ length: L }, () => this.layerBuffers(R));
    const xf = rt.buffer(R * D);
    const statsF = rt.buffer(2 * R);
    // Rows padded to a multiple of 4, so the head's three matmuls read and write vec4s.
    const VP = Math.ceil(V / 4) * 4;
    const logits = rt.buffer(R * VP);
    // The head runs at the picked rows only (n ≤ R: those whose log-prob the loss or the
    // caller reads): xs = LN_f(x) there, their targets, and everything after it compact.
    const sel = rt.buffer(R);
    const inv = rt.buffer(R);
    const xs = rt.buffer(R * D);
    const dxs = rt.buffer(R * D);
    const targets = rt.buffer(R);
    const head = rt.buffer(3 * R);
    const old = rt.buffer(R);
    const ref = rt.buffer(R);
    const adv = rt.buffer(R);
    const weight = rt.buffer(R);
    const loss = rt.buffer(2 * op.grpoGradOffset(R));
    const lossSum = rt.buffer(1);
    const dres = rt.buffer(R * D);
    const tmpD = rt.buffer(R * D);
    const dh = rt.buffer(R * F);
    const dqkv = rt.buffer(R * 3 * D);
    const dsum = rt.buffer(H * R);
    const G = this.grads;
    const g = (name: string) => this.slice(name, G);
    const w = (l: number, name: string) => this.slice(`transformer.h.${l}.${name}`);
    const gl = (l: number, name: string) => g(`transformer.h.${l}.${name}`);
    const wte = this.slice('transformer.wte.weight');
    const dlogp: Slice = { buffer: loss, offset: op.grpoGradOffset(R), length: R };
    const headForward = this.resizable(R, (n) => [
      op.gatherRows(xf, sel, xs, n, R, D),
      op.matmul({
        M: n,
        N: V,
        K: D,
        a: xs,
        b: wte,
        bStride: [1, D],
        c: logits,
        cStride: VP,
        dummy,
        version,
        label: 'head',
      }),
      op.headLogprobForward(logits, targets, head, n, V, invTemp, VP),
    ]);
    const headBackward = this.resizable(R, (n) => [
      op.headLogprobBackward(targets, dlogp, head, logits, n, V, invTemp, VP),
      // dxs = dlogits·wte; dwte += dlogitsᵀ·xs (the tied head's share); dxf = dxs at the picked
      // rows, 0 elsewhere
      op.matmul({
        M: n,
        N: D,
        K: V,
        a: logits,
        aStride: [VP, 1],
        b: wte,
        c: dxs,
        dummy,
        version,
      }),
      op.matmul({
        M: V,
        N: D,
        K: n,
        a: logits,
        aStride: [1, VP],
        b: xs,
        c: g('transformer.wte.weight'),
        flags: op.MM_ACCUMULATE,
        dummy,
        version,
      }),
      op.scatterRows(dxs, inv, tmpD, n, R, D),
    ]);
    // The GRPO options live in the program's uniforms: rebuilt when they change (rare).
    const specs: DispatchSpec[] = [
      ...this.forwardSpecs(B, T, ids, x, save, packed),
      op.layerNormForward(
        x[L]!,
        this.slice('transformer.ln_f.weight'),
        this.slice('transformer.ln_f.bias'),
        xf,
        statsF,
        R,
        D,
        eps,
      ),
      ...headForward.specs,
    ];
    const lossSpecs = (o: GrpoOptions) =>
      this.resizable(R, (n) => [
        op.grpoBackward(
          n,
          o,
          { buffer: head, offset: 0, length: R },
          old,
          ref,
          adv,
          weight,
          loss,
          op.grpoGradOffset(R),
        ),
        op.sum(n, { buffer: loss, offset: 0, length: R }, lossSum),
        // The step's loss over its micro-batches: lossTotal += lossSum.
        op.biasGrad(lossSum, 1, 1, this.lossTotal, true, dummy),
      ]);
    const backward: DispatchSpec[] = [
      ...headBackward.specs,
      op.layerNormBackwardDx(
        x[L]!,
        this.slice('transformer.ln_f.weight'),
        tmpD,
        statsF,
        dres,
        R,
        D,
        false,
      ),
      op.layerNormBackwardParams(
        x[L]!,
        tmpD,
        statsF,
        G,
        this.off('transformer.ln_f.weight'),
        this.off('transformer.ln_f.bias'),
        R,
        D,
      ),
    ];
    for (let l = L - 1; l >= 0; l--) {
      const s = save[l]!;
      const name = (p: string) => `transformer.h.${l}.${p}`;
      backward.push(
        // MLP: dres is d x[l+1]
        op.matmul({
          M: R,
          N: F,
          K: D,
          a: dres,
          b: w(l, 'mlp.c_proj.weight'),
          bStride: [1, D],
          c: dh,
          aux: s.pre,
          flags: op.MM_GELU_GRAD,
          dummy,
          version,
        }),
        op.matmul({
          M: F,
          N: D,
          K: R,
          a: s.act,
          aStride: [1, F],
          b: dres,
          c: gl(l, 'mlp.c_proj.weight'),
          flags: op.MM_ACCUMULATE,
          dummy,
          version,
        }),
        op.biasGrad(dres, R, D, gl(l, 'mlp.c_proj.bias'), true, dummy),
        op.matmul({
          M: R,
          N: D,
          K: F,
          a: dh,
          b: w(l, 'mlp.c_fc.weight'),
          bStride: [1, F],
          c: tmpD,
          dummy,
          version,
        }),
        op.matmul({
          M: D,
          N: F,
          K: R,
          a: s.mm,
          aStride: [1, D],
          b: dh,
          c: gl(l, 'mlp.c_fc.weight'),
          flags: op.MM_ACCUMULATE,
          dummy,
          version,
        }),
        op.biasGrad(dh, R, F, gl(l, 'mlp.c_fc.bias'), true, dummy),
        op.layerNormBackwardDx(s.xm, w(l, 'ln_2.weight'), tmpD, s.stats2, dres, R, D, true),
        op.layerNormBackwardParams(
          s.xm,
          tmpD,
          s.stats2,
          G,
          this.off(name('ln_2.weight')),
          this.off(name('ln_2.bias')),
          R,
          D,
        ),
        // attention: dres is d xm[l]
        op.matmul({
          M: R,
          N: D,
          K: D,
          a: dres,
          b: w(l, 'attn.c_proj.weight'),
          bStride: [1, D],
          c: tmpD,
          dummy,
          version,
        }),
        op.matmul({
          M: D,
          N: D,
          K: R,
          a: s.y,
          aStride: [1, D],
          b: dres,
          c: gl(l, 'attn.c_proj.weight'),
          flags: op.MM_ACCUMULATE,
          dummy,
          version,
        }),
        op.biasGrad(dres, R, D, gl(l, 'attn.c_proj.bias'), true, dummy),
        ...op.attentionBackward(
          { B, T, H, hd: D / H },
          s.qkv,
          s.y,
          tmpD,
          s.lse,
          dqkv,
          dsum,
          packed?.segments,
        ),
        op.matmul({
          M: R,
          N: D,
          K: 3 * D,
          a: dqkv,
          b: w(l, 'attn.c_attn.weight'),
          bStride: [1, 3 * D],
          c: tmpD,
          dummy,
          version,
        }),
        op.matmul({
          M: D,
          N: 3 * D,
          K: R,
          a: s.a,
          aStride: [1, D],
          b: dqkv,
          c: gl(l, 'attn.c_attn.weight'),
          flags: op.MM_ACCUMULATE,
          dummy,
          version,
        }),
        op.biasGrad(dqkv, R, 3 * D, gl(l, 'attn.c_attn.bias'), true, dummy),
        op.layerNormBackwardDx(x[l]!, w(l, 'ln_1.weight'), tmpD, s.stats1, dres, R, D, true),
        op.layerNormBackwardParams(
          x[l]!,
          tmpD,
          s.stats1,
          G,
          this.off(name('ln_1.weight')),
          this.off(name('ln_1.bias')),
          R,
          D,
        ),
      );
    }
    backward.push(
      ...op.embeddingBackward(
        ids,
        dres,
        G,
        B,
        T,
        D,
        this.off('transformer.wte.weight'),
        this.off('transformer.wpe.weight'),
        packed?.positions,
      ),
    );
    const forwardProgram = rt.program(specs);
    const rest = rt.program(backward);
    let lossProgram: Program | null = null;
    let lossParts: Resizable | null = null;
    let lossKey = '';
    let picked = R;
    // The loss program is rebuilt outside the activations' collect: free it by hand.
    const loseLoss = () => {
      if (lossProgram) rt.destroyProgram(lossProgram);
      for (const buffer of lossParts?.buffers ?? []) rt.free(buffer);
      lossProgram = null;
      lossParts = null;
    };
    const acts: Activations & { parts(o: GrpoOptions): Program[] } = {
      B,
      T,
      ids,
      packed,
      targets,
      old,
      ref,
      adv,
      weight,
      head,
      loss,
      lossSum,
      x,
      qkv: save.map((s) => s.qkv),
      program: forwardProgram,
      release: loseLoss,
      pick(rows: Uint32Array, targetsAt: Uint32Array) {
        if (rows.length !== targetsAt.length || rows.length > R)
          throw new Error(`pick: ${rows.length} rows, ${targetsAt.length} targets, R = ${R}`);
        const back = new Uint32Array(R).fill(0xffffffff);
        rows.forEach((r, i) => {
          back[r] = i;
        });
        if (rows.length > 0) {
          rt.write(sel, rows);
          rt.write(targets, targetsAt);
        }
        rt.write(inv, back);
        picked = rows.length;
        headForward.resize(picked);
        headBackward.resize(picked);
        lossParts?.resize(picked);
      },
      parts(o: GrpoOptions) {
        const k = `${o.epsilonLow}/${o.epsilonHigh}/${o.beta}`;
        if (!lossProgram || k !== lossKey) {
          loseLoss();
          lossParts = lossSpecs(o);
          lossParts.resize(picked);
          lossProgram = rt.program(lossParts.specs);
          lossKey = k;
        }
        return [forwardProgram, lossProgram, rest];
      },
    };
    return acts;
  }

  /**
   * Records and submits one whole training step (one command buffer); reads back its report.
   * Micro-batches: `pass.first` false keeps the gradients (and loss) of the earlier passes,
   * `pass.last` false leaves the update for a later pass (the report then has only log-probs;
   * the weights give every token its whole-batch normalizer, so the passes sum to the step).
   */
  async trainStep(
    batch: TrainBatch,
    o: StepOptions,
    readLogp = false,
    pass: { first: boolean; last: boolean } = { first: true, last: true },
  ): Promise<StepReport> {
    const { B, T } = batch;
    const R = B * T;
    for (const [name, a] of Object.entries({
      ids: batch.ids,
      oldLogp: batch.oldLogp,
      refLogp: batch.refLogp,
      advantage: batch.advantage,
      weight: batch.weight,
    }))
      if (a.length !== R) throw new Error(`trainStep: ${name} has ${a.length} ≠ ${B}×${T}`);
    const acts = this.activations(
      B,
      T,
      1 / o.temperature,
      batch.packed !== undefined,
    ) as Activations & {
      parts(o: GrpoOptions): Program[];
    };
    const rt = this.rt;
    this.writePacked(acts, batch.packed);
    // Rows of weight 0 (prompts, padding) add nothing to the loss: the head skips them, and
    // each sequence's last position, which predicts no token of it.
    const picked: number[] = [];
    batch.weight.forEach((w, r) => {
      if (w !== 0 && r % T !== T - 1) picked.push(r);
    });
    const rows = Uint32Array.from(picked);
    this.writeTokens(acts, B, T, batch.ids, rows);
    if (rows.length > 0) {
      const at = (a: Float32Array) => Float32Array.from(rows, (r) => a[r] ?? 0);
      rt.write(acts.old, at(batch.oldLogp));
      rt.write(acts.ref, at(batch.refLogp));
      rt.write(acts.adv, at(batch.advantage));
      rt.write(acts.weight, at(batch.weight));
    }
    const grads = this.grads;
    const total = this.lossTotal;
    const [fwd, lossP, rest] = acts.parts(o);
    const clear = (enc: GPUCommandEncoder) => {
      enc.clearBuffer(grads);
      enc.clearBuffer(total);
    };
    if (!pass.last) {
      rt.submit([...(pass.first ? [clear] : []), fwd!, lossP!, rest!]);
      if (!readLogp)
        return { loss: Number.NaN, gradNorm: Number.NaN, applied: false, clipped: false };
      const [head] = await rt.read([headSlice(acts, rows)]);
      return {
        loss: Number.NaN,
        gradNorm: Number.NaN,
        applied: false,
        clipped: false,
        ...spread(head as Float32Array, rows, R),
      };
    }
    this.step++;
    const s = {
      lr: o.lr,
      beta1: this.adam.beta1,
      beta2: this.adam.beta2,
      eps: this.adam.eps,
      weightDecay: this.adam.weightDecay,
      c1: 1 - this.adam.beta1 ** this.step,
      c2: 1 - this.adam.beta2 ** this.step,
      maxGradNorm: o.maxGradNorm,
    };
    rt.device.queue.writeBuffer(this.adamUniforms, 0, op.adamwUniforms(this.layout.total, s));
    rt.submit([...(pass.first ? [clear] : []), fwd!, lossP!, rest!, this.update()]);
    const reads: Bindable[] = [this.stats];
    if (readLogp) reads.push(headSlice(acts, rows));
    const [stats, head] = await rt.read(reads);
    const st = stats as Float32Array;
    const applied = st[1] === 1;
    if (!applied) this.step--; // a skipped step leaves Adam's clock where it was
    const report: StepReport = {
      loss: st[3] ?? Number.NaN,
      gradNorm: st[0] ?? Number.NaN,
      applied,
      clipped: applied && (st[2] ?? 1) < 1,
    };
    if (head) Object.assign(report, spread(head, rows, R));
    return report;
  }

  /**
   * The forward pass alone (no loss, no update): per position r, log π(ids[b, t+1]) and the
   * entropy at `temperature` ([B·T] each), at `rows` (default: every position but each row's
   * last); 0 elsewhere.
   */
  async logProbs(
    B: number,
    T: number,
    ids: Uint32Array,
    temperature: number,
    rows?: Uint32Array,
    packed?: PackedRows,
  ): Promise<{ logp: Float32Array; entropy: Float32Array }> {
    const R = B * T;
    const at = rows ?? Uint32Array.from({ length: R }, (_, r) => r).filter((r) => r % T !== T - 1);
    const acts = this.activations(B, T, 1 / temperature, packed !== undefined);
    this.writePacked(acts, packed);
    this.writeTokens(acts, B, T, ids, at);
    this.rt.submit([acts.program]);
    const [head] = await this.rt.read([headSlice(acts, at)]);
    return spread(head as Float32Array, at, R);
  }

  /** Packed rows' positions (within the context) and segments. */
  private writePacked(acts: Activations, packed: PackedRows | undefined): void {
    if (!packed || !acts.packed) return;
    for (const position of packed.positions)
      if (position >= this.config.nCtx)
        throw new Error(`position ${position} exceeds the context of ${this.config.nCtx}`);
    this.rt.write(acts.packed.positions, packed.positions);
    this.rt.write(acts.packed.segments, packed.segments);
  }

  /** The tokens, and the picked rows with their targets ids[b, t+1]. */
  private writeTokens(
    acts: Activations,
    B: number,
    T: number,
    ids: Uint32Array,
    rows: Uint32Array,
  ): void {
    if (ids.length !== B * T) throw new Error(`ids has ${ids.length} ≠ ${B}×${T}`);
    for (const r of rows)
      if (r >= B * T || r % T === T - 1)
        throw new Error(`row ${r} predicts no token of its sequence (T = ${T})`);
    this.rt.write(acts.ids, ids);
    acts.pick(
      rows,
      Uint32Array.from(rows, (r) => ids[r + 1] ?? 0),
    );
  }

  /** Dispatches in one training step at this shape (for the bench). */
  dispatchesPerStep(B: number, T: number, o: StepOptions): number {
    const acts = this.activations(B, T, 1 / o.temperature) as Activations & {
      parts(o: GrpoOptions): Program[];
    };
    return acts.parts(o).reduce((n, p) => n + p.size, 0) + this.update().size;
  }

  destroy(): void {
    this.rt.destroy();
  }
}

/** logp | entropy of the picked rows, as the head kernel left them. */
function headSlice(acts: Activations, rows: Uint32Array): Slice {
  return { buffer: acts.head, offset: 0, length: 2 * rows.length };
}

/** The picked rows' logp | entropy spread back to [R] arrays (0 at the rows not picked). */
function spread(
  head: Float32Array,
  rows: Uint32Array,
  R: number,
): { logp: Float32Array; entropy: Float32Array } {
  const logp = new Float32Array(R);
  const entropy = new Float32Array(R);
  rows.forEach((r, i) => {
    logp[r] = head[i] ?? 0;
    entropy[r] = head[rows.length + i] ?? 0;
  });
  return { logp, entropy };
}

export interface LayerBuffers {
  a: GPUBuffer;
  stats1: GPUBuffer;
  qkv: GPUBuffer;
  y: GPUBuffer;
  lse: GPUBuffer;
  xm: GPUBuffer;
  mm: GPUBuffer;
  stats2: GPUBuffer;
  pre: GPUBuffer;
  act: GPUBuffer;
}
