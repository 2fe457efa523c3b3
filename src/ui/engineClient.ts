// The only bridge between the page and the engine Worker: sends commands, turns events into
// store updates, and keeps IndexedDB in step so a reload (or a crashed Worker) resumes.

import type {
  EngineCommand,
  EngineEvent,
  EngineStatus,
  RunConfig,
  RunResult,
  RunSnapshot,
  SampleGroup,
} from '../engine/api';
import {
  classifyFailure,
  decodeRunConfig,
  describeRecovery,
  type EngineFailure,
  encodeRunConfig,
  planRecovery,
} from '../engine/api';
import * as db from './persist/runsDb';
import { activeRun, MAX_KEPT_STEPS, type RunRecord, useLabStore } from './state/labStore';

const PERSISTED_GROUP_STEPS = 20;

let worker: Worker | null = null;
let nextRequestId = 1;
const judgeRequests = new Map<
  number,
  { resolve: (result: RunResult) => void; reject: (error: Error) => void }
>();
const solveRequests = new Map<
  number,
  (answer: { group: SampleGroup | null; error?: string }) => void
>();
let errorId = 1;

/**
 * What the user asked the engine to do and it has not finished: a replaced engine picks it
 * up. Cleared by Pause, by a step landing, and by the engine going idle on its own.
 */
let requestedWork: 'train' | 'step' | null = null;
/** Whether the engine's last status was a busy one (its next idle ends the requested work). */
let engineBusy = false;
/** Engine failures in a row, without a step landing in between. */
let consecutiveFailures = 0;
/** The micro-batch budget the engine last reported, in MiB. */
let engineBudgetMiB: number | undefined;

/**
 * IndexedDB writes of engine events, in order. A status change is shown only after the
 * writes before it have landed, so "idle" means the step is saved (a reload resumes it).
 */
let persisting: Promise<void> = Promise.resolve();
function persist(write: () => Promise<void>) {
  persisting = persisting.then(write).catch((error: unknown) => {
    reportError(`Saving the run failed: ${(error as Error).message}`, true);
  });
}

function send(command: EngineCommand) {
  worker?.postMessage(command);
}

function reportError(message: string, recoverable: boolean) {
  useLabStore.setState((state) => ({
    errors: [...state.errors, { id: errorId++, message, recoverable }].slice(-5),
  }));
}

function spawnWorker() {
  const spawned = new Worker(new URL('../engine/worker.ts', import.meta.url), { type: 'module' });
  worker = spawned;
  engineBusy = false;
  // A replaced Worker's late events (a fatal followed by its onerror) are not this engine's.
  spawned.onmessage = (event: MessageEvent<EngineEvent>) => {
    if (spawned === worker) onEvent(event.data);
  };
  spawned.onerror = (event) => {
    event.preventDefault();
    if (spawned !== worker) return;
    const message = event.message || 'the engine Worker crashed';
    const status = useLabStore.getState().status;
    void recoverFromFailure(classifyFailure(message), activityOfStatus(status));
  };
}

/** What a Worker that died without a word was doing, as far as the page can tell. */
function activityOfStatus(status: EngineStatus): string {
  if (status === 'training' || status === 'stepping') return 'a training step';
  if (status === 'warmstart') return 'the warm start';
  return 'loading the run';
}

/**
 * After a fatal engine failure: the Worker is replaced, the run restored from its last saved
 * snapshot (IndexedDB), and what the user had asked for (training, a step) resumed, with
 * half the micro-batch budget after an out-of-memory, until planRecovery gives up. The
 * page says what happened and what it did.
 */
