// The page's engine Worker: owns the backend, the models, the sandbox pool and the run, and
// speaks the protocol in ./protocol.ts. The main thread only renders what comes out.
import * as tf from '@tensorflow/tfjs-core';
import {
  type BackendChoice,
  type BackendReport,
  checkKernelsForBase,
  initBackend,
  onBackendChange,
} from '../gpu/backend';
import { SELF_CHECK_ACTIVITY } from '../gpu/engine/gpuReportFormat';
import { destroyKernelDevice } from '../gpu/engine/kernelEngine';
import { fetchCheckpoint } from '../model';
import { hubTransformerConfig } from '../model/families/hubConfig';
import { createBrowserSandbox } from '../sandbox/browser';
import type { Sandbox } from '../sandbox/types';
import { warmStartModels } from '../sft/warmStart';
import {
  formatTaskError,
  loadSuite,
  parseUserTasks,
  SUITE_NAMES,
  type SuiteName,
  type Task,
} from '../tasks';
import { EXAMPLES_SUITES } from '../tasks/examples/suites';
import {
  loadTaskSetSplit,
  mbxpFile,
  TASK_SET_SPLITS,
  type TaskSetSplits,
} from '../tasks/mbxp/taskSet';
import { classifyFailure, type EngineFailure, looksOutOfMemory, watchEngineLog } from './failure';
import { loadHubBase } from './hubBase';
import { saveSnapshot } from './labDb';
import type { EngineCommand, EngineEvent, EngineStatus } from './protocol';
import { roleGguf } from './roleGguf';
import { TrainingSession } from './session';
import { type Suites, taskSetOf, warmStartFolder } from './taskSets';
import type { RunConfig, RunSnapshot } from './types';
import { wasmFilePaths } from './wasmFiles';

const scope = self as unknown as {
  postMessage(event: EngineEvent, transfer?: Transferable[]): void;
  onmessage: ((event: MessageEvent<EngineCommand>) => void) | null;
  location: { origin: string };
  addEventListener(
    type: 'unhandledrejection' | 'error',
    listener: (event: { reason?: unknown; error?: unknown; message?: string }) => void,
  ): void;
};
const base = new URL(import.meta.env.BASE_URL, scope.location.origin).href;

let backend: Promise<BackendReport> | null = null;
let backendChoice: BackendChoice | null = null;
let sandbox: Promise<Sandbox> | null = null;
let suites: Promise<Partial<Record<SuiteName, Task[]>>> | null = null;
let mbxp: Promise<TaskSetSplits> | null = null;
let examples: Promise<Suites> | null = null;
let session: TrainingSession | null = null;
let runId: string | null = null;
let status: EngineStatus = 'loading';
let wantTraining = false;
let stopWarmStart = false;
/** The run as of its last completed step: what a lost GPU device falls back to. */
let lastSnapshot: RunSnapshot | null = null;
/** Commands run one at a time, in order, so a Step never overlaps a Start. */
let queue: Promise<void> = Promise.resolve();
/** Set once the engine cannot go on; from then on the Worker only waits to be replaced. */
let fatal: EngineFailure | null = null;
/** Runs whose warm start this Worker has evaluated (their step 0), so it happens once. */
const evaluatedAtStart = new Set<string>();
/** What the Worker itself is doing, for when the session does not say (loading, sampling). */
let workerActivity = 'a training step';
/** Test only: how the next step fails midway (see the `failNextStep` command). */
let armedFailure: 'throw' | 'abort' | null = null;
/** The last lines the engine logged: a failure is classified with what was said before it. */
const recentLogLines: string[] = [];
const KEPT_LOG_LINES = 20;

// XNNPACK's failure line ends the step (see watchEngineLog).
watchEngineLog(recentLogLines, becomeFatal, KEPT_LOG_LINES);

// Out-of-memory errors that escape every handler (a rejected promise nobody awaited).
scope.addEventListener('unhandledrejection', (event) => {
  if (looksOutOfMemory(String((event.reason as Error | undefined)?.message ?? event.reason))) {
    becomeFatal(event.reason);
  }
});
scope.addEventListener('error', (event) => {
  if (looksOutOfMemory(event.message ?? '')) becomeFatal(event.error ?? event.message);
});

function post(event: EngineEvent) {
  // After a fatal failure nothing this Worker computes can be trusted, not even a status.
  if (fatal && event.type !== 'fatal') return;
  scope.postMessage(event);
}

/** What the session says it is doing (once the engine reports it), else what the Worker is. */
function currentActivity(): string {
  const reported = (session as unknown as { activity?: unknown } | null)?.activity;
  // An idle session failed in what the Worker was doing around it (saving, loading).
  return typeof reported === 'string' && reported && reported !== 'idle'
    ? reported
    : workerActivity;
}

