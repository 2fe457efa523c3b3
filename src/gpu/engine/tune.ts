// Which matmul version this driver wants, measured once: CPU drivers differ (SwiftShader pays
// ~5× for v2's barriers, lavapipe runs v2's tiles as fast or faster), and so do real GPUs.
import { MATMUL_VERSIONS, type MatmulVersion, matmul } from './ops';
import type { GpuRuntime } from './runtime';

const tuned = new WeakMap<GpuRuntime, Promise<MatmulVersion>>();

/** Times X·W and Xᵀ·dY at a step-like shape for each version; the faster total wins. */
export function tuneMatmul(rt: GpuRuntime): Promise<MatmulVersion> {
  let pending = tuned.get(rt);
  if (!pending) {
    pending = measure(rt);
    tuned.set(rt, pending);
  }
  return pending;
}

async function measure(rt: GpuRuntime): Promise<MatmulVersion> {
  const [R, D, F] = [512, 64, 256];
  const x = rt.buffer(R * F);
  const w = rt.buffer(F * F);
  const c = rt.buffer(R * F);
  let best: { version: MatmulVersion; ms: number } | null = null;
  try {
    for (const version of MATMUL_VERSIONS) {
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
      if (!best || ms < best.ms) best = { version, ms };
    }
  } finally {
    for (const b of [x, w, c]) rt.free(b);
  }
  return best?.version ?? 'v1_regblock';
}
