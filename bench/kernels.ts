// `npm run bench -- kernels`: every version of every custom WGSL kernel at a realistic size
// (G·L = 64×192 token rows, V = 105), time per call as the median of several calls after
// warm-up, and the ratio to v1 in the same run. One call = one submit + onSubmittedWorkDone,
// which is what a training step pays (tiny models are dispatch-bound). The float64
// TypeScript reference is timed too, for orientation.

import { getKernelDevice } from '../src/gpu/kernels/device';
import {
  GRPO_TOKEN_LOSS_VERSIONS,
  type GrpoTokenBuffers,
  grpoTokenLossSpec,
} from '../src/gpu/kernels/grpoTokenLoss';
import { grpoTokenLossReference, tokenLogprobReference } from '../src/gpu/kernels/reference';
import { type KernelSpec, prepareKernel } from '../src/gpu/kernels/runKernel';
import { TOKEN_LOGPROB_VERSIONS, tokenLogprobSpec } from '../src/gpu/kernels/tokenLogprob';
import { Rng } from '../src/tasks/random';
import type { BenchSection, BenchTable } from './table';

const ROWS = 64 * 192;
const VOCAB = 105;
const WARMUP = 3;
const CALLS = 15;

const median = (values: number[]) => {
  const sorted = [...values].sort((a, b) => a - b);
  return sorted[Math.floor(sorted.length / 2)] ?? Number.NaN;
};

async function timeKernel(device: GPUDevice, spec: KernelSpec): Promise<number> {
  const kernel = await prepareKernel(device, spec);
  try {
    for (let i = 0; i < WARMUP; i++) await kernel.dispatch();
    const times: number[] = [];
    for (let i = 0; i < CALLS; i++) {
      const start = performance.now();
      await kernel.dispatch();
      times.push(performance.now() - start);
    }
    await kernel.read(); // once, so a lazy driver cannot skip the work
    return median(times);
  } finally {
    kernel.destroy();
  }
}

function timeCpu(run: () => void): number {
  run();
  const times: number[] = [];
  for (let i = 0; i < 5; i++) {
    const start = performance.now();
    run();
    times.push(performance.now() - start);
  }
  return median(times);
}

export const kernelsBench: BenchSection = async (): Promise<BenchTable> => {
  const opened = await getKernelDevice();
  if (!opened.ok) throw new Error(`no WebGPU adapter: ${opened.why}`);
  const { device, adapter } = opened.gpu;
  const prng = new Rng(2026);
  const logits = Float32Array.from({ length: ROWS * VOCAB }, () => prng.normal() * 3);
  const targets = Uint32Array.from({ length: ROWS }, () => prng.below(VOCAB));
  const loss: GrpoTokenBuffers = {
    logp: Float32Array.from({ length: ROWS }, () => -3 * prng.next()),
    oldLogp: Float32Array.from({ length: ROWS }, () => -3 * prng.next()),
    refLogp: Float32Array.from({ length: ROWS }, () => -3 * prng.next()),
    advantage: Float32Array.from({ length: ROWS }, () => prng.normal()),
    mask: Float32Array.from({ length: ROWS }, () => (prng.next() < 0.8 ? 1 : 0)),
  };
  const lossOptions = { epsilonLow: 0.2, epsilonHigh: 0.28, beta: 0.04 };

  const rows: (string | number)[][] = [];
  const addRows = (kernel: string, timed: [string, number][], cpuMs: number) => {
    const v1 = timed[0]?.[1] ?? Number.NaN;
    for (const [version, ms] of timed) rows.push([kernel, version, ms, v1 / ms]);
    rows.push([kernel, 'TS reference (float64, CPU)', cpuMs, v1 / cpuMs]);
  };

  const logprobTimes: [string, number][] = [];
  for (const version of TOKEN_LOGPROB_VERSIONS)
    logprobTimes.push([
      version,
      await timeKernel(device, tokenLogprobSpec(version, logits, targets, ROWS, VOCAB)),
    ]);
  addRows(
    'token_logprob',
    logprobTimes,
    timeCpu(() => tokenLogprobReference(logits, targets, ROWS, VOCAB)),
  );

  const lossTimes: [string, number][] = [];
  for (const version of GRPO_TOKEN_LOSS_VERSIONS)
    lossTimes.push([
      version,
      await timeKernel(device, grpoTokenLossSpec(version, loss, lossOptions)),
    ]);
  addRows(
    'grpo_token_loss',
    lossTimes,
    timeCpu(() => grpoTokenLossReference(loss, lossOptions)),
  );

  return {
    title: 'Custom WGSL kernels (fused log-softmax + pick, per-token GRPO loss)',
    environment: `Dawn in Node on ${adapter}; R = 64×192 = ${ROWS} rows/tokens, V = ${VOCAB}; median of ${CALLS} calls after ${WARMUP} warm-up, each one submit + onSubmittedWorkDone`,
    columns: ['kernel', 'version', 'ms / call', 'speed vs v1 (×)'],
    rows,
    notes: [
      'Ratios are from the same run; absolute times drift on these shared machines.',
      'On CPU Vulkan drivers workgroupBarrier is expensive and V ≈ 100 leaves most of a 64-lane workgroup idle, so the shared-memory v2 is expected to lose there; it is the version meant for real GPUs and large V.',
    ],
  };
};