/** The session's micro-batch budget, once the engine reports one. */
function sessionBudgetMiB(): number | undefined {
  const reported = (session as unknown as { memoryBudgetMiB?: unknown } | null)?.memoryBudgetMiB;
  return typeof reported === 'number' && Number.isFinite(reported) ? reported : undefined;
}

/**
 * Ends this engine: tells the page once what failed and where, then ignores every command.
 * The page replaces the Worker and restores the last saved snapshot; nothing here is saved,
 * since the failed step (or the wasm heap) may have left the models half-updated.
 */
function becomeFatal(error: unknown) {
  if (fatal) return;
  fatal = classifyFailure(error, recentLogLines);
  wantTraining = false;
  stopWarmStart = true;
  post({ type: 'fatal', ...fatal, activity: currentActivity(), step: session?.step ?? 0 });
}

/** Passes the session's activity changes to the page (it shows "evaluating…" with them). */
function watchActivity(target: TrainingSession) {
  target.onActivity = (activity) => post({ type: 'activity', activity });
}

/** `step`: where the run being loaded stands, while no session holds it yet. */
function setStatus(next: EngineStatus, step?: number) {
  status = next;
  const memoryBudgetMiB = sessionBudgetMiB();
  post({
    type: 'status',
    status,
    runId,
    step: session?.step ?? step ?? 0,
    ...(memoryBudgetMiB !== undefined ? { memoryBudgetMiB } : {}),
  });
}

/**
 * The sandbox as the session sees it: the pool, plus the test-only failure, fired after a
 * step's programs are judged (its rollouts are done, its updates are not).
 */
function sessionSandbox(pool: Sandbox): Sandbox {
  return {
    run: async (jobs) => {
      const results = await pool.run(jobs);
      const how = armedFailure;
      armedFailure = null;
      if (how === 'throw') throw new Error('Test failure: the engine was told to fail mid-step.');
      if (how === 'abort') wreckWasmHeap();
      return results;
    },
    close: () => pool.close(),
  };
}

/**
 * Test only: leaves the wasm module as a real out-of-memory does. Overwriting the heap
 * scrambles the allocator's and tfjs's tables, so this allocation and every later wasm
 * call trap on a pointer out of bounds.
 */
function wreckWasmHeap(): never {
  const module = (
    tf.backend() as unknown as { wasm?: { HEAPU8: Uint8Array; _malloc(bytes: number): number } }
  ).wasm;
  if (!module) {
    throw new Error(`Test abort: the ${tf.getBackend()} backend has no wasm heap to wreck.`);
  }
  module.HEAPU8.fill(0xff);
  module._malloc(64);
  throw new Error('Test abort: the wasm heap was overwritten but still allocated.');
}

function fail(error: unknown, recoverable: boolean) {
  const message = error instanceof Error ? error.message : String(error);
  post({ type: 'error', message, recoverable });
}

/** The run's backend: started once, and again only when a run asks for another. */
function ensureBackend(choice: BackendChoice = 'auto'): Promise<BackendReport> {
  if (backend && choice === backendChoice) return backend;
  backendChoice = choice;
  backend = startBackend(choice);
  return backend;
}

async function startBackend(choice: BackendChoice): Promise<BackendReport> {
  const options = {
    wasmPaths: wasmFilePaths(),
    // The backend line says so while the kernels are checked on this adapter (a few seconds).
    onSelfCheck: () => post({ type: 'activity', activity: SELF_CHECK_ACTIVITY }),
  };
  let report: BackendReport;
  try {
    report = await initBackend(choice, options);
  } catch (error) {
    // A choice this browser cannot run (the kernels without WebGPU): say so, run on auto.
    const why = error instanceof Error ? error.message : String(error);
    fail(new Error(`The backend ${choice} cannot start (${why}); running on auto instead.`), true);
    report = await initBackend('auto', options);
  }
  post({ type: 'backend', report });
  if (report.selfCheck) post({ type: 'activity', activity: 'idle' });
  if (report.backend === 'webgpu') watchDevice();
  return report;
}

// The lab's kernels turn themselves off when their device is lost or fails mid-run; the tfjs
// backend redoes that call from the last finished step, so the run goes on without a restore.
onBackendChange((report, why) => {
  fail(
    new Error(
      `The lab's WebGPU kernels stopped (${why}); continuing on tfjs ${report.backend} from the last finished step.`,
    ),
    true,
  );
  post({ type: 'backend', report });
});

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
        ...(await baseOf(lastSnapshot.config)),
        sandbox: sessionSandbox(await ensureSandbox()),
        suites: await ensureSuites(),
        ...(await ensureTaskSets(lastSnapshot.config)),
      });
      watchActivity(session);
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

