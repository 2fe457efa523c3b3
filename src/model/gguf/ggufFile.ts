// GGUF v3, written from the format's published specification (ggml's docs/gguf.md): a header
// ("GGUF", version 3, tensor count, key/value count), the key/value pairs, one info record per
// tensor (name, dims innermost first, ggml type, offset into the data section), padding to the
// alignment, then each tensor's bytes, every one starting at a multiple of the alignment. All
// numbers little-endian. The file is returned as a list of parts (the header, then each tensor's
// bytes and padding) so Node can write a large model part by part and a page can make a Blob.

/** The value types of the key/value section (gguf_metadata_value_type). */
export const GGUF_VALUE = {
  UINT8: 0,
  INT8: 1,
  UINT16: 2,
  INT16: 3,
  UINT32: 4,
  INT32: 5,
  FLOAT32: 6,
  BOOL: 7,
  STRING: 8,
  ARRAY: 9,
  UINT64: 10,
  INT64: 11,
  FLOAT64: 12,
} as const;

/** The ggml tensor types the lab writes (ggml_type). */
export const GGML_TYPE = { F32: 0, F16: 1, BF16: 30 } as const;
export type GgmlTypeName = keyof typeof GGML_TYPE;
export const GGML_TYPE_BYTES: Record<GgmlTypeName, number> = { F32: 4, F16: 2, BF16: 2 };

export const GGUF_MAGIC = 'GGUF';
export const GGUF_VERSION = 3;
export const GGUF_ALIGNMENT = 32;

/** A metadata value with its GGUF type: what JavaScript's numbers cannot say alone. */
export type GgufValue =
  | { type: 'u32'; value: number }
  | { type: 'i32'; value: number }
  | { type: 'f32'; value: number }
  | { type: 'bool'; value: boolean }
  | { type: 'string'; value: string }
  | { type: 'u64'; value: number }
  | { type: 'array-string'; value: readonly string[] }
  | { type: 'array-i32'; value: readonly number[] }
  | { type: 'array-f32'; value: readonly number[] };

export interface GgufTensor {
  name: string;
  /** ggml's order: innermost (contiguous) dimension first, so a [rows, cols] matrix is [cols, rows]. */
  dims: number[];
  type: GgmlTypeName;
  /** The tensor's bytes, little-endian, dims' product × the type's width. */
  data: Uint8Array;
}

export interface GgufContents {
  /** In the order written; general.alignment is added when the alignment is not 32. */
  metadata: Array<[string, GgufValue]>;
  tensors: GgufTensor[];
}

const encoder = new TextEncoder();

/** Grows as it is written; little-endian throughout. */
class ByteWriter {
  private buffer = new Uint8Array(1 << 16);
  private view = new DataView(this.buffer.buffer);
  length = 0;

  private room(n: number): void {
    if (this.length + n <= this.buffer.length) return;
    let size = this.buffer.length * 2;
    while (size < this.length + n) size *= 2;
    const next = new Uint8Array(size);
    next.set(this.buffer.subarray(0, this.length));
    this.buffer = next;
    this.view = new DataView(next.buffer);
  }
  u8(v: number): void {
    this.room(1);
    this.view.setUint8(this.length, v);
    this.length += 1;
  }
  u32(v: number): void {
    this.room(4);
    this.view.setUint32(this.length, v, true);
    this.length += 4;
  }
  i32(v: number): void {
    this.room(4);
    this.view.setInt32(this.length, v, true);
    this.length += 4;
  }
  f32(v: number): void {
    this.room(4);
    this.view.setFloat32(this.length, v, true);
    this.length += 4;
  }
  u64(v: number): void {
    if (!Number.isSafeInteger(v) || v < 0) throw new Error(`gguf: ${v} is not a u64 length`);
    this.room(8);
    this.view.setBigUint64(this.length, BigInt(v), true);
    this.length += 8;
  }
  bytes(b: Uint8Array): void {
    this.room(b.length);
    this.buffer.set(b, this.length);
    this.length += b.length;
  }
  /** gguf_string_t: a u64 byte length, then UTF-8 without a terminator. */
  string(s: string): void {
    const b = encoder.encode(s);
    this.u64(b.length);
    this.bytes(b);
  }
  padTo(alignment: number): void {
    const pad = (alignment - (this.length % alignment)) % alignment;
    this.room(pad);
    this.buffer.fill(0, this.length, this.length + pad);
    this.length += pad;
  }
  result(): Uint8Array {
    return this.buffer.slice(0, this.length);
  }
}

