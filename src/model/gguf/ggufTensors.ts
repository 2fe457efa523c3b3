// A weight as a GGUF tensor: float32 values in PyTorch's row-major shape, narrowed to the
// file's type, with the dims reversed into ggml's innermost-first order. Norms and biases (1-D)
// stay F32 whatever the file's type, as llama.cpp's converter writes them.
import type { HfCheckpoint } from '../families/hfCheckpoint';
import type { LoraAdapter } from '../peft';
import { f32ToBf16, f32ToF16 } from '../safetensors';
import type { GgmlTypeName, GgufTensor } from './ggufFile';

/** What a GGUF export takes: a checkpoint as the one loader read it, a role's adapter to merge. */
export interface CheckpointGgufInput {
  checkpoint: HfCheckpoint;
  adapter: LoraAdapter | null;
  dtype: GgufDtype;
  /** general.name */
  name: string;
}

/** What `--dtype` names: the type of the file's matrices. */
export const GGUF_DTYPES = ['f32', 'f16', 'bf16'] as const;
export type GgufDtype = (typeof GGUF_DTYPES)[number];

const TYPE_OF: Record<GgufDtype, GgmlTypeName> = { f32: 'F32', f16: 'F16', bf16: 'BF16' };

/** general.file_type (llama_ftype): all F32 0, mostly F16 1, mostly BF16 32. */
export const FILE_TYPE: Record<GgufDtype, number> = { f32: 0, f16: 1, bf16: 32 };

export function ggufTensor(
  name: string,
  shape: readonly number[],
  values: Float32Array,
  dtype: GgufDtype,
): GgufTensor {
  const type: GgmlTypeName = shape.length === 1 ? 'F32' : TYPE_OF[dtype];
  const dims = [...shape].reverse();
  if (type === 'F32') {
    // A copy, little-endian as every host the lab runs on is.
    return { name, dims, type, data: new Uint8Array(Float32Array.from(values).buffer) };
  }
  const narrow = type === 'BF16' ? f32ToBf16 : f32ToF16;
  const words = new Uint16Array(values.length);
  for (let i = 0; i < values.length; i++) words[i] = narrow(values[i]!);
  return { name, dims, type, data: new Uint8Array(words.buffer) };
}