async function recoverFromFailure(failure: EngineFailure, activity: string) {
  worker?.terminate();
  worker = null;
  settleRequests(`The engine stopped: ${failure.message}`);
  consecutiveFailures += 1;
  const failures = consecutiveFailures;
  useLabStore.setState({ status: 'loading' });
  // The last step's snapshot may still be on its way into IndexedDB.
  await persisting;
  const run = activeRun(useLabStore.getState());
  const plan = planRecovery({
    failure,
    consecutiveFailures: failures,
    configuredBudgetMiB: run?.config.memoryBudgetMiB,
    effectiveBudgetMiB: engineBudgetMiB,
  });
  const snapshot = run ? await db.loadSnapshot(run.id) : undefined;
  reportError(
    describeRecovery({
      failure,
      activity,
      plan,
      savedStep: snapshot?.step ?? 0,
      consecutiveFailures: failures,
    }),
    plan.action === 'retry',
  );
  const continueWith = plan.action === 'retry' ? (requestedWork ?? undefined) : undefined;
  if (plan.action === 'give_up') consecutiveFailures = 0;
  spawnWorker();
  if (!run) return;
  let restarted = run;
  if (plan.memoryBudgetMiB !== run.config.memoryBudgetMiB) {
    restarted =
      updateRun(run.id, (r) => ({
        ...r,
        config: withMemoryBudget(r.config, plan.memoryBudgetMiB),
      })) ?? run;
    await db.saveRun(restarted);
  }
  const groups = useLabStore.getState().groups.filter((g) => g.step <= (snapshot?.step ?? 0));
  await startRun(restarted, snapshot, { groups, keepSelection: true, continueWith });
}

function withMemoryBudget(config: RunConfig, memoryBudgetMiB: number | undefined): RunConfig {
  const { memoryBudgetMiB: _old, ...rest } = config;
  return memoryBudgetMiB === undefined ? rest : { ...rest, memoryBudgetMiB };
}

/** Requests the failed engine will never answer get an answer now. */
function settleRequests(message: string) {
  for (const resolve of solveRequests.values()) resolve({ group: null, error: message });
  solveRequests.clear();
  for (const { reject } of judgeRequests.values()) reject(new Error(message));
  judgeRequests.clear();
}

function updateRun(runId: string, update: (run: RunRecord) => RunRecord): RunRecord | undefined {
  let updated: RunRecord | undefined;
  useLabStore.setState((state) => ({
    runs: state.runs.map((run) => {
      if (run.id !== runId) return run;
      updated = update(run);
      return updated;
    }),
  }));
  return updated;
}

function onEvent(event: EngineEvent) {
  switch (event.type) {
    case 'backend':
      useLabStore.setState({ backend: event.report });
      return;
    case 'status': {
      const busy = event.status === 'training' || event.status === 'stepping';
      if (engineBusy && !busy) requestedWork = null;
      engineBusy = busy;
      if (event.memoryBudgetMiB !== undefined) engineBudgetMiB = event.memoryBudgetMiB;
      void persisting.then(() => {
        useLabStore.setState({
          status: event.status,
          step: event.step,
          // A status sent before the run is loaded says nothing of its budget.
          ...(event.memoryBudgetMiB !== undefined
            ? { memoryBudgetMiB: event.memoryBudgetMiB }
            : {}),
        });
        if (event.status !== 'warmstart') useLabStore.setState({ progress: null });
      });
      return;
    }
    case 'fatal':
      void recoverFromFailure(event, event.activity);
      return;
    case 'step': {
      const { report, runId } = event;
      consecutiveFailures = 0;
      if (requestedWork === 'step') requestedWork = null;
      const run = updateRun(runId, (r) => ({
        ...r,
        points: [
          ...r.points.filter((p) => p.step !== report.step),
          { step: report.step, values: report.metrics },
        ],
      }));
      if (runId !== useLabStore.getState().activeRunId) return;
      // A step redone after a failure replaces the copy that landed before it.
      const kept = [
        ...useLabStore.getState().groups.filter((g) => g.step < report.step),
        { step: report.step, groups: report.groups },
      ].slice(-MAX_KEPT_STEPS);
      useLabStore.setState((state) => ({
        groups: kept,
        step: report.step,
        // Follow the newest step unless the user is reading an older one.
        selection:
          state.selection === null || state.selection.step === report.step - 1
            ? {
                step: report.step,
                groupIndex: state.selection?.groupIndex ?? 0,
                planIndex: state.selection?.planIndex ?? 0,
                programIndex: state.selection?.programIndex ?? 0,
              }
            : state.selection,
      }));
      for (const skipped of report.skippedUpdates) {
        reportError(
          `Step ${report.step}: ${skipped.role} update skipped (${skipped.reason}).`,
          true,
        );
      }
      if (run) persist(() => db.saveRun(run));
      persist(() =>
        db.saveStepGroups(
          runId,
          { step: report.step, groups: report.groups },
          PERSISTED_GROUP_STEPS,
        ),
      );
      return;
    }
    case 'snapshot':
      persist(() => db.saveSnapshot(event.runId, event.snapshot));
      snapshotWaiters.get(event.runId)?.(event.snapshot);
      snapshotWaiters.delete(event.runId);
      return;
    case 'progress':
      useLabStore.setState({
        progress: {
          task: event.task,
          fraction: event.fraction,
          message: event.message,
          etaSec: event.etaSec,
        },
      });
      return;
    case 'judged':
      judgeRequests.get(event.requestId)?.resolve(event.result);
      judgeRequests.delete(event.requestId);
      return;
    case 'solved':
      solveRequests.get(event.requestId)?.(event);
      solveRequests.delete(event.requestId);
      return;
    case 'error':
      reportError(event.message, event.recoverable);
      settleRequests(event.message);
      return;
  }
}

