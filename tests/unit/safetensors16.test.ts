// 16-bit safetensors: F16 widened and narrowed as numpy does (every one of the 65,536 half
// values; random float32s rounded, subnormals and overflow included), BF16 as the top half of a
// float32 rounded to nearest even, raw16 giving the file's words, and the header checked against
// a file's announced size before its data arrives; a file on disk read a tensor at a time.
import { execFileSync } from 'node:child_process';
import { describe, expect, it } from 'vitest';
import {
  encodeSafetensors,
  f16ToF32,
  f32ToBf16,
  f32ToF16,
  raw16,
  readSafetensors,
  readSafetensorsAt,
  readSafetensorsHeader,
  toFloat32,
} from '../../src/model/safetensors';
import { Rng } from '../../src/tasks/random';

function numpy(script: string, input: Uint8Array): Uint8Array {
  return new Uint8Array(execFileSync('python3', ['-c', script], { input, maxBuffer: 1 << 24 }));
}

function randomFloats(n: number, seed: number): Float32Array {
  const rng = new Rng(seed);
  return Float32Array.from({ length: n }, (_, i) => {
    const magnitude = 2 ** (rng.next() * 44 - 28); // 2^-28 … 2^16: half's subnormals to overflow
    return (rng.next() < 0.5 ? -1 : 1) * magnitude * (i % 97 === 0 ? 65504 / 2 ** 16 : 1);
  });
}

