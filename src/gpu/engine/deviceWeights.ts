// A model's own weights as a DevicePolicy's trained parameters (full-parameter training): the
// flat f32 buffer of a trainable DeviceTransformer, with its gradients and AdamW's moments
// (flatAdam.ts). This file owns their gradients' dispatches at each place the forward reads a
// weight — a projection's dW += dyᵀ·x and its bias's column sum, a norm's weight and bias, the
// embedding's rows and learned positions, an untied head — and their exchange with the host by
// checkpoint name (Conv1D weights transposed back to [in, out]).
import type { DeviceMatrix, DeviceNorm, FlatWeights } from './deviceCheckpoint';
import type { DeviceTransformer } from './deviceTransformer';
import { FlatAdam } from './flatAdam';
import {
  biasGrad,
  embeddingBackward,
  layerNormBackwardParams,
  MM_ACCUMULATE,
  matmul,
  rmsNormBackward,
} from './ops';
import type { Bindable, DispatchSpec, GpuRuntime, Slice } from './runtime';

/** Tensors by checkpoint name, in the checkpoint's layout. */
export type NamedTensors = Map<string, Float32Array>;

export class DeviceWeights extends FlatAdam {
  private readonly flat: FlatWeights;

  constructor(
    rt: GpuRuntime,
    readonly model: DeviceTransformer,
  ) {
    const flat = model.flat;
    if (!flat)
      throw new Error('full-parameter training needs a trainable model (its weights f32, flat)');
    // Weight decay on matrices only, as the tfjs AdamW (model/adamw.ts) decays rank ≥ 2.
    const decay = new Float32Array(flat.size);
    for (const t of flat.tensors)
      if (t.shape.length >= 2)
        decay.fill(1, t.offset, t.offset + t.shape.reduce((a, b) => a * b, 1));
    super(rt, flat.buffer, flat.size, 'weights', decay);
    this.flat = flat;
  }

  /** The gradient's slice where `weight` lies in the weights. */
  gradOf(weight: Slice): Slice {
    return { buffer: this.grads, offset: weight.offset ?? 0 };
  }

  /** dW += dyᵀ·x for W [rows, cols]: dy R rows `dyStride` apart, x [R, cols]. */
  matrixGrad(
    R: number,
    dy: Bindable,
    dyStride: number,
    x: Bindable,
    m: DeviceMatrix,
  ): DispatchSpec {
    const part = m.parts[0] as DeviceMatrix['parts'][number];
    return matmul({
      M: m.rows,
      N: m.cols,
      K: R,
      a: dy,
      aStride: [1, dyStride],
      b: x,
      bStride: [m.cols, 1],
      c: this.gradOf(part.buffer),
      flags: MM_ACCUMULATE,
      version: this.model.matmul,
      dummy: this.rt.dummy,
      label: 'dW',
    });
  }

  /** A projection's gradients: dW, and its bias's (dy [R, width], width = W's rows). */
  projectionGrads(
    R: number,
    dy: GPUBuffer,
    x: GPUBuffer,
    m: DeviceMatrix,
    bias: Slice | null,
  ): DispatchSpec[] {
    const specs = [this.matrixGrad(R, dy, m.rows, x, m)];
    if (bias) specs.push(biasGrad(dy, R, m.rows, this.gradOf(bias), true, this.rt.dummy));
    return specs;
  }

  /** A norm's weight (and LayerNorm's bias) gradients from its input x, dy and stats. */
  normGrads(x: GPUBuffer, n: DeviceNorm, dy: GPUBuffer, stats: GPUBuffer, R: number): DispatchSpec {
    const D = this.model.config.hidden;
    if (n.bias)
      return layerNormBackwardParams(
        x,
        dy,
        stats,
        this.grads,
        n.weight.offset ?? 0,
        n.bias.offset ?? 0,
        R,
        D,
      );
    return rmsNormBackward(
      x,
      n.weight,
      dy,
      stats,
      this.rt.dummy.w,
      this.gradOf(n.weight),
      R,
      D,
      true,
    )[1] as DispatchSpec;
  }

