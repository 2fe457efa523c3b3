// The page's engine Worker: owns the backend, the models, the sandbox pool and the run, and
// speaks the protocol in ./protocol.ts. The main thread only renders what comes out.
import * as tf from '@tensorflow/tfjs-core';
import { type BackendReport, initBackend } from '../gpu/backend';
import { fetchCheckpoint } from '../model';
import { createBrowserSandbox } from '../sandbox/browser';
import type { Sandbox } from '../sandbox/types';
import { warmStartModels } from '../sft/warmStart';
import { formatTaskError, loadSuite, parseUserTasks, type Task } from '../tasks';
import type { EngineCommand, EngineEvent, EngineStatus } from './protocol';
import { TrainingSession } from './session';
import type { RunSnapshot } from './types';
import { wasmFilePaths } from './wasmFiles';

type SuiteName = 'L1' | 'L2' | 'L3' | 'L4' | 'heldout';
const SUITE_NAMES: SuiteName[] = ['L1', 'L2', 'L3', 'L4', 'heldout'];

const scope = self as unknown as {
  postMessage(event: EngineEvent, transfer?: Transferable[]): void;
  onmessage: ((event: MessageEvent<EngineCommand>) => void) | null;
  location: { origin: string };
};
const base = new URL(import.meta.env.BASE_URL, scope.location.origin).href;

let backend: Promise<BackendReport> | null = null;
let sandbox: Promise<Sandbox> | null = null;
let suites: Promise<Partial<Record<SuiteName, Task[]>>> | null = null;
let session: TrainingSession | null = null;
let runId: string | null = null;
let status: EngineStatus = 'loading';
let wantTraining = false;
let stopWarmStart = false;
/** The run as of its last completed step: what a lost GPU device falls back to. */
let lastSnapshot: RunSnapshot | null = null;
/** Commands run one at a time, in order, so a Step never overlaps a Start. */
let queue: Promise<void> = Promise.resolve();

function post(event: EngineEvent) {
  scope.postMessage(event);
}

function setStatus(next: EngineStatus) {
  status = next;
  post({ type: 'status', status, runId, step: session?.step ?? 0 });
}

function fail(error: unknown, recoverable: boolean) {
  const message = error instanceof Error ? error.message : String(error);
  post({ type: 'error', message, recoverable });
}

function ensureBackend(): Promise<BackendReport> {
  backend ??= initBackend('auto', { wasmPaths: wasmFilePaths() }).then((report) => {
    post({ type: 'backend', report });
    if (report.backend === 'webgpu') watchDevice();
    return report;
  });
  return backend;
}

/** A lost GPU device ends the webgpu backend: say so, move to wasm, resume the last step. */
function watchDevice() {
  const device = (tf.backend() as unknown as { device?: GPUDevice }).device;
  void device?.lost.then((info) => {
    if (info.reason === 'destroyed' && !session) return; // our own shutdown
    wantTraining = false;
    fail(
      new Error(
        `The GPU device was lost (${info.message || info.reason}); continuing on wasm from the last saved step.`,
      ),
      true,
    );
    backend = initBackend('wasm', { wasmPaths: wasmFilePaths() }).then((report) => {
      post({ type: 'backend', report });
      return report;
    });
    queue = queue.then(async () => {
      await backend;
      if (!lastSnapshot) return;
      session = null; // its tensors lived on the lost device
      session = await TrainingSession.restore(lastSnapshot, {
        sandbox: await ensureSandbox(),
        suites: await ensureSuites(),
      });
      setStatus('idle');
    });
  });
}

function ensureSandbox(): Promise<Sandbox> {
  sandbox ??= createBrowserSandbox({ size: 1 });
  return sandbox;
}

function ensureSuites(): Promise<Partial<Record<SuiteName, Task[]>>> {
  suites ??= Promise.all(
    SUITE_NAMES.map(async (name) => {
      const response = await fetch(`${base}tasks/suite-${name}.json`);
      if (!response.ok) throw new Error(`suite ${name}: HTTP ${response.status}`);
      return [name, loadSuite(await response.text()).tasks] as const;
    }),
  ).then((entries) => Object.fromEntries(entries));
  return suites;
}

async function start(command: Extract<EngineCommand, { type: 'start' }>) {
  wantTraining = false;
  setStatus('loading');
  session?.dispose();
  session = null;
  runId = command.runId;
  await ensureBackend();
  const deps = { sandbox: await ensureSandbox(), suites: await ensureSuites() };
  lastSnapshot = command.snapshot ?? null;
  if (command.snapshot) {
    session = await TrainingSession.restore(command.snapshot, deps);
  } else {
    const folder = `${base}checkpoints/${command.config.preset}/`;
    const [planner, coder] = await Promise.all([
      fetchCheckpoint(`${folder}planner/`),
      fetchCheckpoint(`${folder}coder/`),
    ]);
    session = await TrainingSession.create(command.config, { planner, coder, ...deps });
    lastSnapshot = await session.snapshot();
  }
  setStatus('idle');
}

