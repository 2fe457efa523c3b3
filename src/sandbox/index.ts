// The sandbox, for any host: limits, the in-process runner, and the types. A pool of
// workers comes from the host's own entry: createSandbox in './nodeSandbox' (Node:
// worker_threads) or createBrowserSandbox in './browser' (Web Workers); both share the pool
// and the worker code.
export { DEFAULT_LIMITS } from './limits';
export type { LocalRunner } from './runJob';
export { createLocalRunner, runJob } from './runJob';
export type * from './types';
