// Shared by the kernels.*.test.ts files: one device for the file, a runtime with every shader
// loaded, seeded random arrays, and the element-wise comparison with its worst element.
import { beforeAll, expect } from 'vitest';
import { SHADERS } from '../../src/gpu/engine/ops';
import { type DispatchSpec, GpuRuntime } from '../../src/gpu/engine/runtime';
import { getKernelDevice } from '../../src/gpu/kernels/device';
import { Rng } from '../../src/tasks/random';

export interface Harness {
  rt: GpuRuntime | null;
  missing: string;
}

export function kernelRuntime(): Harness {
  const h: Harness = { rt: null, missing: '' };
  beforeAll(async () => {
    const result = await getKernelDevice();
    if (!result.ok) {
      h.missing = result.why;
      return;
    }
    const rt = new GpuRuntime(result.gpu.device);
    await rt.load([...SHADERS]);
    h.rt = rt;
  });
  return h;
}

export function needRuntime(h: Harness, ctx: { skip: (note?: string) => void }): GpuRuntime {
  if (!h.rt) ctx.skip(`no WebGPU adapter: ${h.missing}`);
  return h.rt as GpuRuntime;
}

export function randoms(n: number, seed: number, scale = 1): Float32Array {
  const prng = new Rng(seed);
  return Float32Array.from({ length: n }, () => (2 * prng.next() - 1) * scale);
}

export function ints(n: number, below: number, seed: number): Uint32Array {
  const prng = new Rng(seed);
  return Uint32Array.from({ length: n }, () => prng.below(below));
}

/** Uploads data into a fresh buffer. */
export function upload(rt: GpuRuntime, data: Float32Array | Uint32Array, extra = 0): GPUBuffer {
  const buffer = rt.buffer(data.length + extra);
  rt.write(buffer, data);
  return buffer;
}

/** Builds and submits the dispatches; a validation error fails the test. */
export async function run(rt: GpuRuntime, specs: DispatchSpec[]): Promise<void> {
  rt.device.pushErrorScope('validation');
  rt.submit([rt.program(specs)]);
  const error = await rt.device.popErrorScope();
  if (error) throw new Error(error.message);
  await rt.device.queue.onSubmittedWorkDone();
}

export async function readBack(
  rt: GpuRuntime,
  buffer: GPUBuffer,
  length: number,
): Promise<Float32Array> {
  const [out] = await rt.read([{ buffer, offset: 0, length }]);
  return out as Float32Array;
}

/** |gpu − ref| ≤ rtol·|ref| + atol element by element; fails on the worst element. */
export function expectClose(
  gpu: ArrayLike<number>,
  ref: ArrayLike<number>,
  atol = 1e-5,
  rtol = 1e-4,
  what = '',
) {
  expect(gpu.length, `${what} length`).toBe(ref.length);
  let worst = { i: -1, excess: 0 };
  for (let i = 0; i < ref.length; i++) {
    const g = gpu[i] ?? Number.NaN;
    const r = ref[i] ?? Number.NaN;
    const excess = Math.abs(g - r) - (rtol * Math.abs(r) + atol);
    if (!(excess <= 0) && (worst.i < 0 || !(excess <= worst.excess))) worst = { i, excess };
  }
  if (worst.i >= 0)
    expect.fail(
      `${what} element ${worst.i} of ${ref.length}: gpu ${gpu[worst.i]} vs reference ${ref[worst.i]}`,
    );
}
