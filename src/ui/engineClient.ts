// The only bridge between the page and the engine Worker: sends commands, turns events into
// store updates, and keeps IndexedDB in step so a reload (or a crashed Worker) resumes.
import type { EngineCommand, EngineEvent } from '../engine/protocol';
import { decodeRunConfig, encodeRunConfig } from '../engine/runConfig';
import type { RunConfig, RunSnapshot, SampleGroup } from '../engine/types';
import type { RunResult } from '../sandbox/types';
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
  worker = new Worker(new URL('../engine/worker.ts', import.meta.url), { type: 'module' });
  worker.onmessage = (event: MessageEvent<EngineEvent>) => onEvent(event.data);
  worker.onerror = (event) => {
    event.preventDefault();
    reportError(
      `The engine stopped (${event.message || 'worker crashed'}); resuming from the last saved step.`,
      true,
    );
    worker?.terminate();
    void restartFromSaved();
  };
}

async function restartFromSaved() {
  spawnWorker();
  const run = activeRun(useLabStore.getState());
  if (run) await startRun(run, await db.loadSnapshot(run.id));
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
    case 'status':
      void persisting.then(() => {
        useLabStore.setState({ status: event.status, step: event.step });
        if (event.status !== 'warmstart') useLabStore.setState({ progress: null });
      });
      return;
    case 'step': {
      const { report, runId } = event;
      const run = updateRun(runId, (r) => ({
        ...r,
        points: [
          ...r.points.filter((p) => p.step !== report.step),
          { step: report.step, values: report.metrics },
        ],
      }));
      if (runId !== useLabStore.getState().activeRunId) return;
      const kept = [
        ...useLabStore.getState().groups,
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
      for (const resolve of solveRequests.values()) resolve({ group: null, error: event.message });
      solveRequests.clear();
      for (const { reject } of judgeRequests.values()) reject(new Error(event.message));
      judgeRequests.clear();
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

async function startRun(run: RunRecord, snapshot?: RunSnapshot, groups?: db.StoredGroups) {
  useLabStore.setState({
    activeRunId: run.id,
    config: run.config,
    groups: groups ?? [],
    selection: groups?.length
      ? { step: groups.at(-1)!.step, groupIndex: 0, planIndex: 0, programIndex: 0 }
      : null,
    step: snapshot?.step ?? 0,
  });
  writeConfigToUrl(run.config);
  await db.saveActiveRunId(run.id);
  send({ type: 'start', runId: run.id, config: run.config, ...(snapshot ? { snapshot } : {}) });
}

export function writeConfigToUrl(config: RunConfig) {
  const query = encodeRunConfig(config).toString();
  const url = `${location.pathname}${query ? `?${query}` : ''}${location.hash}`;
  history.replaceState(null, '', url);
}

/** Opens the lab: the URL's config, and the saved active run resumed when it matches it. */
export async function bootLab() {
  const { config, problems } = decodeRunConfig(new URLSearchParams(location.search));
  useLabStore.setState({ config, configProblems: problems });
  for (const problem of problems) reportError(`Link setting ignored: ${problem}`, true);
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
  const urlGiven = location.search.length > 1;
  if (saved && (!urlGiven || sameConfig(saved.config, config))) {
    const [snapshot, groups] = await Promise.all([
      db.loadSnapshot(saved.id),
      db.loadGroups(saved.id),
    ]);
    await startRun(saved, snapshot, groups);
    return;
  }
  await newRun(config);
}

function sameConfig(a: RunConfig, b: RunConfig): boolean {
  return encodeRunConfig(a).toString() === encodeRunConfig(b).toString();
}

/** A fresh run from the shipped warm start with `config` (Reset). */
export async function newRun(config: RunConfig = useLabStore.getState().config) {
  const run = newRunRecord(config);
  useLabStore.setState((state) => ({ runs: [...state.runs, run] }));
  await db.saveRun(run);
  await startRun(run);
}

export async function switchToRun(runId: string) {
  const run = useLabStore.getState().runs.find((r) => r.id === runId);
  if (!run) return;
  const [snapshot, groups] = await Promise.all([db.loadSnapshot(run.id), db.loadGroups(run.id)]);
  await startRun(run, snapshot, groups);
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
  send({ type: 'warmstart', runId: run.id, config, minutes, seed: config.grpo.seed });
}

export const train = () => send({ type: 'train' });
export const pause = () => send({ type: 'pause' });
export const step = () => send({ type: 'step' });

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
  await startRun(run, snapshot, groups);
}

export function dismissError(id: number) {
  useLabStore.setState((state) => ({ errors: state.errors.filter((e) => e.id !== id) }));
}
