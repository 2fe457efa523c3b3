// The worker pool, shared by Node and the browser: batches jobs to workers, judges results on
// the host, and runs a watchdog that terminates and replaces a worker whose job overruns its
// deadline (+grace) or that crashes. The job that was running gets `watchdog_killed`; the other
// unfinished jobs of that batch go back to the front of the queue.
import { WATCHDOG_GRACE_MS } from './limits';
import {
  type FromWorker,
  PROGRESS_BATCH,
  PROGRESS_INDEX,
  type ToWorker,
  type WireJob,
} from './protocol';
import type { RunLimits, RunResult, Sandbox, SandboxJob } from './types';
import { judge, lostJob, toWireJob } from './verdict';

/** What the pool needs from a Web Worker or a worker_thread. */
export interface PoolWorker {
  post(message: ToWorker): void;
  onMessage(listener: (message: FromWorker) => void): void;
  onError(listener: (error: unknown) => void): void;
  terminate(): void;
  /** Node only: whether this worker keeps the process alive (only while there is work). */
  setRef?(keepAlive: boolean): void;
}

export interface PoolOptions {
  size: number;
  limits?: Partial<RunLimits>;
  spawn: () => PoolWorker;
  /** Report progress through a SharedArrayBuffer (else one small message per job). */
  sharedProgress: boolean;
  /** Most jobs per message; smaller batches balance better, larger ones message less. */
  maxBatch?: number;
}

const WATCHDOG_TICK_MS = 50;
const START_TIMEOUT_MS = 60_000;
const MAX_ATTEMPTS = 3;

interface Pending {
  job: SandboxJob;
  wire: WireJob;
  attempts: number;
  settle(result: RunResult): void;
}

interface Batch {
  id: number;
  entries: Pending[];
  /** 1-based index of the running job (0: none yet) and when the host first saw it running. */
  running: number;
  seenAt: number;
}

interface Slot {
  worker: PoolWorker;
  progress: Int32Array | null;
  ready: boolean;
  spawnedAt: number;
  batch: Batch | null;
  dead: boolean;
}

