// 16-bit floats as safetensors stores them (F16: IEEE half; BF16: the top half of an f32),
// to and from f32 bits. The device keeps such weights 16-bit and decodes them in the kernels
// (matmul.wgsl v5_b16, embedding.wgsl lookup); these are the host's side of the same rules (the
// f32 → 16-bit roundings are safetensors.ts', which writes them).

import { f16ToF32, f32ToBf16, f32ToF16 } from './safetensors';

export { f16ToF32, f32ToBf16, f32ToF16 };

export type HalfDtype = 'F16' | 'BF16';

const f32 = new Float32Array(1);
const u32 = new Uint32Array(f32.buffer);

export function bf16ToF32(bits: number): number {
  u32[0] = (bits & 0xffff) << 16;
  return f32[0] as number;
}

export function halfToF32(dtype: HalfDtype, bits: number): number {
  return dtype === 'BF16' ? bf16ToF32(bits) : f16ToF32(bits);
}

export function f32ToHalf(dtype: HalfDtype, value: number): number {
  return dtype === 'BF16' ? f32ToBf16(value) : f32ToF16(value);
}

/** A whole array decoded (for small tensors: norms, biases). */
export function decodeHalves(dtype: HalfDtype, bits: Uint16Array): Float32Array {
  const out = new Float32Array(bits.length);
  if (dtype === 'BF16') {
    const view = new Uint32Array(out.buffer);
    for (let i = 0; i < bits.length; i++) view[i] = (bits[i] as number) << 16;
  } else for (let i = 0; i < bits.length; i++) out[i] = f16ToF32(bits[i] as number);
  return out;
}