/** The examples world's suites or MBXP's splits, fetched once, only for a run on them (engine/taskSets.ts). */
async function ensureTaskSets(
  config: RunConfig,
): Promise<{ mbxp?: TaskSetSplits; examples?: Suites }> {
  if (taskSetOf(config) === 'examples') {
    examples ??= Promise.all(
      EXAMPLES_SUITES.map(async (spec) => {
        const response = await fetch(`${base}${spec.file}`);
        if (!response.ok) throw new Error(`${spec.file}: HTTP ${response.status}`);
        return [spec.name, loadSuite(await response.text()).tasks] as const;
      }),
    )
      .then((entries): Suites => Object.fromEntries(entries))
      .catch((error) => {
        examples = null; // a later start tries again
        throw error;
      });
    return { examples: await examples };
  }
  if (taskSetOf(config) !== 'mbxp') return {};
  mbxp ??= Promise.all(
    TASK_SET_SPLITS.map(async (split) => {
      const response = await fetch(`${base}${mbxpFile(split)}`);
      if (!response.ok) throw new Error(`${mbxpFile(split)}: HTTP ${response.status}`);
      return loadTaskSetSplit(await response.text(), split);
    }),
  )
    .then(([train = [], validation = []]) => ({ train, validation }))
    .catch((error) => {
      mbxp = null; // a later start tries again
      throw error;
    });
  return { mbxp: await mbxp };
}

async function start(command: Extract<EngineCommand, { type: 'start' }>) {
  wantTraining = false;
  workerActivity = 'loading the run';
  session?.dispose();
  session = null;
  runId = command.runId;
  // Said of the run being loaded, at its own step: the previous run's step made the page's
  // counter fall back (to 0 under an imported run of step 1) until the load finished.
  setStatus('loading', command.snapshot?.step ?? 0);
  await ensureBackend(command.config.backend);
  const deps = {
    sandbox: sessionSandbox(await ensureSandbox()),
    suites: await ensureSuites(),
    ...(await ensureTaskSets(command.snapshot?.config ?? command.config)),
  };
  lastSnapshot = command.snapshot ?? null;
  if (command.snapshot) {
    session = await TrainingSession.restore(withBudget(command.snapshot, command.config), {
      ...deps,
      ...(await baseOf(command.snapshot.config)),
    });
  } else {
    const folder = `${base}${warmStartFolder(command.config)}/`;
    session = await TrainingSession.create(command.config, {
      // Over a pretrained base every role is an adapter over it: no shipped checkpoints.
      ...(command.config.base !== undefined
        ? await baseOf(command.config)
        : await fetchAgents(folder, command.config)),
      ...deps,
    });
    lastSnapshot = await session.snapshot();
  }
  watchActivity(session);
  workerActivity = 'a training step';
  setStatus('idle');
  if (command.continueWith === 'train') beginTraining();
  else if (command.continueWith === 'step') await stepCommand();
}

/** A run's pretrained base (URL base= and hub=), from the Hub through Cache Storage. */
async function baseOf(config: RunConfig) {
  if (config.base === undefined) return {};
  workerActivity = `loading ${config.base}`;
  const loaded = { base: await loadHubBase(config, post) };
  // The kernels check what the base's config needs before it reaches them; the backend line
  // then counts those checks too (or says which failed, and the run goes on on tfjs).
  const before = backend ? await backend : null;
  if (before?.kernels) {
    post({ type: 'activity', activity: SELF_CHECK_ACTIVITY });
    const report = await checkKernelsForBase(
      before,
      hubTransformerConfig(loaded.base.model.config),
    );
    backend = Promise.resolve(report);
    post({ type: 'backend', report });
    post({ type: 'activity', activity: 'idle' });
  }
  return loaded;
}

/**
 * The preset's warm starts for the run's agents: Planner and Coder; with a Debugger or a
 * Retriever their own (debugger/, retriever/) when shipped, else the session copies the
 * Coder / Planner; with a Retriever the Planner continued on example-first prompts
 * (planner-retrieval/) when shipped.
 */
