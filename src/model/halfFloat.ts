// 16-bit floats as safetensors stores them (F16: IEEE half; BF16: the top half of an f32),
// to and from f32 bits. The device keeps such weights 16-bit and decodes them in the kernels
// (matmul.wgsl v5_b16, embedding.wgsl lookup16); these are the host's side of the same rules.

export type HalfDtype = 'F16' | 'BF16';

const f32 = new Float32Array(1);
const u32 = new Uint32Array(f32.buffer);

export function bf16ToF32(bits: number): number {
  u32[0] = (bits & 0xffff) << 16;
  return f32[0] as number;
}

/** Round to nearest even (NaN stays NaN). */
export function f32ToBf16(value: number): number {
  f32[0] = value;
  const x = u32[0] as number;
  if ((x & 0x7fffffff) > 0x7f800000) return (x >>> 16) | 0x40; // quiet NaN
  return ((x + 0x7fff + ((x >>> 16) & 1)) >>> 16) & 0xffff;
}

export function f16ToF32(bits: number): number {
  const sign = bits & 0x8000 ? -1 : 1;
  const exp = (bits >>> 10) & 0x1f;
  const frac = bits & 0x3ff;
  if (exp === 0) return sign * frac * 2 ** -24;
  if (exp === 31) return frac ? Number.NaN : sign * Number.POSITIVE_INFINITY;
  return sign * (1 + frac / 1024) * 2 ** (exp - 15);
}

/** Round to nearest even; overflow goes to ±Infinity, underflow through the subnormals. */
export function f32ToF16(value: number): number {
  f32[0] = value;
  const x = u32[0] as number;
  const sign = (x >>> 16) & 0x8000;
  const exp = (x >>> 23) & 0xff;
  const mant = x & 0x7fffff;
  if (exp === 0xff) return sign | 0x7c00 | (mant ? 0x200 : 0);
  const e = exp - 127 + 15;
  if (e >= 31) return sign | 0x7c00;
  if (e <= 0) {
    if (e < -10) return sign;
    const m = mant | 0x800000; // implicit bit
    const shift = 14 - e; // to a 10-bit subnormal fraction
    const half = 1 << (shift - 1);
    const rest = m & ((1 << shift) - 1);
    let out = m >>> shift;
    if (rest > half || (rest === half && out & 1)) out++;
    return sign | out;
  }
  let out = (e << 10) | (mant >>> 13);
  const rest = mant & 0x1fff;
  if (rest > 0x1000 || (rest === 0x1000 && out & 1)) out++; // a carry into the exponent is right
  return sign | out;
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
