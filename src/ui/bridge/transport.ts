// The engine Worker and the wire to it: spawning and replacing it, sending commands, and
// the requests that wait for one answer (judge, solve, snapshot, gguf). What the events mean for
// the page is applyEvent.ts's and runLifecycle.ts's business.
import type {
  EngineCommand,
  EngineEvent,
  RunResult,
  RunSnapshot,
  SampleGroup,
} from '../../engine/api';

export interface EngineHandlers {
  /** Every event of the current Worker (a replaced Worker's late events are dropped). */
  onEvent(event: EngineEvent): void;
  /** The Worker died without a word (its onerror), with the browser's message. */
  onCrash(message: string): void;
}

export type SolveAnswer = { group: SampleGroup | null; error?: string };
export type GgufAnswer = { file: { name: string; parts: Uint8Array[] } | null; error?: string };

let worker: Worker | null = null;
let nextRequestId = 1;
const judgeRequests = new Map<
  number,
  { resolve: (result: RunResult) => void; reject: (error: Error) => void }
>();
const solveRequests = new Map<number, (answer: SolveAnswer) => void>();
const snapshotWaiters = new Map<string, (snapshot: RunSnapshot) => void>();
const ggufRequests = new Map<number, (answer: GgufAnswer) => void>();

/** Starts a fresh engine Worker; it replaces the previous one, if any. */
export function spawnEngine(handlers: EngineHandlers) {
  const spawned = new Worker(new URL('../../engine/worker.ts', import.meta.url), {
    type: 'module',
  });
  worker = spawned;
  // A replaced Worker's late events (a fatal followed by its onerror) are not this engine's.
  spawned.onmessage = (event: MessageEvent<EngineEvent>) => {
    if (spawned !== worker) return;
    const start = performance.now();
    handlers.onEvent(event.data);
    // The main thread's cost of one message: the handler, the store update and the
    // synchronous render it queues as a microtask (npm run bench -- page reads these).
    queueMicrotask(() => performance.measure('engine-message', { start, detail: event.data.type }));
  };
  spawned.onerror = (event) => {
    event.preventDefault();
    if (spawned !== worker) return;
    handlers.onCrash(event.message || 'the engine Worker crashed');
  };
}

/** Ends the current Worker; its late events are ignored. */
export function stopEngine() {
  worker?.terminate();
  worker = null;
}

export function send(command: EngineCommand) {
  worker?.postMessage(command);
}

/** Hands a `judged`, `solved` or `snapshot` event to the request waiting for it. */
export function answerRequest(event: EngineEvent) {
  if (event.type === 'judged') {
    judgeRequests.get(event.requestId)?.resolve(event.result);
    judgeRequests.delete(event.requestId);
  } else if (event.type === 'solved') {
    solveRequests.get(event.requestId)?.(event);
    solveRequests.delete(event.requestId);
  } else if (event.type === 'snapshot') {
    snapshotWaiters.get(event.runId)?.(event.snapshot);
    snapshotWaiters.delete(event.runId);
  } else if (event.type === 'gguf') {
    ggufRequests.get(event.requestId)?.(event);
    ggufRequests.delete(event.requestId);
  }
}

/** Requests the failed engine will never answer get an answer now. */
export function settleRequests(message: string) {
  for (const resolve of solveRequests.values()) resolve({ group: null, error: message });
  solveRequests.clear();
  for (const resolve of ggufRequests.values()) resolve({ file: null, error: message });
  ggufRequests.clear();
  for (const { reject } of judgeRequests.values()) reject(new Error(message));
  judgeRequests.clear();
}

/** Runs a program in the engine's sandbox pool (the inspector's Run). */
export function judge(
  code: string,
  entryPoint: string,
  tests: SampleGroup['tests'],
): Promise<RunResult> {
  const requestId = nextRequestId++;
  return new Promise((resolve, reject) => {
    judgeRequests.set(requestId, { resolve, reject });
    send({ type: 'judge', requestId, code, entryPoint, tests });
  });
}

/** "Your own task": the models' N plans × M programs for a hand-written task, judged. */
export function solve(taskFile: string): Promise<SolveAnswer> {
  const requestId = nextRequestId++;
  return new Promise((resolve) => {
    solveRequests.set(requestId, resolve);
    send({ type: 'solve', requestId, taskFile });
  });
}

/** A run over a base: one role's adapter merged into the base, as a GGUF file. */
export function requestGguf(role: string): Promise<GgufAnswer> {
  const requestId = nextRequestId++;
  return new Promise((resolve) => {
    ggufRequests.set(requestId, resolve);
    send({ type: 'exportGguf', requestId, role });
  });
}

/** The active run's latest snapshot, fresh from the engine. */
export function requestSnapshot(runId: string): Promise<RunSnapshot> {
  return new Promise((resolve) => {
    snapshotWaiters.set(runId, resolve);
    send({ type: 'snapshot' });
  });
}

/**
 * Test only (`?test=1`): `window.__labTest.failNextStep('throw' | 'abort')` makes the
 * engine's next step fail midway, `loseDevice()` destroys the lab's kernels' GPU device, so
 * page tests can watch the page recover from either.
 */
export function exposeTestHooks() {
  if (new URLSearchParams(location.search).get('test') !== '1') return;
  (window as unknown as { __labTest: unknown }).__labTest = {
    failNextStep: (how: 'throw' | 'abort') => send({ type: 'failNextStep', how }),
    loseDevice: () => send({ type: 'loseDevice' }),
  };
}