async function warmStart(command: Extract<EngineCommand, { type: 'warmstart' }>) {
  wantTraining = false;
  stopWarmStart = false;
  session?.dispose();
  session = null;
  runId = command.runId;
  setStatus('warmstart');
  await ensureBackend();
  const deps = { sandbox: await ensureSandbox(), suites: await ensureSuites() };
  const budgetSec = command.minutes * 60;
  const started = performance.now();
  const { planner, coder } = await warmStartModels({
    preset: command.config.preset,
    seed: command.seed,
    minutes: command.minutes,
    shouldStop: () => stopWarmStart,
    logEvery: 2,
    onProgress: (role, progress) => {
      const elapsed = (performance.now() - started) / 1000;
      post({
        type: 'progress',
        task: 'Warm start',
        fraction: Math.min(1, elapsed / budgetSec),
        message: `${role} step ${progress.step} · loss ${progress.loss.toFixed(3)} · ${Math.round(progress.tokensPerSec)} tok/s`,
        etaSec: Math.max(0, budgetSec - elapsed),
      });
    },
  });
  session = await TrainingSession.create(command.config, { planner, coder, ...deps });
  lastSnapshot = await session.snapshot();
  post({ type: 'snapshot', runId: command.runId, snapshot: lastSnapshot });
  setStatus('idle');
}

/** One GRPO step, its report, an evaluation when due, and a snapshot to keep the run safe. */
async function stepOnce() {
  if (!session || !runId) throw new Error('No run: start one first.');
  const report = await session.trainStep();
  // The session evaluates inside trainStep when due; eval metrics arrive with the step's.
  post({ type: 'step', runId, report });
  lastSnapshot = await session.snapshot();
  post({ type: 'snapshot', runId, snapshot: lastSnapshot });
}

async function trainLoop() {
  setStatus('training');
  while (wantTraining && session) {
    await stepOnce();
    // Let pause/step commands in between steps.
    await new Promise((resolve) => setTimeout(resolve, 0));
  }
  setStatus('idle');
}

async function handle(command: EngineCommand) {
  switch (command.type) {
    case 'start':
      return start(command);
    case 'train':
      if (status !== 'idle') return;
      wantTraining = true;
      // Not queued: the loop must not block the commands that stop it.
      void trainLoop().catch((error) => {
        wantTraining = false;
        fail(error, true);
        setStatus('idle');
      });
      return;
    case 'pause':
      wantTraining = false;
      stopWarmStart = true;
      return;
    case 'step':
      if (status !== 'idle') return;
      setStatus('stepping');
      try {
        await stepOnce();
      } finally {
        setStatus('idle');
      }
      return;
    case 'snapshot':
      if (!session || !runId) return;
      post({ type: 'snapshot', runId, snapshot: await session.snapshot() });
      return;
    case 'judge': {
      const pool = await ensureSandbox();
      const [result] = await pool.run([
        {
          kind: 'cases',
          id: `judge-${command.requestId}`,
          code: command.code,
          entryPoint: command.entryPoint,
          tests: command.tests,
        },
      ]);
      if (result) post({ type: 'judged', requestId: command.requestId, result });
      return;
    }
    case 'solve': {
      if (!session) throw new Error('No run: start one first.');
      const { tasks, errors } = parseUserTasks(command.taskFile);
      const task = tasks[0];
      if (!task) {
        const why = errors.map(formatTaskError).join('; ') || 'the file holds no task';
        post({ type: 'solved', requestId: command.requestId, group: null, error: why });
        return;
      }
      const group = await session.sampleGroup(task);
      post({ type: 'solved', requestId: command.requestId, group });
      return;
    }
    case 'warmstart':
      return warmStart(command);
  }
}

scope.onmessage = (event) => {
  const command = event.data;
  // Not queued: pause/train steer the loop, and judging needs only the sandbox pool, not
  // the run a queued start may still be loading.
  if (command.type === 'pause' || command.type === 'train' || command.type === 'judge') {
    handle(command).catch((error) => fail(error, true));
    return;
  }
  queue = queue
    .then(() => handle(command))
    .catch((error) => {
      fail(error, command.type !== 'start');
      if (command.type === 'start') setStatus('failed');
      else if (status === 'stepping') setStatus('idle');
    });
};
