// Runs the registry's checks on one device: each inside WebGPU error scopes (validation and
// out-of-memory), so an error counts as a failure, then compares every output with its
// reference under the entry's tolerance.
import type { MatmulVersion } from '../ops';
import type { DispatchSpec, GpuRuntime } from '../runtime';
import { type CheckContext, type KernelCheck, Rng } from './registry';
import type { CheckResult, CheckSizes, Tolerance } from './types';

export interface RunOptions {
  rt: GpuRuntime;
  sizes: CheckSizes;
  matmul: MatmulVersion;
  software: boolean;
  seed: number;
}

export async function runChecks(
  checks: readonly KernelCheck[],
  o: RunOptions,
): Promise<CheckResult[]> {
  const results: CheckResult[] = [];
  for (const check of checks) results.push(await runCheck(check, o));
  return results;
}

export async function runCheck(check: KernelCheck, o: RunOptions): Promise<CheckResult> {
  const start = performance.now();
  const { rt } = o;
  const compileBefore = rt.counters.compileMs;
  const made: GPUBuffer[] = [];
  const ctx: CheckContext = {
    rt,
    sizes: o.sizes,
    matmul: o.matmul,
    software: o.software,
    buffer: (n) => {
      const b = rt.buffer(n, `self-check ${check.name}`);
      made.push(b);
      return b;
    },
    upload(data) {
      const b = this.buffer(data.length);
      rt.write(b, data);
      return b;
    },
    async run(specs: DispatchSpec[]) {
      const program = rt.program(specs);
      made.push(...program.uniforms);
      rt.submit([program]);
      await rt.device.queue.onSubmittedWorkDone();
    },
    async read(buffer, n) {
      const [out] = await rt.read([{ buffer, offset: 0, length: n }]);
      return out as Float32Array;
    },
    own: (buffers) => made.push(...buffers),
  };
  const base = { name: check.name, at: o.sizes.label, tolerance: check.tolerance };
  rt.device.pushErrorScope('validation');
  rt.device.pushErrorScope('out-of-memory');
  let outcome: Omit<CheckResult, 'name' | 'at' | 'tolerance' | 'ms'>;
  try {
    // Each check draws from its own stream: adding one does not change the others' inputs.
    const inputs = check.inputs(o.sizes, Rng.derive(o.seed, check.name, o.sizes.label));
    const gpu = await check.gpu(ctx, inputs);
    outcome = compare(gpu, check.reference(inputs, o.sizes), check.tolerance);
  } catch (error) {
    outcome = { ok: false, worst: null, ratio: Number.POSITIVE_INFINITY, error: message(error) };
  }
  const oom = await rt.device.popErrorScope();
  const invalid = await rt.device.popErrorScope();
  for (const b of made) rt.free(b);
  const scoped = invalid ?? oom;
  if (scoped && !outcome.error)
    outcome = {
      ...outcome,
      ok: false,
      error: `${invalid ? 'validation' : 'out-of-memory'} error: ${scoped.message}`,
    };
  return {
    ...base,
    ...outcome,
    ms: performance.now() - start,
    compileMs: rt.counters.compileMs - compileBefore,
  };
}

/** Every output element against its reference: the largest error as a multiple of what is allowed. */
export function compare(
  gpu: Record<string, ArrayLike<number>>,
  ref: Record<string, ArrayLike<number>>,
  t: Tolerance,
): Pick<CheckResult, 'ok' | 'worst' | 'ratio' | 'error'> {
  let worst: CheckResult['worst'] = null;
  let ratio = 0;
  for (const [output, r] of Object.entries(ref)) {
    const g = gpu[output];
    if (!g || g.length !== r.length)
      return {
        ok: false,
        worst: null,
        ratio: Number.POSITIVE_INFINITY,
        error: `${output}: ${g?.length ?? 'no'} values from the device, ${r.length} from the reference`,
      };
    for (let i = 0; i < r.length; i++) {
      const gi = g[i] ?? Number.NaN;
      const ri = r[i] ?? Number.NaN;
      const error = Math.abs(gi - ri);
      const allowed = t.rtol * Math.abs(ri) + t.atol;
      // NaN fails; a tolerance of 0 allows only equality.
      const x = Number.isNaN(error)
        ? Number.POSITIVE_INFINITY
        : error <= allowed
          ? allowed > 0
            ? error / allowed
            : 0
          : error / Math.max(allowed, 1e-30);
      if (!worst || x > ratio) {
        ratio = x;
        worst = { output, index: i, gpu: gi, ref: ri, error };
      }
    }
  }
  return { ok: ratio <= 1, worst, ratio };
}

function message(error: unknown): string {
  return error instanceof Error ? error.message : String(error);
}
