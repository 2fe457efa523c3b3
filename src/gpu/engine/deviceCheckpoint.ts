// A checkpoint's tensors onto the device, by the names a TransformerConfig gives: each tensor in
// a buffer of its own, 16-bit kept as stored (two to a u32 word) and a matrix split in row
// ranges under the binding limit (a 151,936-token vocabulary), or, for a model trained in full,
// every tensor f32 at an aligned offset of one flat buffer. Matrices that share an input are
// stacked by rows (q|k|v, gate|up); Conv1D weights ([in, out], GPT-2's) are transposed to
// [out, in] rows as they are read. DeviceTransformer's constructor places its weights here.
import { decodeHalves } from '../../model/halfFloat';
import { raw16, type StoredTensor, toFloat32 } from '../../model/safetensors';
import type { TransformerConfig } from '../../model/transformerConfig';
import type { WeightDtype } from './ops';
import { ALIGN_FLOATS, type GpuRuntime, type Slice } from './runtime';

/** One tensor of a checkpoint as safetensors holds it: 16-bit as raw bits, F32 as floats. */
export interface WeightTensor {
  dtype: WeightDtype;
  shape: readonly number[];
  data: Uint16Array | Float32Array;
}

/** The checkpoint's tensors by Hugging Face name (a Map works). */
export interface WeightTensors {
  get(name: string): WeightTensor | undefined;
}

/**
 * A checkpoint's stored tensors as the device takes them, each converted when asked for: from a
 * file on disk (readSafetensorsAt) a tensor is read then, so the whole file is never held.
 */
export function checkpointTensors(weights: ReadonlyMap<string, StoredTensor>): WeightTensors {
  return {
    get(name) {
      const t = weights.get(name);
      return t && deviceTensor(t);
    },
  };
}

/** Float32 weights by name (tfjs's values, say) as the device takes them, shapes by name. */
export function float32Tensors(
  values: ReadonlyMap<string, Float32Array>,
  shapeOf: (name: string) => readonly number[] | undefined,
): WeightTensors {
  return {
    get(name) {
      const data = values.get(name);
      const shape = shapeOf(name);
      return data && shape ? { dtype: 'F32', shape, data } : undefined;
    },
  };
}

/** A stored tensor as the device takes it: 16-bit as raw bits, F32 as floats. */
export function deviceTensor(t: StoredTensor): WeightTensor {
  return { dtype: t.dtype, shape: t.shape, data: t.dtype === 'F32' ? toFloat32(t) : raw16(t) };
}

/** A matrix W [rows, cols] on the device, in row ranges that each fit one binding. */
export interface DeviceMatrix {
  dtype: WeightDtype;
  rows: number;
  cols: number;
  parts: { buffer: Slice; row0: number; rows: number }[];
}

/** A norm's weight, and LayerNorm's bias. */
export interface DeviceNorm {
  weight: Slice;
  bias: Slice | null;
}

/** Where a checkpoint tensor lies in a trainable model's flat buffer (floats). */
export interface PlacedTensor {
  name: string;
  offset: number;
  /** The checkpoint's shape. */
  shape: readonly number[];
  /** Held transposed (a Conv1D weight, [in, out] in the checkpoint, as [out, in] rows). */
  transposed: boolean;
}

/** A trainable model's weights: every tensor f32 in one buffer, each at an aligned offset. */
export interface FlatWeights {
  buffer: GPUBuffer;
  size: number;
  tensors: PlacedTensor[];
}

/** A trainable model's tensors while they are placed: written in one go by finish(). */
interface Staging {
  slices: Slice[];
  values: [number, Float32Array][];
  size: number;
}

/**
 * Places a checkpoint's tensors on the device, recording each (`placed`): in buffers of their
 * own, or (trainable) in one flat f32 buffer that finish() writes.
 */
export class WeightPlacer {
  readonly placed: PlacedTensor[] = [];
  private staging: Staging | null;