  /**
   * The embedding's rows (and learned positions') gradients from dx of the first layer's input:
   * row r read token ids[r] at position positions[r].
   */
  embeddingGrads(ids: GPUBuffer, dx: GPUBuffer, positions: GPUBuffer, R: number): DispatchSpec[] {
    const m = this.model;
    const offsetOf = (t: DeviceMatrix) => t.parts[0]?.buffer.offset ?? 0;
    return embeddingBackward(
      ids,
      dx,
      this.grads,
      R,
      m.config.hidden,
      offsetOf(m.embed),
      m.positions ? { buffer: positions, wpeOff: offsetOf(m.positions) } : null,
    );
  }

  /** The weights by checkpoint name, in the checkpoint's layout. */
  async read(): Promise<NamedTensors> {
    return this.unpack(this.params);
  }

  /** Writes weights by checkpoint name (every tensor must be given). */
  write(values: ReadonlyMap<string, Float32Array>): void {
    writeNamed(this.rt, this.model, this.params, values);
  }

  /** AdamW's moments by checkpoint name, and the steps taken. */
  async exportMoments(): Promise<{ m: NamedTensors; v: NamedTensors; steps: number }> {
    return { m: await this.unpack(this.m), v: await this.unpack(this.v), steps: this.steps };
  }

  /** Restores exportMoments' state. */
  importMoments(
    m: ReadonlyMap<string, Float32Array>,
    v: ReadonlyMap<string, Float32Array>,
    steps: number,
  ): void {
    writeNamed(this.rt, this.model, this.m, m);
    writeNamed(this.rt, this.model, this.v, v);
    this.steps = steps;
  }

  /** A buffer laid out as the weights (theirs, their gradients', a moment's) by name. */
  async unpack(buffer: GPUBuffer): Promise<NamedTensors> {
    const all = await this.readAll(buffer);
    const out: NamedTensors = new Map();
    for (const t of this.flat.tensors) {
      const values = all.slice(t.offset, t.offset + t.shape.reduce((a, b) => a * b, 1));
      out.set(
        t.name,
        t.transposed ? transpose(values, t.shape[1] as number, t.shape[0] as number) : values,
      );
    }
    return out;
  }

  free(): void {
    this.freeState();
  }
}

/**
 * Tensors by checkpoint name into a buffer laid out as a trainable model's weights (the weights
 * themselves, or a moment): every tensor must be given, or (`some`) those given, each written
 * alone (a frozen copy's merged projections).
 */
export function writeNamed(
  rt: GpuRuntime,
  model: DeviceTransformer,
  buffer: GPUBuffer,
  values: ReadonlyMap<string, Float32Array>,
  some = false,
): void {
  const flat = model.flat;
  if (!flat) throw new Error('the model is not trainable (its weights are not one flat buffer)');
  const host = some ? null : new Float32Array(flat.size);
  const known = new Set<string>();
  for (const t of flat.tensors) {
    const v = values.get(t.name);
    if (!v && some) continue;
    known.add(t.name);
    const n = t.shape.reduce((a, b) => a * b, 1);
    if (!v || v.length !== n)
      throw new Error(
        `${t.name}: ${v ? `${v.length} values` : 'missing'}, the model holds [${t.shape.join(', ')}]`,
      );
    const laid = t.transposed ? transpose(v, t.shape[0] as number, t.shape[1] as number) : v;
    if (host) host.set(laid, t.offset);
    else rt.write(buffer, laid, t.offset);
  }
  const unknown = some && [...values.keys()].find((name) => !known.has(name));
  if (unknown) throw new Error(`${unknown}: the model holds no such tensor`);
  if (host) rt.write(buffer, host);
}

/** [rows, cols] row-major as [cols, rows]. */
function transpose(values: Float32Array, rows: number, cols: number): Float32Array {
  const out = new Float32Array(values.length);
  for (let i = 0; i < rows; i++)
    for (let j = 0; j < cols; j++) out[j * rows + i] = values[i * cols + j] as number;
  return out;
}