const snapshotWaiters = new Map<string, (snapshot: RunSnapshot) => void>();

function newRunRecord(config: RunConfig, name?: string): RunRecord {
  const count = useLabStore.getState().runs.length + 1;
  return {
    id: `run-${Date.now().toString(36)}-${Math.floor(performance.now()).toString(36)}`,
    name: name ?? `run ${count} · ${config.grpo.mode} · seed ${config.grpo.seed}`,
    config,
    createdAt: Date.now(),
    points: [],
    visible: true,
  };
}

interface StartOptions {
  /** The sample groups to show (saved ones on a switch, the current ones on a restart). */
  groups?: db.StoredGroups;
  /** Keep the inspector where the user left it (a restart after a failure). */
  keepSelection?: boolean;
  /** Train or step once the run is loaded: what the user had asked of a failed engine. */
  continueWith?: 'train' | 'step' | undefined;
}

async function startRun(run: RunRecord, snapshot?: RunSnapshot, options: StartOptions = {}) {
  const { groups, keepSelection, continueWith } = options;
  requestedWork = continueWith ?? null;
  useLabStore.setState((state) => ({
    activeRunId: run.id,
    config: run.config,
    groups: groups ?? [],
    selection:
      keepSelection && state.selection && groups?.some((g) => g.step === state.selection?.step)
        ? state.selection
        : groups?.length
          ? { step: groups.at(-1)!.step, groupIndex: 0, planIndex: 0, programIndex: 0 }
          : null,
    step: snapshot?.step ?? 0,
  }));
  writeConfigToUrl(run.config);
  await db.saveActiveRunId(run.id);
  send({
    type: 'start',
    runId: run.id,
    config: run.config,
    ...(snapshot ? { snapshot } : {}),
    ...(continueWith ? { continueWith } : {}),
  });
}

/** URL keys that are the page's, not the run's: kept when the settings are written. */
const PAGE_KEYS = ['test'];

export function writeConfigToUrl(config: RunConfig) {
  const params = encodeRunConfig(config);
  const current = new URLSearchParams(location.search);
  for (const key of PAGE_KEYS) {
    const value = current.get(key);
    if (value !== null) params.set(key, value);
  }
  const query = params.toString();
  const url = `${location.pathname}${query ? `?${query}` : ''}${location.hash}`;
  history.replaceState(null, '', url);
}

/**
 * Test only (`?test=1`): `window.__labTest.failNextStep('throw' | 'abort')` makes the
 * engine's next step fail midway, so page tests can watch the page recover from it.
 */
function exposeTestHooks() {
  if (new URLSearchParams(location.search).get('test') !== '1') return;
  (window as unknown as { __labTest: unknown }).__labTest = {
    failNextStep: (how: 'throw' | 'abort') => send({ type: 'failNextStep', how }),
  };
}