  constructor(
    private readonly rt: GpuRuntime,
    private readonly weights: WeightTensors,
    private readonly maxBinding: number,
    trainable: boolean,
  ) {
    this.staging = trainable ? { slices: [], values: [], size: 0 } : null;
  }

  /** The flat buffer with every placed value (null: not trainable, each tensor already written). */
  finish(): FlatWeights | null {
    return this.staging ? this.uploadFlat(this.staging) : null;
  }

  private tensor(name: string, shape: number[]): WeightTensor {
    const t = this.weights.get(name);
    if (!t) throw new Error(`the checkpoint has no tensor ${name}`);
    if (t.shape.length !== shape.length || t.shape.some((n, i) => n !== shape[i]))
      throw new Error(
        `${name} has shape [${t.shape.join(', ')}], the config says [${shape.join(', ')}]`,
      );
    return t;
  }

  private floats(t: WeightTensor): Float32Array {
    return t.dtype === 'F32'
      ? (t.data as Float32Array)
      : decodeHalves(t.dtype, t.data as Uint16Array);
  }

  /** Room for `floats`: a buffer of its own, or (trainable) an aligned slice of the flat one. */
  private place(floats: number, label: string): Slice {
    const staging = this.staging;
    if (!staging) return { buffer: this.rt.buffer(floats, label) };
    // The flat buffer is made once every tensor is placed (uploadFlat fills in `buffer`).
    const slice = { buffer: null as unknown as GPUBuffer, offset: staging.size };
    staging.slices.push(slice);
    staging.size += Math.ceil(floats / ALIGN_FLOATS) * ALIGN_FLOATS;
    // Refused in words before any buffer is made.
    if (staging.size * 4 > this.maxBinding)
      throw new Error(
        `the model needs more than ${(this.maxBinding / 2 ** 20).toFixed(1)} MiB for its weights in one buffer (and as much for gradients and each Adam moment), as training all of them on the kernels takes; this adapter allows ${(this.maxBinding / 2 ** 20).toFixed(1)} MiB (${this.maxBinding} bytes): choose a smaller preset (width, layers) or vocabulary, or train a LoRA adapter`,
      );
    return slice;
  }

  /** Values into a placed slice at `at` floats (16-bit words as u32s, two to a word). */
  private put(slice: Slice, values: Float32Array | Uint32Array, at = 0): void {
    if (this.staging) {
      if (!(values instanceof Float32Array)) throw new Error('a trainable model holds f32 only');
      this.staging.values.push([(slice.offset ?? 0) + at, values]);
    } else this.rt.write(slice.buffer, values, at);
  }

  /** The trainable model's one buffer, every staged value written into it. */
  private uploadFlat(staging: Staging): FlatWeights {
    const size = Math.max(staging.size, ALIGN_FLOATS);
    const host = new Float32Array(size);
    for (const [at, values] of staging.values) host.set(values, at);
    const buffer = this.rt.buffer(size, 'weights');
    this.rt.write(buffer, host);
    for (const slice of staging.slices) slice.buffer = buffer;
    this.staging = null;
    return { buffer, size, tensors: this.placed };
  }

  /** The tensor's values as the device holds them: f32, or (not trainable) 16-bit as stored. */
  private widened(t: WeightTensor): WeightTensor {
    return this.staging && t.dtype !== 'F32'
      ? { dtype: 'F32', shape: t.shape, data: this.floats(t) }
      : t;
  }

  vector(name: string, n: number): Slice {
    return this.concatVectors([name], [n]);
  }

  /** Vectors end to end in one slice (q|k|v's biases). */
  concatVectors(names: string[], sizes: number[]): Slice {
    const total = sizes.reduce((a, b) => a + b, 0);
    const slice = this.place(total, names[0] as string);
    let at = 0;
    names.forEach((name, i) => {
      const n = sizes[i] as number;
      this.put(slice, this.floats(this.tensor(name, [n])), at);
      this.placed.push({ name, offset: (slice.offset ?? 0) + at, shape: [n], transposed: false });
      at += n;
    });
    return slice;
  }