describe('16-bit safetensors', () => {
  it('widens every F16 value as numpy does', () => {
    const bits = Uint16Array.from({ length: 65536 }, (_, i) => i);
    const ref = new Float32Array(
      numpy(
        'import sys,numpy as np;sys.stdout.buffer.write(np.frombuffer(sys.stdin.buffer.read(),"<u2").view("<f2").astype("<f4").tobytes())',
        new Uint8Array(bits.buffer),
      ).buffer,
    );
    const wrong: number[] = [];
    for (let i = 0; i < 65536; i++) {
      const same = Number.isNaN(ref[i]!)
        ? Number.isNaN(f16ToF32(i))
        : Object.is(f16ToF32(i), ref[i]!);
      if (!same) wrong.push(i);
    }
    expect(wrong).toEqual([]);
  });

  it('rounds float32 to F16 as numpy does (nearest even, subnormals, overflow)', () => {
    const values = randomFloats(20000, 4);
    values.set(
      [65504, 65519.99, 65520, 2 ** -25, 2 ** -24 * 1.5, -0, 1 + 2 ** -11, 1 + 3 * 2 ** -11],
      0,
    );
    const ref = new Uint16Array(
      numpy(
        'import sys,numpy as np;sys.stdout.buffer.write(np.frombuffer(sys.stdin.buffer.read(),"<f4").astype("<f2").view("<u2").tobytes())',
        new Uint8Array(values.buffer),
      ).buffer,
    );
    const wrong = Array.from(values.keys()).filter((i) => f32ToF16(values[i]!) !== ref[i]);
    expect(wrong.map((i) => [values[i], f32ToF16(values[i]!), ref[i]])).toEqual([]);
  });

  it('rounds float32 to BF16 to the nearest, ties to even', () => {
    const values = randomFloats(20000, 5);
    for (const v of values) {
      const b = f32ToBf16(v);
      const back = new Float32Array(new Uint32Array([b << 16]).buffer)[0]!;
      const next = new Float32Array(
        new Uint32Array([((b + (v < 0 ? -1 : 1)) & 0xffff) << 16]).buffer,
      )[0]!;
      const prev = new Float32Array(
        new Uint32Array([((b - (v < 0 ? -1 : 1)) & 0xffff) << 16]).buffer,
      )[0]!;
      const err = Math.abs(back - v);
      expect(err).toBeLessThanOrEqual(Math.abs(next - v));
      expect(err).toBeLessThanOrEqual(Math.abs(prev - v));
      if (err === Math.abs(next - v) && err > 0) expect(b % 2).toBe(0);
    }
  });

  it('writes and reads F32, F16 and BF16, keeping the raw words', () => {
    const data = randomFloats(60, 6).map((v) => v / 1000);
    for (const dtype of ['F32', 'F16', 'BF16'] as const) {
      const bytes = encodeSafetensors(new Map([['w', { shape: [6, 10], data }]]), {}, dtype);
      const t = readSafetensors(bytes).tensors.get('w')!;
      expect(t.dtype).toBe(dtype);
      const widened = toFloat32(t);
      if (dtype === 'F32') expect(widened).toEqual(data);
      else {
        const words = raw16(t);
        expect(Array.from(words)).toEqual(Array.from(data, dtype === 'F16' ? f32ToF16 : f32ToBf16));
        const scale = dtype === 'F16' ? 2 ** -11 : 2 ** -8;
        data.forEach((v, i) => {
          expect(Math.abs(widened[i]! - v)).toBeLessThanOrEqual(Math.abs(v) * scale + 2 ** -24);
        });
      }
    }
  });

  it('checks a header against the announced size before the data arrives', () => {
    const bytes = encodeSafetensors(
      new Map([['w', { shape: [4, 4], data: new Float32Array(16) }]]),
      {},
      'BF16',
    );
    const head = bytes.subarray(0, bytes.length - 32);
    expect(readSafetensorsHeader(head, 'x.safetensors', bytes.length).fileSize).toBe(bytes.length);
    expect(() => readSafetensorsHeader(head, 'x.safetensors')).toThrow(
      /x\.safetensors is corrupt: w: data ends at 32 but only 0 data bytes exist \(truncated\?\)/,
    );
    expect(() => readSafetensorsHeader(bytes, 'x.safetensors', bytes.length + 2)).toThrow(
      /2 data bytes belong to no tensor/,
    );
  });

  it('reads a file on disk a tensor at a time: the header, then only the bytes asked for', () => {
    const tensors = new Map([
      ['a', { shape: [3, 8], data: randomFloats(24, 8) }],
      ['b', { shape: [5], data: randomFloats(5, 9) }],
    ]);
    for (const dtype of ['F32', 'F16', 'BF16'] as const) {
      const bytes = encodeSafetensors(tensors, {}, dtype);
      const reads: [number, number][] = [];
      const readAt = (offset: number, length: number) => {
        reads.push([offset, length]);
        return bytes.slice(offset, offset + length);
      };
      const lazy = readSafetensorsAt(readAt, bytes.length, 'x.safetensors');
      const whole = readSafetensors(bytes).tensors;
      const headerBytes = reads.reduce((n, [, l]) => n + l, 0);
      expect(headerBytes).toBeLessThan(bytes.length - 8 * 2); // not the data
      expect([...lazy.keys()]).toEqual([...whole.keys()]);
      for (const [name, t] of whole) {
        const before = reads.length;
        expect(toFloat32(lazy.get(name)!)).toEqual(toFloat32(t));
        expect(reads.length - before).toBe(1); // one read, of this tensor's bytes alone
        expect(reads.at(-1)![1]).toBe(t.bytes.length);
      }
    }
    // The same checks as a whole file's: a file cut short is refused before any data is read.
    const bytes = encodeSafetensors(tensors, {}, 'BF16');
    const cut = bytes.subarray(0, bytes.length - 4);
    expect(() =>
      readSafetensorsAt((o, l) => cut.slice(o, o + l), cut.length, 'x.safetensors'),
    ).toThrow(/x\.safetensors is corrupt: .*\(truncated\?\)/);
    const lying = bytes.slice();
    new DataView(lying.buffer).setBigUint64(0, 10n ** 12n, true);
    expect(() =>
      readSafetensorsAt((o, l) => lying.slice(o, o + l), lying.length, 'x.safetensors'),
    ).toThrow(/header claims 1000000000000 bytes but the file has/);
  });
});
