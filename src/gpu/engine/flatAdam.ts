// AdamW over one flat buffer of parameters on the device (adamw.wgsl): their gradients, both
// moments, global-norm clipping, and the guard (a non-finite loss or gradient skips the step).
// The trained parameters of a DevicePolicy extend it: LoRA's adapters (loraAdapters.ts) or a
// model's own float32 weights (deviceWeights.ts).
import { type AdamWStep, adamw, adamwUniforms, NORM_PARTIALS } from './ops';
import type { GpuRuntime } from './runtime';

export interface AdamWOptions {
  lr: number;
  beta1?: number;
  beta2?: number;
  eps?: number;
  weightDecay?: number;
  /** Global-norm clipping (0: none). */
  maxGradNorm?: number;
}

export class FlatAdam {
  /** The parameters' gradients (a backward adds to them). */
  readonly grads: GPUBuffer;
  protected readonly m: GPUBuffer;
  protected readonly v: GPUBuffer;
  private readonly decay: GPUBuffer;
  private readonly partials: GPUBuffer;
  private readonly stats: GPUBuffer;
  /** The step's loss, which the guard reads (a non-finite loss skips the step). */
  readonly loss: GPUBuffer;
  /** AdamW steps taken (bias correction). */
  steps = 0;

  constructor(
    protected readonly rt: GpuRuntime,
    /** The flat buffer of parameters (the subclass fills it). */
    readonly params: GPUBuffer,
    /** Floats of parameters (and of their gradients, and of each moment). */
    readonly size: number,
    label: string,
    /** Where weight decay applies (1) or not (0); default everywhere. */
    decay?: Float32Array,
  ) {
    this.grads = rt.buffer(size, `${label} grads`);
    this.m = rt.buffer(size, `${label} adam m`);
    this.v = rt.buffer(size, `${label} adam v`);
    this.decay = rt.buffer(size, `${label} decay`);
    rt.write(this.decay, decay ?? new Float32Array(size).fill(1));
    this.partials = rt.buffer(3 * NORM_PARTIALS, `${label} norm partials`);
    this.stats = rt.buffer(4, `${label} adam stats`);
    this.loss = rt.buffer(4, `${label} loss`);
  }

  /**
   * One AdamW step from the gradients on the device (guarded: a non-finite gradient skips it);
   * returns the gradients' global norm and whether the step was taken.
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
    const program = this.rt.program(
      adamw(this.size, adamwUniforms(this.size, step), {
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
    this.rt.submit([program]);
    this.rt.destroyProgram(program);
    const [stats] = await this.rt.read([{ buffer: this.stats, offset: 0, length: 4 }]);
    const ok = (stats as Float32Array)[1] === 1;
    if (ok) this.steps = t;
    return { gradNorm: (stats as Float32Array)[0] as number, ok };
  }

  /** The whole of a buffer laid out as the parameters (theirs, their gradients', a moment's). */
  protected async readAll(buffer: GPUBuffer): Promise<Float32Array> {
    const [all] = await this.rt.read([{ buffer, offset: 0, length: this.size }]);
    return all as Float32Array;
  }

  /** Frees the gradients, the moments and the step's state (the parameters are the owner's). */
  protected freeState(): void {
    for (const b of [this.grads, this.m, this.v, this.decay, this.partials, this.stats, this.loss])
      this.rt.free(b);
  }
}