export function createPool(options: PoolOptions): Sandbox {
  const maxBatch = options.maxBatch ?? 64;
  const queue: Pending[] = [];
  const slots: Slot[] = [];
  let nextBatchId = 1;
  let closed = false;
  let spawnFailures = 0;
  let timer: ReturnType<typeof setInterval> | null = null;

  const spawnSlot = (): Slot => {
    const progress = options.sharedProgress ? new Int32Array(new SharedArrayBuffer(8)) : null;
    const slot: Slot = {
      worker: options.spawn(),
      progress,
      ready: false,
      spawnedAt: Date.now(),
      batch: null,
      dead: false,
    };
    slot.worker.onMessage((message) => onMessage(slot, message));
    slot.worker.onError((error) => onCrash(slot, error));
    slot.worker.post({
      type: 'init',
      progress: progress ? (progress.buffer as SharedArrayBuffer) : null,
    });
    slots.push(slot);
    ensureTimer();
    return slot;
  };

  const onMessage = (slot: Slot, message: FromWorker) => {
    if (slot.dead) return;
    switch (message.type) {
      case 'ready':
        slot.ready = true;
        spawnFailures = 0;
        dispatch();
        return;
      case 'started':
        if (slot.batch?.id === message.batchId) markRunning(slot.batch, message.index + 1);
        return;
      case 'results': {
        const batch = slot.batch;
        if (!batch || batch.id !== message.batchId) return;
        slot.batch = null;
        for (const [i, entry] of batch.entries.entries()) {
          const raw = message.results[i];
          entry.settle(raw ? judge(entry.job, raw) : lostJob(entry.job, 'missing result', 0));
        }
        dispatch();
        return;
      }
      case 'crashed':
        if (slot.batch?.id === message.batchId) markRunning(slot.batch, message.index + 1);
        replace(slot, `worker crashed: ${message.message}`);
        return;
    }
  };

  const onCrash = (slot: Slot, error: unknown) => {
    if (slot.dead) return;
    if (!slot.ready) spawnFailures++;
    const text = error instanceof Error ? error.message : String(error);
    replace(slot, `worker crashed: ${text}`);
  };

  const markRunning = (batch: Batch, running: number) => {
    if (running !== batch.running) {
      batch.running = running;
      batch.seenAt = Date.now();
    }
  };

  /** Terminates a worker; its running job is lost, the rest of its batch is re-queued. */
  const replace = (slot: Slot, reason: string) => {
    slot.dead = true;
    slot.worker.terminate();
    slots.splice(slots.indexOf(slot), 1);
    const batch = slot.batch;
    slot.batch = null;
    if (batch) {
      const requeue: Pending[] = [];
      for (const [i, entry] of batch.entries.entries()) {
        const culprit = i + 1 === batch.running;
        // Innocent jobs are re-run freely; only when the culprit is unknown does a job use up
        // one of its attempts, so a job that always kills its worker cannot loop forever.
        if (batch.running === 0) entry.attempts++;
        if (culprit || entry.attempts >= MAX_ATTEMPTS) {
          entry.settle(lostJob(entry.job, reason, culprit ? Date.now() - batch.seenAt : 0));
        } else {
          requeue.push(entry);
        }
      }
      queue.unshift(...requeue);
    }
    if (closed) return;
    if (spawnFailures >= MAX_ATTEMPTS) {
      // Workers cannot start at all: fail what is waiting rather than loop forever.
      for (const entry of queue.splice(0)) entry.settle(lostJob(entry.job, reason, 0));
      spawnFailures = 0;
      if (slots.length === 0) return;
    }
    if (slots.length < options.size) spawnSlot();
    dispatch();
  };

  const dispatch = () => {
    if (closed) return;
    while (slots.length < options.size && queue.length > 0) spawnSlot();
    const idle = slots.filter((slot) => slot.ready && !slot.batch && !slot.dead);
    for (const slot of idle) {
      if (queue.length === 0) break;
      const share = Math.ceil(queue.length / (2 * options.size));
      const entries = queue.splice(0, Math.max(1, Math.min(maxBatch, share)));
      const batch: Batch = { id: nextBatchId++, entries, running: 0, seenAt: Date.now() };
      slot.batch = batch;
      slot.worker.post({
        type: 'batch',
        batchId: batch.id,
        jobs: entries.map((entry) => entry.wire),
      });
    }
    ensureTimer();
    updateRefs();
  };

  // An idle pool must not keep a Node process alive if its owner forgets close().
  const updateRefs = () => {
    const busy = queue.length > 0 || slots.some((slot) => slot.batch);
    for (const slot of slots) slot.worker.setRef?.(busy);
  };

  const watchdog = () => {
    const now = Date.now();
    for (const slot of [...slots]) {
      if (slot.dead) continue;
      if (!slot.ready) {
        if (now - slot.spawnedAt > START_TIMEOUT_MS) {
          spawnFailures++;
          replace(slot, 'worker did not start');
        }
        continue;
      }
      const batch = slot.batch;
      if (!batch) continue;
      if (slot.progress && Atomics.load(slot.progress, PROGRESS_BATCH) === batch.id) {
        markRunning(batch, Atomics.load(slot.progress, PROGRESS_INDEX));
      }
      const entry = batch.entries[batch.running - 1];
      if (entry) {
        // seenAt is never earlier than the real start, so a job is never killed early.
        if (now - batch.seenAt > entry.wire.limits.deadlineMs + WATCHDOG_GRACE_MS) {
          replace(
            slot,
            `watchdog: no result ${entry.wire.limits.deadlineMs} ms + grace after start`,
          );
        }
      } else if (batch.running === 0 && now - batch.seenAt > START_TIMEOUT_MS) {
        replace(slot, 'watchdog: batch never started');
      }
    }
    if (slots.every((slot) => !slot.batch && slot.ready) && timer) {
      clearInterval(timer);
      timer = null;
    }
  };

  const ensureTimer = () => {
    if (timer || closed) return;
    timer = setInterval(watchdog, WATCHDOG_TICK_MS);
    // Node: the timer alone must not keep a process alive (busy workers do, see updateRefs).
    (timer as { unref?: () => void }).unref?.();
  };

  // Start every worker now, so QuickJS loads and warms up while the caller gets ready.
  for (let i = 0; i < options.size; i++) spawnSlot();
  updateRefs();

  return {
    run(jobs: SandboxJob[]): Promise<RunResult[]> {
      if (closed) return Promise.reject(new Error('sandbox is closed'));
      if (jobs.length === 0) return Promise.resolve([]);
      return new Promise((resolve) => {
        const results: RunResult[] = new Array(jobs.length);
        let left = jobs.length;
        for (const [i, job] of jobs.entries()) {
          queue.push({
            job,
            wire: toWireJob(job, options.limits),
            attempts: 0,
            settle: (result) => {
              results[i] = result;
              if (--left === 0) resolve(results);
            },
          });
        }
        dispatch();
      });
    },
    async close(): Promise<void> {
      closed = true;
      if (timer) clearInterval(timer);
      timer = null;
      for (const slot of slots.splice(0)) {
        slot.dead = true;
        slot.worker.terminate();
        if (slot.batch)
          for (const entry of slot.batch.entries)
            entry.settle(lostJob(entry.job, 'sandbox closed', 0));
      }
      for (const entry of queue.splice(0)) entry.settle(lostJob(entry.job, 'sandbox closed', 0));
    },
  };
}
