// The safetensors format, written and read by hand: an 8-byte little-endian header
// length, a JSON header {name: {dtype, shape, data_offsets: [begin, end]}, __metadata__},
// then the raw little-endian tensor bytes. Only F32 is used by the lab.

export interface NamedTensor {
  shape: number[];
  data: Float32Array;
}

interface HeaderEntry {
  dtype: string;
  shape: number[];
  data_offsets: [number, number];
}

export function encodeSafetensors(
  tensors: Map<string, NamedTensor>,
  metadata: Record<string, string> = {},
): Uint8Array {
  const header: Record<string, HeaderEntry | Record<string, string>> = {};
  if (Object.keys(metadata).length) header.__metadata__ = metadata;
  let offset = 0;
  for (const [name, t] of tensors) {
    const count = t.shape.reduce((a, b) => a * b, 1);
    if (count !== t.data.length)
      throw new Error(`safetensors: ${name} has ${t.data.length} values for shape [${t.shape}]`);
    header[name] = { dtype: 'F32', shape: t.shape, data_offsets: [offset, offset + 4 * count] };
    offset += 4 * count;
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
    const bytes = new Uint8Array(t.data.length * 4);
    const dv = new DataView(bytes.buffer);
    for (let i = 0; i < t.data.length; i++) dv.setFloat32(4 * i, t.data[i]!, true);
    out.set(bytes, at);
    at += bytes.length;
  }
  return out;
}

export interface DecodedSafetensors {
  tensors: Map<string, NamedTensor>;
  metadata: Record<string, string>;
}

/** Parses and validates; a truncated or corrupt file is refused with a message saying why. */
export function decodeSafetensors(bytes: Uint8Array): DecodedSafetensors {
  const fail = (why: string): never => {
    throw new Error(`model.safetensors is corrupt: ${why}`);
  };
  if (bytes.length < 8) fail(`${bytes.length} bytes, shorter than the 8-byte header length`);
  const view = new DataView(bytes.buffer, bytes.byteOffset, bytes.byteLength);
  const headerLength = Number(view.getBigUint64(0, true));
  if (headerLength > bytes.length - 8) {
    fail(
      `header claims ${headerLength} bytes but the file has ${bytes.length - 8} after the length (truncated?)`,
    );
  }
  let header: Record<string, unknown>;
  try {
    header = JSON.parse(
      new TextDecoder('utf-8', { fatal: true }).decode(bytes.subarray(8, 8 + headerLength)),
    );
  } catch (err) {
    return fail(`header is not valid JSON (${(err as Error).message})`);
  }
  if (typeof header !== 'object' || header === null || Array.isArray(header))
    fail('header is not an object');
  const dataStart = 8 + headerLength;
  const dataLength = bytes.length - dataStart;
  const tensors = new Map<string, NamedTensor>();
  let metadata: Record<string, string> = {};
  const spans: [number, number, string][] = [];
  for (const [name, raw] of Object.entries(header)) {
    if (name === '__metadata__') {
      metadata = raw as Record<string, string>;
      continue;
    }
    const entry = raw as Partial<HeaderEntry>;
    if (entry?.dtype !== 'F32')
      fail(`${name}: dtype ${String(entry?.dtype)} (only F32 is supported)`);
    const shape = entry.shape;
    const offsets = entry.data_offsets;
    if (!Array.isArray(shape) || !shape.every((n) => Number.isInteger(n) && n >= 0))
      fail(`${name}: bad shape`);
    if (!Array.isArray(offsets) || offsets.length !== 2) fail(`${name}: bad data_offsets`);
    const [begin, end] = offsets as [number, number];
    const count = (shape as number[]).reduce((a, b) => a * b, 1);
    if (
      !(Number.isInteger(begin) && Number.isInteger(end) && begin >= 0 && end - begin === 4 * count)
    ) {
      fail(`${name}: data_offsets [${begin}, ${end}] do not fit shape [${shape}]`);
    }
    if (end > dataLength)
      fail(`${name}: data ends at ${end} but only ${dataLength} data bytes exist (truncated?)`);
    spans.push([begin, end, name]);
    const data = new Float32Array(count);
    const dv = new DataView(bytes.buffer, bytes.byteOffset + dataStart + begin, 4 * count);
    for (let i = 0; i < count; i++) data[i] = dv.getFloat32(4 * i, true);
    tensors.set(name, { shape: shape as number[], data });
  }
  spans.sort((a, b) => a[0] - b[0]);
  for (let i = 1; i < spans.length; i++) {
    if (spans[i]![0] < spans[i - 1]![1]) fail(`${spans[i]![2]} overlaps ${spans[i - 1]![2]}`);
  }
  const used = spans.reduce((n, [b, e]) => n + e - b, 0);
  if (used !== dataLength) fail(`${dataLength - used} data bytes belong to no tensor`);
  return { tensors, metadata };
}