  /**
   * Matrices [rows_i, cols] stacked by rows (q|k|v, gate|up) into one device matrix in its
   * checkpoint dtype, in row ranges of at most maxBinding bytes (multiples of 64 rows). A Conv1D
   * weight ('in-out': stored [cols, rows]) is transposed as it is read.
   */
  matrix(
    names: [string, number][],
    cols: number,
    layout: TransformerConfig['weightLayout'],
  ): DeviceMatrix {
    const tensors = names.map(([name, rows]) =>
      this.widened(
        layout === 'in-out'
          ? transposed(this.tensor(name, [cols, rows]))
          : this.tensor(name, [rows, cols]),
      ),
    );
    const label = (names[0] as [string, number])[0];
    const dtype = (tensors[0] as WeightTensor).dtype;
    if (tensors.some((t) => t.dtype !== dtype))
      throw new Error(
        `${names.map(([n]) => n).join(', ')} mix dtypes (${tensors.map((t) => t.dtype).join(', ')})`,
      );
    const bytes = dtype === 'F32' ? 4 : 2;
    const rows = tensors.reduce((a, t) => a + (t.shape[0] as number), 0);
    // A trainable model's matrix is one part (its flat buffer is one binding).
    const perPart = this.staging
      ? rows
      : Math.max(64, Math.floor(this.maxBinding / (cols * bytes) / 64) * 64);
    const parts: DeviceMatrix['parts'] = [];
    for (let row0 = 0; row0 < rows; row0 += perPart) {
      const n = Math.min(perPart, rows - row0);
      const buffer = this.place((n * cols * bytes) / 4, `${label} rows ${row0}..`);
      // Copy the rows of each source tensor that fall into this part.
      let start = 0;
      for (const t of tensors) {
        const tRows = t.shape[0] as number;
        const lo = Math.max(row0, start);
        const hi = Math.min(row0 + n, start + tRows);
        if (lo < hi) {
          const from = (lo - start) * cols;
          const to = (hi - start) * cols;
          const words =
            dtype === 'F32'
              ? (t.data as Float32Array).subarray(from, to)
              : u32Words(t.data as Uint16Array, from, to);
          this.put(buffer, words, ((lo - row0) * cols * bytes) / 4);
        }
        start += tRows;
      }
      parts.push({ buffer, row0, rows: n });
    }
    if (this.staging) {
      let start = 0;
      names.forEach(([name, tRows]) => {
        const { shape } = this.weights.get(name) as WeightTensor;
        const offset =
          ((parts[0] as DeviceMatrix['parts'][number]).buffer.offset ?? 0) + start * cols;
        this.placed.push({ name, offset, shape, transposed: layout === 'in-out' });
        start += tRows;
      });
    }
    return { dtype, rows, cols, parts };
  }
}

/** Words [from, to) of 16-bit data as u32s (from and to even). */
function u32Words(data: Uint16Array, from: number, to: number): Uint32Array {
  const byteOffset = data.byteOffset + from * 2;
  if (byteOffset % 4 === 0) return new Uint32Array(data.buffer, byteOffset, (to - from) / 2);
  const copy = data.slice(from, to);
  return new Uint32Array(copy.buffer, 0, (to - from) / 2);
}

/** A [rows, cols] tensor as [cols, rows] (Conv1D's [in, out] as nn.Linear's [out, in]). */
function transposed(t: WeightTensor): WeightTensor {
  const [rows, cols] = t.shape as [number, number];
  const out = t.dtype === 'F32' ? new Float32Array(rows * cols) : new Uint16Array(rows * cols);
  for (let i = 0; i < rows; i++)
    for (let j = 0; j < cols; j++) out[j * rows + i] = t.data[i * cols + j] as number;
  return { dtype: t.dtype, shape: [cols, rows], data: out };
}
