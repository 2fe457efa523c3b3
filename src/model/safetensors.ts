// The safetensors format, written and read by hand: an 8-byte little-endian header
// length, a JSON header {name: {dtype, shape, data_offsets: [begin, end]}, __metadata__},
// then the raw little-endian tensor bytes. The lab writes F32; it reads F32, F16 and BF16
// (Hugging Face checkpoints are mostly 16-bit). A 16-bit tensor stays available as its raw
// words (`raw16`), so the WGSL engine can keep weights 16-bit on the device.

import { repeatedTopLevelKey } from './jsonKeys';

export type SafetensorsDtype = 'F32' | 'F16' | 'BF16';

const BYTES: Record<SafetensorsDtype, number> = { F32: 4, F16: 2, BF16: 2 };

export interface NamedTensor {
  shape: number[];
  data: Float32Array;
}

/**
 * One tensor as the file holds it: its bytes are a view into the file's buffer, or, for a file
 * on a local disk (readSafetensorsAt), read from the disk each time they are asked for.
 */
export interface StoredTensor {
  dtype: SafetensorsDtype;
  shape: number[];
  readonly bytes: Uint8Array;
}

export interface HeaderEntry {
  dtype: SafetensorsDtype;
  shape: number[];
  data_offsets: [number, number];
}

export interface SafetensorsHeader {
  entries: Map<string, HeaderEntry>;
  metadata: Record<string, string>;
  /** Where the tensor data starts (8 + the header's length). */
  dataStart: number;
  /** The file's size the header implies: dataStart + the last tensor's end. */
  fileSize: number;
}

export function encodeSafetensors(
  tensors: Map<string, NamedTensor>,
  metadata: Record<string, string> = {},
  dtype: SafetensorsDtype = 'F32',
): Uint8Array {
  const header: Record<string, HeaderEntry | Record<string, string>> = {};
  if (Object.keys(metadata).length) header.__metadata__ = metadata;
  const width = BYTES[dtype];
  let offset = 0;
  for (const [name, t] of tensors) {
    const count = t.shape.reduce((a, b) => a * b, 1);
    if (count !== t.data.length)
      throw new Error(`safetensors: ${name} has ${t.data.length} values for shape [${t.shape}]`);
    header[name] = { dtype, shape: t.shape, data_offsets: [offset, offset + width * count] };
    offset += width * count;
  }
  let json = JSON.stringify(header);
  // Pad the header with spaces so the data starts 8-byte aligned (as the Rust writer does).
  json += ' '.repeat((8 - ((8 + json.length) % 8)) % 8);
  const headerBytes = new TextEncoder().encode(json);
  const out = new Uint8Array(8 + headerBytes.length + offset);
  const view = new DataView(out.buffer);
  view.setBigUint64(0, BigInt(headerBytes.length), true);
  out.set(headerBytes, 8);
  let at = 8 + headerBytes.length;
  for (const t of tensors.values()) {
    const dv = new DataView(out.buffer, at, t.data.length * width);
    for (let i = 0; i < t.data.length; i++) {
      const v = t.data[i]!;
      if (dtype === 'F32') dv.setFloat32(4 * i, v, true);
      else dv.setUint16(2 * i, dtype === 'F16' ? f32ToF16(v) : f32ToBf16(v), true);
    }
    at += t.data.length * width;
  }
  return out;
}

/**
 * The largest header the lab reads: Hugging Face's own reader refuses headers over 100 MB (a
 * header only names tensors; a bigger one is an attack on the reader, not a model).
 */
export const MAX_SAFETENSORS_HEADER_BYTES = 100_000_000;

/**
 * Reads and checks the header, as untrusted input: its length against the file and the 100 MB
 * bound, JSON with every name once, each dtype one the lab reads, each shape's element count a
 * safe integer that matches its byte range, the ranges inside the data, not overlapping, and
 * covering it whole. `bytes` may be only the file's beginning (a download checks the header
 * before the rest arrives); `fileSize`, when known, is checked against what the header implies.
 * Every refusal names the file and says what is wrong.
 */
