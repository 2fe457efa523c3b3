// Builds the GPU report (gpuReportFormat.ts) from the last self-check's device and results.
import { isNodeHost } from '../host';
import type { GpuReport } from './gpuReportFormat';
import { lastKernelSelfCheck } from './kernelEngine';
import { limitsOf } from './limits';
import { summarize } from './selfCheck/types';

export type { GpuReport } from './gpuReportFormat';

/** The report of the last engine start that ran the self-check, or null when none did. */
export function buildGpuReport(): GpuReport | null {
  const last = lastKernelSelfCheck();
  if (!last) return null;
  const { check, gpu } = last;
  const timingsMs: Record<string, number> = {};
  for (const [v, ms] of Object.entries(check.tuning.timings))
    timingsMs[v] = Math.round(ms * 10) / 10;
  const nav = (globalThis as { navigator?: { userAgent?: string } }).navigator;
  const host = isNodeHost
    ? `Node ${(globalThis as unknown as { process: { version: string } }).process.version}`
    : (nav?.userAgent ?? 'unknown');
  return {
    adapter: gpu.adapter,
    software: gpu.software,
    info: gpu.details?.info ?? {},
    features: gpu.details?.features ?? [],
    limits: gpu.details?.limits ?? {},
    requested: { ...limitsOf(gpu.device) },
    selfCheck: summarize(check.results, gpu.adapter),
    // Infinity does not survive JSON: a ratio past any number is written as 1e308.
    results: check.results.map((r) => ({
      ...r,
      ratio: Number.isFinite(r.ratio) ? r.ratio : 1e308,
    })),
    matmul: { pick: check.matmul, allowed: [...check.allowed], timingsMs },
    host,
  };
}
