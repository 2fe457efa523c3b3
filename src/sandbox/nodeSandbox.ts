// The sandbox for Node hosts (CLI, tests, benches): a pool of worker_threads running QuickJS.
// Node-only (tsconfig.node.json). Browser hosts use createBrowserSandbox from './browser';
// both share the pool and the worker code.
import { availableParallelism } from 'node:os';
import { nodeWorkerScript, spawnNodeWorker } from './nodeWorker';
import { createPool } from './pool';
import type { RunLimits, Sandbox } from './types';

export interface SandboxOptions {
  /** Number of workers (default: cores − 1, at least 1). */
  size?: number;
  /** Defaults for every job; a job's own limits override them. */
  limits?: Partial<RunLimits>;
}

export async function createSandbox(options: SandboxOptions = {}): Promise<Sandbox> {
  const script = await nodeWorkerScript();
  return createPool({
    size: Math.max(1, options.size ?? availableParallelism() - 1),
    limits: options.limits,
    spawn: () => spawnNodeWorker(script),
    sharedProgress: true,
  });
}
