// The worker's side of the protocol, shared by Web Workers and worker_threads: load QuickJS,
// warm it up, then run batches and report which job is running (for the pool's watchdog).
import { createExecutor, loadQuickJS } from './executor';
import {
  type FromWorker,
  PROGRESS_BATCH,
  PROGRESS_INDEX,
  type RawRunResult,
  type ToWorker,
} from './protocol';
import { toWireJob } from './verdict';

export interface WorkerEndpoint {
  post(message: FromWorker): void;
  listen(listener: (message: ToWorker) => void): void;
}

const WARMUP_JOBS = [
  toWireJob({
    kind: 'cases',
    id: 'warmup-cases',
    code: 'function warm(n) { let s = 0; for (let i = 0; i < n; i++) s += i; return [s, { n }]; }',
    entryPoint: 'warm',
    tests: [{ args: [1000], expected: null }],
  }),
  toWireJob({
    kind: 'script',
    id: 'warmup-script',
    code: 'function warm(n) { return n + 1; }',
    testScript:
      'const _ = require("lodash"); if (!_.isEqual(warm(1), 2)) throw new Error("warm-up failed");',
  }),
];

export async function serveSandbox(endpoint: WorkerEndpoint): Promise<void> {
  let progress: Int32Array | null = null;
  const queued: ToWorker[] = [];
  let handle: ((message: ToWorker) => void) | null = null;
  // Listen at once so no message is lost while QuickJS loads.
  endpoint.listen((message) => (handle ? handle(message) : queued.push(message)));

  const started = performance.now();
  let executor = createExecutor(await loadQuickJS());
  // The first evaluations in a fresh worker are slow (~100 ms): pay that before any deadline.
  for (let round = 0; round < 3; round++) for (const job of WARMUP_JOBS) executor.execute(job);
  const warmupMs = performance.now() - started;

  let busy = Promise.resolve();
  // Batches run one after another, even when one has to wait for a fresh QuickJS module.
  handle = (message) => {
    busy = busy.then(() => runMessage(message));
  };
  const runMessage = async (message: ToWorker) => {
    if (message.type === 'init') {
      progress = message.progress ? new Int32Array(message.progress) : null;
      return;
    }
    const results: RawRunResult[] = [];
    for (const [index, job] of message.jobs.entries()) {
      if (progress) {
        Atomics.store(progress, PROGRESS_BATCH, message.batchId);
        Atomics.store(progress, PROGRESS_INDEX, index + 1);
      } else {
        endpoint.post({ type: 'started', batchId: message.batchId, index });
      }
      try {
        results.push(executor.execute(job));
        if (executor.broken) executor = createExecutor(await loadQuickJS());
      } catch (error) {
        // A trap inside the WASM module leaves it unusable: report, then let the pool replace us.
        const text = error instanceof Error ? `${error.name}: ${error.message}` : String(error);
        endpoint.post({ type: 'crashed', batchId: message.batchId, index, message: text });
        throw error; // the pool terminates this worker and starts a new one
      }
    }
    if (progress) Atomics.store(progress, PROGRESS_INDEX, 0);
    endpoint.post({ type: 'results', batchId: message.batchId, results });
  };
  endpoint.post({ type: 'ready', warmupMs });
  for (const message of queued.splice(0)) handle(message);
}
