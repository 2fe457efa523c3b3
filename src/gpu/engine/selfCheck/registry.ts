// The self-check's registry: one entry per kernel (and per matmul version) the engine may run.
// An entry builds seeded random inputs at the given sizes, runs the kernel on the device, and
// computes the same outputs with its plain-TypeScript reference; its tolerance sits beside it.
// To add a kernel: write an entry (checks.ts holds the lab's) and registerKernelCheck() it from
// the module that owns the kernel, or list it in checks.ts' LAB_CHECKS.
import { Rng } from '../../../tasks/random';
import type { MatmulVersion } from '../ops';
import type { DispatchSpec, GpuRuntime } from '../runtime';
import type { CheckSizes, Tolerance } from './types';

/** What a check gets: the device, helpers that free what they make, and the sizes to use. */
export interface CheckContext {
  rt: GpuRuntime;
  sizes: CheckSizes;
  /** The matmul version composite checks (decode's prefill) run with: the tuner's pick. */
  matmul: MatmulVersion;
  /** A CPU driver: the engine runs its software settings (decode rows per workgroup). */
  software: boolean;
  /** A fresh buffer of n floats, freed after the check. */
  buffer(n: number): GPUBuffer;
  /** A fresh buffer holding data, freed after the check. */
  upload(data: Float32Array | Uint32Array): GPUBuffer;
  /** Builds, submits and waits for the dispatches (their uniform buffers freed after the check). */
  run(specs: DispatchSpec[]): Promise<void>;
  /** Reads n floats from the start of a buffer. */
  read(buffer: GPUBuffer, n: number): Promise<Float32Array>;
  /** Buffers made by someone else's code (a DeviceModel) that the check should free. */
  own(buffers: GPUBuffer[]): void;
}

export type Outputs = Record<string, ArrayLike<number>>;

export interface KernelCheck<I = unknown> {
  /** `family/variant`, e.g. `attention/backward`: what the report and the CLI name. */
  name: string;
  /** The matmul version it tests: a failure drops that version from the tuner's choices. */
  matmulVersion?: MatmulVersion;
  /**
   * The engine cannot run without it: a failure turns the kernels off (the run goes on on tfjs).
   * v1_regblock is, among the matmul versions: ops.ts falls back to it where v4's strides do not fit.
   */
  indispensable: boolean;
  tolerance: Tolerance;
  /** Whether it runs again at a run's own sizes when a model of new sizes reaches the engine. */
  sized: boolean;
  inputs(sizes: CheckSizes, rng: Rng): I;
  gpu(ctx: CheckContext, inputs: I): Promise<Outputs>;
  reference(inputs: I, sizes: CheckSizes): Outputs;
}

const registry: KernelCheck[] = [];

/** Adds a check (a kernel's owner calls this once, at import). Names are unique. */
export function registerKernelCheck<I>(check: KernelCheck<I>): void {
  if (registry.some((c) => c.name === check.name))
    throw new Error(`self-check: ${check.name} is registered twice`);
  registry.push(check as KernelCheck);
}

export function kernelChecks(): readonly KernelCheck[] {
  return registry;
}

/** Seeded inputs: uniform in [−scale, scale). */
export function randoms(rng: Rng, n: number, scale = 1): Float32Array {
  return Float32Array.from({ length: n }, () => (2 * rng.next() - 1) * scale);
}

export function ints(rng: Rng, n: number, below: number): Uint32Array {
  return Uint32Array.from({ length: n }, () => rng.below(below));
}

export { Rng };

/**
 * The update's packed rows (a prompt, then its completions) for B rows of T positions: rows
 * 0..B/2 − 1 a prompt of 4 and segments of 3, 3 and the rest; the others plain. Their
 * attention segments [lo | pre] and positions.
 */
export function packedRows(B: number, T: number) {
  const segments = new Uint32Array(B * T + B);
  const positions = new Uint32Array(B * T);
  for (let b = 0; b < B; b++) {
    const pre = b < B / 2 ? 4 : 0;
    segments[B * T + b] = pre;
    for (let t = 0; t < T; t++) {
      const lo = pre === 0 || t < pre ? 0 : pre + 3 * Math.min(2, Math.floor((t - pre) / 3));
      segments[b * T + t] = lo;
      positions[b * T + t] = lo === 0 ? t : pre + t - lo;
    }
  }
  return { segments, positions };
}