export function readSafetensorsHeader(
  bytes: Uint8Array,
  file = 'model.safetensors',
  fileSize?: number,
): SafetensorsHeader {
  const fail = (why: string): never => {
    throw new Error(`${file} is corrupt: ${why}`);
  };
  const size = fileSize ?? bytes.length;
  if (size < 8) fail(`${size} bytes, shorter than the 8-byte header length`);
  const view = new DataView(bytes.buffer, bytes.byteOffset, bytes.byteLength);
  const headerLength = Number(view.getBigUint64(0, true));
  if (headerLength > size - 8) {
    fail(
      `header claims ${headerLength} bytes but the file has ${size - 8} after the length (truncated?)`,
    );
  }
  if (headerLength > MAX_SAFETENSORS_HEADER_BYTES)
    fail(`header claims ${headerLength} bytes, over the ${MAX_SAFETENSORS_HEADER_BYTES} allowed`);
  if (8 + headerLength > bytes.length) fail('the header is not all here (truncated?)');
  let text: string;
  let header: Record<string, unknown>;
  try {
    text = new TextDecoder('utf-8', { fatal: true }).decode(bytes.subarray(8, 8 + headerLength));
    header = JSON.parse(text);
  } catch (err) {
    return fail(`header is not valid JSON (${(err as Error).message})`);
  }
  if (typeof header !== 'object' || header === null || Array.isArray(header))
    fail('header is not an object');
  const repeated = repeatedTopLevelKey(text);
  if (repeated !== null) fail(`the header names ${repeated} twice`);
  const dataStart = 8 + headerLength;
  const dataLength = size - dataStart;
  const entries = new Map<string, HeaderEntry>();
  let metadata: Record<string, string> = {};
  const spans: [number, number, string][] = [];
  for (const [name, raw] of Object.entries(header)) {
    if (name === '__metadata__') {
      if (
        typeof raw !== 'object' ||
        raw === null ||
        Object.values(raw).some((v) => typeof v !== 'string')
      )
        fail('__metadata__ is not an object of strings');
      metadata = raw as Record<string, string>;
      continue;
    }
    const entry = raw as Partial<HeaderEntry>;
    const dtype = entry?.dtype as SafetensorsDtype;
    if (!Object.hasOwn(BYTES, dtype))
      fail(`${name}: dtype ${String(entry?.dtype)} (F32, F16 and BF16 are supported)`);
    const shape = entry.shape;
    const offsets = entry.data_offsets;
    if (!Array.isArray(shape) || !shape.every((n) => Number.isSafeInteger(n) && n >= 0))
      fail(`${name}: bad shape`);
    if (!Array.isArray(offsets) || offsets.length !== 2) fail(`${name}: bad data_offsets`);
    const [begin, end] = offsets as [number, number];
    let count = 1;
    for (const n of shape as number[]) count *= n;
    if (!Number.isSafeInteger(count * BYTES[dtype]))
      fail(`${name}: shape [${shape}] has more elements than any file holds`);
    if (
      !(
        Number.isSafeInteger(begin) &&
        Number.isSafeInteger(end) &&
        begin >= 0 &&
        end - begin === BYTES[dtype] * count
      )
    ) {
      fail(`${name}: data_offsets [${begin}, ${end}] do not fit ${dtype} shape [${shape}]`);
    }
    if (end > dataLength)
      fail(`${name}: data ends at ${end} but only ${dataLength} data bytes exist (truncated?)`);
    spans.push([begin, end, name]);
    entries.set(name, { dtype, shape: shape as number[], data_offsets: [begin, end] });
  }
  spans.sort((a, b) => a[0] - b[0]);
  for (let i = 1; i < spans.length; i++) {
    if (spans[i]![0] < spans[i - 1]![1]) fail(`${spans[i]![2]} overlaps ${spans[i - 1]![2]}`);
  }
  const used = spans.reduce((n, [b, e]) => n + e - b, 0);
  if (used !== dataLength) fail(`${dataLength - used} data bytes belong to no tensor`);
  return { entries, metadata, dataStart, fileSize: size };
}

/** Every tensor of a whole file, as views into `bytes` (nothing converted yet). */
export function readSafetensors(
  bytes: Uint8Array,
  file = 'model.safetensors',
): { tensors: Map<string, StoredTensor>; metadata: Record<string, string> } {
  const { entries, metadata, dataStart } = readSafetensorsHeader(bytes, file);
  const tensors = new Map<string, StoredTensor>();
  for (const [
    name,
    {
      dtype,
      shape,
      data_offsets: [begin, end],
    },
  ] of entries) {
    tensors.set(name, { dtype, shape, bytes: bytes.subarray(dataStart + begin, dataStart + end) });
  }
  return { tensors, metadata };
}

/**
 * Every tensor of a file on a local disk, from its header alone (checked as readSafetensorsHeader
 * does): a tensor's bytes are read with `readAt` when asked for, so a loader that takes one
 * tensor at a time (onto the device, or widened for tfjs) never holds the whole file.
 */
export function readSafetensorsAt(
  readAt: (offset: number, length: number) => Uint8Array,
  size: number,
  file: string,
): Map<string, StoredTensor> {
  const first = readAt(0, Math.min(8, size));
  const claimed =
    size >= 8 ? Number(new DataView(first.buffer, first.byteOffset).getBigUint64(0, true)) : 0;
  // Only a header length that fits the file and the bound is read; any other is refused below.
  const whole = claimed <= size - 8 && claimed <= MAX_SAFETENSORS_HEADER_BYTES;
  const head = whole ? readAt(0, 8 + claimed) : first;
  const { entries, dataStart } = readSafetensorsHeader(head, file, size);
  const tensors = new Map<string, StoredTensor>();
  for (const [name, { dtype, shape, data_offsets }] of entries) {
    const [begin, end] = data_offsets;
    tensors.set(name, {
      dtype,
      shape,
      get bytes() {
        return readAt(dataStart + begin, end - begin);
      },
    });
  }
  return tensors;
}