/** Opens the lab: the URL's config, and the saved active run resumed when it matches it. */
export async function bootLab() {
  const params = new URLSearchParams(location.search);
  const { config, problems } = decodeRunConfig(params);
  useLabStore.setState({ config, configProblems: problems });
  for (const problem of problems) {
    reportError(`Link setting ignored: ${problem}; the link's other settings apply.`, true);
  }
  exposeTestHooks();
  spawnWorker();
  let runs: RunRecord[] = [];
  let activeId: string | null | undefined = null;
  try {
    [runs, activeId] = await Promise.all([db.loadRuns(), db.loadActiveRunId()]);
  } catch (error) {
    reportError(
      `Saved runs could not be read (${(error as Error).message}); starting fresh.`,
      true,
    );
  }
  useLabStore.setState({ runs });
  const saved = runs.find((run) => run.id === activeId);
  const urlGiven = [...params.keys()].some((key) => !PAGE_KEYS.includes(key));
  if (saved && (!urlGiven || sameConfig(saved.config, config))) {
    const [snapshot, groups] = await Promise.all([
      db.loadSnapshot(saved.id),
      db.loadGroups(saved.id),
    ]);
    await startRun(saved, snapshot, { groups });
    return;
  }
  await newRun(config);
}

/**
 * Same run settings, the memory budget aside: a budget the page halved after an
 * out-of-memory is the saved run's own, and must not make its link start a new run.
 */
function sameConfig(a: RunConfig, b: RunConfig): boolean {
  const settings = (config: RunConfig) => {
    const params = encodeRunConfig(config);
    params.delete('mem');
    return params.toString();
  };
  return settings(a) === settings(b);
}

/** A fresh run from the shipped warm start with `config` (Reset). */
export async function newRun(config: RunConfig = useLabStore.getState().config) {
  consecutiveFailures = 0;
  const run = newRunRecord(config);
  useLabStore.setState((state) => ({ runs: [...state.runs, run] }));
  await db.saveRun(run);
  await startRun(run);
}

export async function switchToRun(runId: string) {
  const run = useLabStore.getState().runs.find((r) => r.id === runId);
  if (!run) return;
  const [snapshot, groups] = await Promise.all([db.loadSnapshot(run.id), db.loadGroups(run.id)]);
  consecutiveFailures = 0;
  await startRun(run, snapshot, { groups });
}

/** Trains both roles from scratch in the page, then starts a run on the new models. */
export async function warmStartFromScratch(minutes: number) {
  const config = useLabStore.getState().config;
  const run = newRunRecord(
    config,
    `warm start from scratch · ${minutes} min · seed ${config.grpo.seed}`,
  );
  useLabStore.setState((state) => ({
    runs: [...state.runs, run],
    activeRunId: run.id,
    groups: [],
    selection: null,
    step: 0,
  }));
  await db.saveRun(run);
  await db.saveActiveRunId(run.id);
  requestedWork = null;
  send({ type: 'warmstart', runId: run.id, config, minutes, seed: config.grpo.seed });
}

export function train() {
  requestedWork = 'train';
  send({ type: 'train' });
}

export function pause() {
  requestedWork = null;
  send({ type: 'pause' });
}

export function step() {
  requestedWork = 'step';
  send({ type: 'step' });
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
export function solve(taskFile: string): Promise<{ group: SampleGroup | null; error?: string }> {
  const requestId = nextRequestId++;
  return new Promise((resolve) => {
    solveRequests.set(requestId, resolve);
    send({ type: 'solve', requestId, taskFile });
  });
}

/** The active run's latest snapshot, fresh from the engine. */
export function requestSnapshot(runId: string): Promise<RunSnapshot> {
  return new Promise((resolve) => {
    snapshotWaiters.set(runId, resolve);
    send({ type: 'snapshot' });
  });
}

export async function addImportedRun(
  run: RunRecord,
  snapshot: RunSnapshot | undefined,
  groups: db.StoredGroups,
) {
  useLabStore.setState((state) => ({ runs: [...state.runs.filter((r) => r.id !== run.id), run] }));
  await db.saveRun(run);
  if (snapshot) await db.saveSnapshot(run.id, snapshot);
  await db.saveGroups(run.id, groups);
  consecutiveFailures = 0;
  await startRun(run, snapshot, { groups });
}

export function dismissError(id: number) {
  useLabStore.setState((state) => ({ errors: state.errors.filter((e) => e.id !== id) }));
}
