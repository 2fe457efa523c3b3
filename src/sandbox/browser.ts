// The sandbox for the page: the same pool and worker code as Node, with Web Workers that Vite
// bundles from worker.ts. Progress goes through a SharedArrayBuffer only when the page is
// cross-origin isolated; otherwise each job start is a tiny message.
import { createPool, type PoolWorker } from './pool';
import type { FromWorker } from './protocol';
import type { RunLimits, Sandbox } from './types';

export interface BrowserSandboxOptions {
  /** Number of Web Workers (default: hardwareConcurrency − 1, at least 1). */
  size?: number;
  limits?: Partial<RunLimits>;
}

function spawnWebWorker(): PoolWorker {
  const worker = new Worker(new URL('./worker.ts', import.meta.url), { type: 'module' });
  return {
    post: (message) => worker.postMessage(message),
    onMessage: (listener) =>
      worker.addEventListener('message', (event: MessageEvent<FromWorker>) => listener(event.data)),
    onError: (listener) =>
      worker.addEventListener('error', (event) => listener(new Error(event.message))),
    terminate: () => worker.terminate(),
  };
}

export async function createBrowserSandbox(options: BrowserSandboxOptions = {}): Promise<Sandbox> {
  const cores = globalThis.navigator?.hardwareConcurrency ?? 2;
  return createPool({
    size: Math.max(1, options.size ?? cores - 1),
    limits: options.limits,
    spawn: spawnWebWorker,
    sharedProgress:
      typeof SharedArrayBuffer !== 'undefined' && globalThis.crossOriginIsolated === true,
  });
}