function writeValue(w: ByteWriter, v: GgufValue): void {
  switch (v.type) {
    case 'u32':
      w.u32(GGUF_VALUE.UINT32);
      w.u32(v.value);
      return;
    case 'i32':
      w.u32(GGUF_VALUE.INT32);
      w.i32(v.value);
      return;
    case 'f32':
      w.u32(GGUF_VALUE.FLOAT32);
      w.f32(v.value);
      return;
    case 'bool':
      w.u32(GGUF_VALUE.BOOL);
      w.u8(v.value ? 1 : 0);
      return;
    case 'string':
      w.u32(GGUF_VALUE.STRING);
      w.string(v.value);
      return;
    case 'u64':
      w.u32(GGUF_VALUE.UINT64);
      w.u64(v.value);
      return;
    case 'array-string':
      arrayHeader(w, GGUF_VALUE.STRING, v.value.length);
      for (const s of v.value) w.string(s);
      return;
    case 'array-i32':
      arrayHeader(w, GGUF_VALUE.INT32, v.value.length);
      for (const x of v.value) w.i32(x);
      return;
    case 'array-f32':
      arrayHeader(w, GGUF_VALUE.FLOAT32, v.value.length);
      for (const x of v.value) w.f32(x);
      return;
  }
}

/** An array value's type tag, its element type and its length; the elements follow. */
function arrayHeader(w: ByteWriter, elementType: number, length: number) {
  w.u32(GGUF_VALUE.ARRAY);
  w.u32(elementType);
  w.u64(length);
}

/** The file as parts: header + metadata + tensor infos + padding, then each tensor and its padding. */
export function ggufParts(contents: GgufContents, alignment = GGUF_ALIGNMENT): Uint8Array[] {
  const names = new Set<string>();
  for (const [key] of contents.metadata) {
    if (names.has(key)) throw new Error(`gguf: the key ${key} is written twice`);
    names.add(key);
  }
  const metadata = [...contents.metadata];
  if (alignment !== GGUF_ALIGNMENT)
    metadata.push(['general.alignment', { type: 'u32', value: alignment }]);
  const w = new ByteWriter();
  w.bytes(encoder.encode(GGUF_MAGIC));
  w.u32(GGUF_VERSION);
  w.u64(contents.tensors.length);
  w.u64(metadata.length);
  for (const [key, value] of metadata) {
    w.string(key);
    writeValue(w, value);
  }
  let offset = 0;
  const seen = new Set<string>();
  for (const t of contents.tensors) {
    if (seen.has(t.name)) throw new Error(`gguf: the tensor ${t.name} is written twice`);
    seen.add(t.name);
    const count = t.dims.reduce((a, b) => a * b, 1);
    if (t.data.length !== count * GGML_TYPE_BYTES[t.type])
      throw new Error(
        `gguf: ${t.name} has ${t.data.length} bytes, [${t.dims}] ${t.type} needs ${count * GGML_TYPE_BYTES[t.type]}`,
      );
    w.string(t.name);
    w.u32(t.dims.length);
    for (const d of t.dims) w.u64(d);
    w.u32(GGML_TYPE[t.type]);
    w.u64(offset);
    offset += Math.ceil(t.data.length / alignment) * alignment;
  }
  w.padTo(alignment);
  const parts: Uint8Array[] = [w.result()];
  for (const t of contents.tensors) {
    parts.push(t.data);
    const pad = (alignment - (t.data.length % alignment)) % alignment;
    if (pad) parts.push(new Uint8Array(pad));
  }
  return parts;
}