async function fetchAgents(folder: string, config: RunConfig) {
  if (config.grpo.mode === 'self-plan') {
    // One model, in the Coder's place; nothing plans apart from it.
    const coder = await fetchCheckpoint(`${folder}coder/`).catch((error: unknown) => {
      throw new Error(
        `self-plan mode starts from its own warm start, ${folder}coder/, and it could not be loaded (the lab ships one for the examples task set, preset tiny): ${String(error)}`,
      );
    });
    return { planner: coder, coder };
  }
  const agents: string = config.grpo.agents ?? 'planner,coder';
  const optional = (name: string) => fetchCheckpoint(`${folder}${name}/`).catch(() => undefined);
  const withRetriever = agents.includes('retriever');
  const [planner, coder, debuggerAgent, retriever] = await Promise.all([
    (withRetriever ? optional('planner-retrieval') : Promise.resolve(undefined)).then(
      (adapted) => adapted ?? fetchCheckpoint(`${folder}planner/`),
    ),
    fetchCheckpoint(`${folder}coder/`),
    agents.includes('debugger') ? optional('debugger') : undefined,
    withRetriever ? optional('retriever') : undefined,
  ]);
  return {
    planner,
    coder,
    ...(debuggerAgent ? { debugger: debuggerAgent } : {}),
    ...(retriever ? { retriever } : {}),
  };
}

/** The snapshot with the page's memory budget: a retry after an out-of-memory halves it. */
function withBudget(snapshot: RunSnapshot, config: RunSnapshot['config']): RunSnapshot {
  const { memoryBudgetMiB: _saved, ...rest } = snapshot.config;
  const memoryBudgetMiB = config.memoryBudgetMiB;
  return {
    ...snapshot,
    config: memoryBudgetMiB === undefined ? rest : { ...rest, memoryBudgetMiB },
  };
}

async function warmStart(command: Extract<EngineCommand, { type: 'warmstart' }>) {
  if (command.config.base !== undefined)
    throw new Error(
      `Warm start from scratch trains the lab's own tiny models; a run over base ${command.config.base} starts from the base itself (Reset)`,
    );
  wantTraining = false;
  stopWarmStart = false;
  session?.dispose();
  session = null;
  runId = command.runId;
  workerActivity = 'the warm start';
  setStatus('warmstart');
  await ensureBackend(command.config.backend);
  const deps = {
    sandbox: sessionSandbox(await ensureSandbox()),
    suites: await ensureSuites(),
    ...(await ensureTaskSets(command.config)),
  };
  const budgetSec = command.minutes * 60;
  const started = performance.now();
  const parameters = new Map<string, number>();
  const { planner, coder } = await warmStartModels({
    preset: command.config.preset,
    seed: command.seed,
    minutes: command.minutes,
    shouldStop: () => stopWarmStart,
    logEvery: 2,
    onRoleStart: (role, count) => parameters.set(role, count),
    onProgress: (role, progress) => {
      const elapsed = (performance.now() - started) / 1000;
      post({
        type: 'warmstartLoss',
        runId: command.runId,
        role,
        step: progress.step,
        loss: progress.loss,
        tokensPerSec: progress.tokensPerSec,
      });
      post({
        type: 'progress',
        task: 'Warm start',
        fraction: Math.min(1, elapsed / budgetSec),
        message: `${role} step ${progress.step} · loss ${progress.loss.toFixed(3)} · ${Math.round(progress.tokensPerSec)} tok/s`,
        etaSec: Math.max(0, budgetSec - elapsed),
      });
    },
  });
  const made =
    planner === coder
      ? [['shared', coder] as const]
      : ([
          ['planner', planner],
          ['coder', coder],
        ] as const);
  post({
    type: 'warmstartDone',
    runId: command.runId,
    summary: {
      seconds: (performance.now() - started) / 1000,
      stopped: stopWarmStart,
      roles: made.map(([role, checkpoint]) => {
        const sft = (
          checkpoint.lab as
            | { sft?: { steps: number; examples: number; finalLoss: number } }
            | undefined
        )?.sft;
        return {
          role,
          steps: sft?.steps ?? 0,
          examples: sft?.examples ?? 0,
          finalLoss: sft?.finalLoss ?? Number.NaN,
          parameters: parameters.get(role) ?? 0,
        };
      }),
    },
  });
  session = await TrainingSession.create(command.config, { planner, coder, ...deps });
  watchActivity(session);
  lastSnapshot = await session.snapshot();
  await keepSnapshot(command.runId, lastSnapshot);
  workerActivity = 'a training step';
  setStatus('idle');
}

/**
 * One GRPO step, its report, an evaluation when due, and a snapshot to keep the run safe.
 * Any error inside is fatal: a step that broke midway may have updated one role and not
 * the other, so only the last snapshot is a state worth continuing from.
 */
