// Which matmul version this driver wants, measured once: CPU drivers differ (SwiftShader pays
// ~5× for v2's barriers, lavapipe runs v2's tiles as fast or faster), and so do real GPUs.
// Only versions that passed the self-check (selfCheck/) are timed and picked.
import { MATMUL_VERSIONS, type MatmulVersion, matmul } from './ops';
import type { GpuRuntime } from './runtime';

export interface MatmulTuning {
  pick: MatmulVersion;
  /** ms of three X·W + Xᵀ·dY rounds per version timed (the versions allowed). */
  timings: Partial<Record<MatmulVersion, number>>;
}

const tuned = new WeakMap<GpuRuntime, Promise<MatmulTuning>>();

/** Times X·W and Xᵀ·dY at a step-like shape for each allowed version; the faster total wins. */
export async function tuneMatmul(
  rt: GpuRuntime,
  allowed: readonly MatmulVersion[] = MATMUL_VERSIONS,
): Promise<MatmulVersion> {
  return (await tuneMatmulTimed(rt, allowed)).pick;
}

/** As tuneMatmul, with every version's time (for the GPU report). Measured once per runtime. */
export function tuneMatmulTimed(
  rt: GpuRuntime,
  allowed: readonly MatmulVersion[] = MATMUL_VERSIONS,
): Promise<MatmulTuning> {
  let pending = tuned.get(rt);
  if (!pending) {
    pending = measure(rt, allowed);
    tuned.set(rt, pending);
  }
  return pending;
}

/** The fastest of `allowed` among those timed (a version dropped after tuning is passed over). */
export function fastestOf(
  t: MatmulTuning,
  allowed: readonly MatmulVersion[],
): MatmulVersion | null {
  let best: MatmulVersion | null = null;
  for (const v of allowed) {
    const ms = t.timings[v];
    if (ms !== undefined && (best === null || ms < (t.timings[best] ?? Number.POSITIVE_INFINITY)))
      best = v;
  }
  return best;
}

async function measure(rt: GpuRuntime, allowed: readonly MatmulVersion[]): Promise<MatmulTuning> {
  const [R, D, F] = [512, 64, 256];
  const x = rt.buffer(R * F);
  const w = rt.buffer(F * F);
  const c = rt.buffer(R * F);
  const timings: MatmulTuning['timings'] = {};
  let best: { version: MatmulVersion; ms: number } | null = null;
  try {
    for (const version of allowed) {
      const program = rt.program([
        matmul({ M: R, N: F, K: D, a: x, b: w, c, dummy: rt.dummy, version }),
        matmul({ M: F, N: D, K: R, a: x, aStride: [1, F], b: c, c: w, dummy: rt.dummy, version }),
      ]);
      rt.submit([program]); // compile and warm up
      await rt.device.queue.onSubmittedWorkDone();
      const start = performance.now();
      rt.submit([program], 3);
      await rt.device.queue.onSubmittedWorkDone();
      const ms = performance.now() - start;
      rt.destroyProgram(program);
      timings[version] = ms;
      if (!best || ms < best.ms) best = { version, ms };
    }
  } finally {
    for (const b of [x, w, c]) rt.free(b);
  }
  return { pick: best?.version ?? 'v1_regblock', timings };
}