/** The tensor's values widened to float32 (exactly: every F16 and BF16 value is a float32). */
export function toFloat32(t: StoredTensor): Float32Array {
  const bytes = t.bytes; // once: a file on disk reads it at each ask
  const count = bytes.length / BYTES[t.dtype];
  const out = new Float32Array(count);
  const dv = new DataView(bytes.buffer, bytes.byteOffset, bytes.byteLength);
  if (t.dtype === 'F32') for (let i = 0; i < count; i++) out[i] = dv.getFloat32(4 * i, true);
  else if (t.dtype === 'BF16') {
    const bits = new Uint32Array(out.buffer);
    for (let i = 0; i < count; i++) bits[i] = dv.getUint16(2 * i, true) << 16;
  } else for (let i = 0; i < count; i++) out[i] = f16ToF32(dv.getUint16(2 * i, true));
  return out;
}

/** A 16-bit tensor's raw words (F16 or BF16 bits, as the file holds them). */
export function raw16(t: StoredTensor): Uint16Array {
  if (t.dtype === 'F32') throw new Error('raw16: the tensor is F32');
  const bytes = t.bytes;
  const count = bytes.length / 2;
  // A view when the file's data is 2-byte aligned (it is when the header is padded), else a copy.
  if (bytes.byteOffset % 2 === 0) return new Uint16Array(bytes.buffer, bytes.byteOffset, count);
  const dv = new DataView(bytes.buffer, bytes.byteOffset, bytes.byteLength);
  return Uint16Array.from({ length: count }, (_, i) => dv.getUint16(2 * i, true));
}

export interface DecodedSafetensors {
  tensors: Map<string, NamedTensor>;
  metadata: Record<string, string>;
}

/** Parses and validates; a truncated or corrupt file is refused with a message saying why. */
export function decodeSafetensors(
  bytes: Uint8Array,
  file = 'model.safetensors',
): DecodedSafetensors {
  const { tensors, metadata } = readSafetensors(bytes, file);
  const out = new Map<string, NamedTensor>();
  for (const [name, t] of tensors) out.set(name, { shape: t.shape, data: toFloat32(t) });
  return { tensors: out, metadata };
}

const f32 = new Float32Array(1);
const u32 = new Uint32Array(f32.buffer);

/** IEEE half → float32, exactly (subnormals, infinities and NaN included). */
export function f16ToF32(h: number): number {
  const sign = h & 0x8000 ? -1 : 1;
  const exponent = (h >> 10) & 0x1f;
  const fraction = h & 0x3ff;
  if (exponent === 0) return sign * fraction * 2 ** -24;
  if (exponent === 31) return fraction ? Number.NaN : sign * Number.POSITIVE_INFINITY;
  return sign * (1 + fraction / 1024) * 2 ** (exponent - 15);
}

/** float32 → bfloat16 bits, rounded to nearest even (as torch's .to(torch.bfloat16)). */
export function f32ToBf16(v: number): number {
  f32[0] = v;
  const bits = u32[0]!;
  if (Number.isNaN(v)) return 0x7fc0;
  return ((bits + 0x7fff + ((bits >> 16) & 1)) >>> 16) & 0xffff;
}

/** float32 → IEEE half bits, rounded to nearest even; overflow goes to infinity. */
export function f32ToF16(v: number): number {
  if (Number.isNaN(v)) return 0x7e00;
  const sign = v < 0 || Object.is(v, -0) ? 0x8000 : 0;
  const a = Math.abs(v);
  if (a >= 65520) return sign | 0x7c00;
  if (a < 2 ** -24 / 2) return sign;
  if (a < 2 ** -14) return sign | roundEven(a / 2 ** -24); // subnormal: units of 2^-24
  let e = Math.floor(Math.log2(a));
  if (2 ** e > a) e -= 1; // log2 may round up just below a power of two
  if (2 ** (e + 1) <= a) e += 1;
  let m = roundEven((a / 2 ** e - 1) * 1024);
  if (m === 1024) {
    m = 0;
    e += 1;
  }
  if (e > 15) return sign | 0x7c00;
  return sign | ((e + 15) << 10) | m;
}

function roundEven(x: number): number {
  const r = Math.round(x);
  return Math.abs(x % 1) === 0.5 && r % 2 !== 0 ? r - 1 : r;
}
