// Default per-run limits and how a job's own limits combine with the sandbox's.
import type { RunLimits } from './types';

/** QuickJS must hit its own stack limit before the Worker's native stack runs out. */
export const MAX_STACK_BYTES = 128 * 1024;

export const DEFAULT_LIMITS: RunLimits = {
  deadlineMs: 2000,
  memoryBytes: 64 * 1024 * 1024,
  stackBytes: MAX_STACK_BYTES,
  outputBytes: 64 * 1024,
};

/** Extra time the pool's watchdog allows past a deadline before it terminates the worker. */
export const WATCHDOG_GRACE_MS = 500;

export function resolveLimits(...layers: (Partial<RunLimits> | undefined)[]): RunLimits {
  const limits: RunLimits = { ...DEFAULT_LIMITS };
  for (const layer of layers) {
    for (const [key, value] of Object.entries(layer ?? {})) {
      if (typeof value === 'number' && Number.isFinite(value) && value > 0) {
        limits[key as keyof RunLimits] = value;
      }
    }
  }
  limits.stackBytes = Math.min(limits.stackBytes, MAX_STACK_BYTES);
  return limits;
}
