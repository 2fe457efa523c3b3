// A run exports as one ZIP that any unzip tool opens, and imports back, also after a user
// unzipped and re-zipped it with an ordinary tool (which deflates). fflate writes and
// reads the archive and inflates its entries; it does not check the entries' CRC-32s,
// so readZip does, against the central directory, and refuses a corrupt file.
import { unzipSync, zipSync } from 'fflate';

const CRC_TABLE = (() => {
  const table = new Uint32Array(256);
  for (let n = 0; n < 256; n++) {
    let c = n;
    for (let k = 0; k < 8; k++) c = c & 1 ? 0xedb88320 ^ (c >>> 1) : c >>> 1;
    table[n] = c >>> 0;
  }
  return table;
})();

export function crc32(bytes: Uint8Array): number {
  let crc = 0xffffffff;
  for (const byte of bytes) crc = CRC_TABLE[(crc ^ byte) & 0xff]! ^ (crc >>> 8);
  return (crc ^ 0xffffffff) >>> 0;
}

/** Checkpoint weights barely compress: stored; text (JSON, JSONL, CSV) is deflated. */
export function writeZip(files: Record<string, Uint8Array>): Uint8Array {
  return zipSync(
    Object.fromEntries(
      Object.entries(files).map(([name, data]) => [
        name,
        [data, { level: name.endsWith('.safetensors') ? 0 : 6 }],
      ]),
    ),
  );
}

/**
 * The files of a ZIP (stored or deflated entries), by name; folders and macOS's
 * `__MACOSX/` metadata are left out. Throws on anything that is not a readable ZIP and on
 * a checksum mismatch.
 */
export function readZip(bytes: Uint8Array): Record<string, Uint8Array> {
  let entries: Record<string, Uint8Array>;
  try {
    entries = unzipSync(bytes);
  } catch (error) {
    throw new Error(`not a ZIP file, or a corrupt one (${(error as Error).message})`);
  }
  const checksums = centralDirectoryCrcs(bytes);
  const files: Record<string, Uint8Array> = {};
  for (const [name, data] of Object.entries(entries)) {
    if (name.endsWith('/') || name.startsWith('__MACOSX/')) continue;
    const expected = checksums.get(name);
    if (expected === undefined || crc32(data) !== expected) {
      throw new Error(`${name}: checksum mismatch (file is corrupt)`);
    }
    files[name] = data;
  }
  return files;
}

/** Each entry's CRC-32 as the central directory records it (fflate has read it already). */
function centralDirectoryCrcs(bytes: Uint8Array): Map<string, number> {
  const view = new DataView(bytes.buffer, bytes.byteOffset, bytes.byteLength);
  const u16 = (at: number) => (at + 2 <= bytes.length ? view.getUint16(at, true) : -1);
  const u32 = (at: number) => (at + 4 <= bytes.length ? view.getUint32(at, true) : -1);
  let end = bytes.length - 22;
  while (end >= 0 && u32(end) !== 0x06054b50) end--;
  let count = u16(end + 10);
  let at = u32(end + 16);
  // ZIP64: the counts and offsets live in the ZIP64 end record named by the locator.
  if (end >= 20 && u32(end - 20) === 0x07064b50) {
    const record = Number(view.getBigUint64(end - 12, true));
    if (u32(record) === 0x06064b50) {
      count = Number(view.getBigUint64(record + 32, true));
      at = Number(view.getBigUint64(record + 48, true));
    }
  }
  const utf8 = new TextDecoder();
  const crcs = new Map<string, number>();
  for (let i = 0; i < count; i++) {
    if (u32(at) !== 0x02014b50) throw new Error('ZIP directory is corrupt');
    const nameLength = u16(at + 28);
    if (at + 46 + nameLength > bytes.length) throw new Error('ZIP directory is corrupt');
    const raw = bytes.subarray(at + 46, at + 46 + nameLength);
    // Names are UTF-8 when flag bit 11 is set, else (as fflate reads them) one byte a char.
    const name = u16(at + 8) & 0x800 ? utf8.decode(raw) : String.fromCharCode(...raw);
    crcs.set(name, u32(at + 16));
    at += 46 + nameLength + u16(at + 30) + u16(at + 32);
  }
  return crcs;
}
