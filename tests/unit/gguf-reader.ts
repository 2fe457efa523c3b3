// A GGUF v3 reader for the tests, written from the format's specification (ggml's docs/gguf.md),
// apart from the lab's writer: header, key/values of every type, tensor infos, the alignment
// (general.alignment, default 32), each tensor's data widened to float32.
import { f16ToF32 } from '../../src/model/safetensors';

export type GgufReadValue = number | bigint | boolean | string | GgufReadValue[];

export interface GgufReadTensor {
  dims: number[];
  type: number;
  offset: number;
  values: Float32Array;
}

export interface GgufRead {
  version: number;
  metadata: Map<string, GgufReadValue>;
  /** In file order. */
  tensors: Map<string, GgufReadTensor>;
  alignment: number;
  dataStart: number;
}

export function readGguf(bytes: Uint8Array): GgufRead {
  const view = new DataView(bytes.buffer, bytes.byteOffset, bytes.byteLength);
  let at = 0;
  /** Reads `size` bytes at the cursor through `get`, then moves past them. */
  const take = <T>(size: number, get: (offset: number) => T): T => {
    const v = get(at);
    at += size;
    return v;
  };
  const u32 = () => take(4, (o) => view.getUint32(o, true));
  const u64 = () => take(8, (o) => Number(view.getBigUint64(o, true)));
  const str = () => {
    const n = u64();
    return take(n, (o) =>
      new TextDecoder('utf-8', { fatal: true }).decode(bytes.subarray(o, o + n)),
    );
  };
  const value = (type: number): GgufReadValue => {
    switch (type) {
      case 0:
        return take(1, (o) => view.getUint8(o));
      case 1:
        return take(1, (o) => view.getInt8(o));
      case 2:
        return take(2, (o) => view.getUint16(o, true));
      case 3:
        return take(2, (o) => view.getInt16(o, true));
      case 4:
        return u32();
      case 5:
        return take(4, (o) => view.getInt32(o, true));
      case 6:
        return take(4, (o) => view.getFloat32(o, true));
      case 7:
        return take(1, (o) => view.getUint8(o) !== 0);
      case 8:
        return str();
      case 9: {
        const elem = u32();
        const n = u64();
        return Array.from({ length: n }, () => value(elem));
      }
      case 10:
        return take(8, (o) => view.getBigUint64(o, true));
      case 11:
        return take(8, (o) => view.getBigInt64(o, true));
      case 12:
        return take(8, (o) => view.getFloat64(o, true));
      default:
        throw new Error(`gguf: unknown value type ${type}`);
    }
  };
  const magic = new TextDecoder().decode(bytes.subarray(0, 4));
  at = 4;
  if (magic !== 'GGUF') throw new Error(`gguf: magic ${JSON.stringify(magic)}`);
  const version = u32();
  const tensorCount = u64();
  const kvCount = u64();
  const metadata = new Map<string, GgufReadValue>();
  for (let i = 0; i < kvCount; i++) {
    const key = str();
    metadata.set(key, value(u32()));
  }
  const infos: { name: string; dims: number[]; type: number; offset: number }[] = [];
  for (let i = 0; i < tensorCount; i++) {
    const name = str();
    const nDims = u32();
    const dims = Array.from({ length: nDims }, () => u64());
    infos.push({ name, dims, type: u32(), offset: u64() });
  }
  const alignment = Number(metadata.get('general.alignment') ?? 32);
  const dataStart = Math.ceil(at / alignment) * alignment;
  const tensors = new Map<string, GgufReadTensor>();
  for (const info of infos) {
    const count = info.dims.reduce((a, b) => a * b, 1);
    const start = dataStart + info.offset;
    const values = new Float32Array(count);
    if (info.type === 0)
      for (let i = 0; i < count; i++) values[i] = view.getFloat32(start + 4 * i, true);
    else if (info.type === 1)
      for (let i = 0; i < count; i++) values[i] = f16ToF32(view.getUint16(start + 2 * i, true));
    else if (info.type === 30) {
      const bits = new Uint32Array(values.buffer);
      for (let i = 0; i < count; i++) bits[i] = view.getUint16(start + 2 * i, true) << 16;
    } else throw new Error(`gguf: ${info.name} has type ${info.type}`);
    tensors.set(info.name, { dims: info.dims, type: info.type, offset: info.offset, values });
  }
  return { version, metadata, tensors, alignment, dataStart };
}