async function stepOnce() {
  if (!session || !runId) throw new Error('No run: start one first.');
  try {
    if (session.step === 0 && session.config.evalEvery > 0 && !evaluatedAtStart.has(runId)) {
      await evaluateWarmStart(session, runId);
    }
    workerActivity = 'a training step';
    const report = await session.trainStep();
    // The session evaluates inside trainStep when due; eval metrics arrive with the step's.
    post({ type: 'step', runId, report });
    workerActivity = 'saving the step';
    lastSnapshot = await session.snapshot();
    await keepSnapshot(runId, lastSnapshot);
    workerActivity = 'a training step';
  } catch (error) {
    becomeFatal(error);
    throw error;
  }
}

/**
 * Saves the run's snapshot in IndexedDB, where a reload or a replaced Worker finds it. A
 * failed write (a full disk) loses only this save: the run goes on, and the page says so.
 */
async function keepSnapshot(id: string, snapshot: RunSnapshot) {
  try {
    await saveSnapshot(id, snapshot);
  } catch (error) {
    post({
      type: 'error',
      message: `Saving the run failed: ${(error as Error).message}`,
      recoverable: true,
    });
  }
}

/**
 * The warm start's level on the quick-eval suites, before the first step changes it: the
 * page's "Is it learning?" baseline. Said as "the evaluation", as a step's own evaluation is.
 */
async function evaluateWarmStart(target: TrainingSession, id: string) {
  workerActivity = 'the evaluation';
  post({ type: 'activity', activity: 'the evaluation' });
  const report = await target.evaluate();
  evaluatedAtStart.add(id);
  post({ type: 'eval', runId: id, report });
}

async function trainLoop() {
  setStatus('training');
  while (wantTraining && session && !fatal) {
    await stepOnce();
    // Let pause/step commands in between steps.
    await new Promise((resolve) => setTimeout(resolve, 0));
  }
  setStatus('idle');
}

function beginTraining() {
  if (status !== 'idle' || fatal) return;
  wantTraining = true;
  // Not queued: the loop must not block the commands that stop it.
  void trainLoop().catch((error) => {
    wantTraining = false;
    fail(error, true);
    setStatus('idle');
  });
}

async function stepCommand() {
  if (status !== 'idle' || fatal) return;
  setStatus('stepping');
  try {
    await stepOnce();
  } finally {
    setStatus('idle');
  }
}

async function handle(command: EngineCommand) {
  switch (command.type) {
    case 'start':
      return start(command);
    case 'train':
      beginTraining();
      return;
    case 'pause':
      wantTraining = false;
      stopWarmStart = true;
      return;
    case 'step':
      return stepCommand();
    case 'snapshot':
      if (!session || !runId) return;
      post({ type: 'snapshot', runId, snapshot: await session.snapshot() });
      return;
    case 'exportGguf': {
      const { requestId, role } = command;
      try {
        if (!session) throw new Error('No run: start one first.');
        const file = await roleGguf(await session.snapshot(), role);
        post({ type: 'gguf', requestId, file });
      } catch (err) {
        post({ type: 'gguf', requestId, file: null, error: (err as Error).message });
      }
      return;
    }
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
      workerActivity = 'answering your own task';
      try {
        const group = await session.sampleGroup(task);
        post({ type: 'solved', requestId: command.requestId, group });
      } finally {
        workerActivity = 'a training step';
      }
      return;
    }
    case 'warmstart':
      return warmStart(command);
    case 'failNextStep':
      armedFailure = command.how;
      return;
    case 'loseDevice':
      if (!destroyKernelDevice()) fail(new Error('Test: the lab’s kernels are not running.'), true);
      return;
  }
}

/** A command's error: fatal when it says the backend's memory ran out, else reported. */
function failCommand(command: EngineCommand, error: unknown) {
  if (fatal || classifyFailure(error, recentLogLines).kind === 'out_of_memory') {
    becomeFatal(error);
    return;
  }
  fail(error, command.type !== 'start');
  if (command.type === 'start') setStatus('failed');
  else if (status === 'stepping') setStatus('idle');
}

scope.onmessage = (event) => {
  const command = event.data;
  if (fatal) return; // the page is replacing this Worker
  // Not queued: pause/train steer the loop, judging needs only the sandbox pool, not the
  // run a queued start may still be loading, and a test failure must reach a running step.
  if (
    command.type === 'pause' ||
    command.type === 'train' ||
    command.type === 'judge' ||
    command.type === 'failNextStep' ||
    command.type === 'loseDevice'
  ) {
    handle(command).catch((error) => failCommand(command, error));
    return;
  }
  queue = queue.then(() => handle(command)).catch((error) => failCommand(command, error));
};
