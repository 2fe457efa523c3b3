// The run's life as the page drives it: boot (the URL's settings, the saved run resumed),
// new run, switch, import, warm start, train / step / pause, and recovery after a fatal
// engine failure (the Worker replaced, the run restored from its last saved snapshot and
// what the user had asked for resumed). Events go through applyEvent.ts into the store.
import {
  classifyFailure,
  DEFAULT_RUN_CONFIG,
  describeRecovery,
  downloadToConfirm,
  type EngineEvent,
  type EngineFailure,
  type EngineStatus,
  type LessonRun,
  planRecovery,
  type RunConfig,
  type RunSnapshot,
} from '../../engine/api';
import { signalSelection } from '../inspector/signal';
import * as db from '../persist/runsDb';
import { activeRun, type RunRecord, useLabStore } from '../state/labStore';
import { applyEngineEvent } from './applyEvent';
import { reportError } from './notices';
import { persist, whenPersisted } from './persistQueue';
import {
  answerRequest,
  exposeTestHooks,
  send,
  settleRequests,
  spawnEngine,
  stopEngine,
} from './transport';
import { readConfigFromUrl, sameConfig, writeConfigToUrl } from './urlSync';

const PERSISTED_GROUP_STEPS = 20;

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

function spawnWorker() {
  engineBusy = false;
  spawnEngine({
    onEvent,
    onCrash: (message) => {
      const status = useLabStore.getState().status;
      void recoverFromFailure(classifyFailure(message), activityOfStatus(status));
    },
  });
}

/** Applies an event's store patch and shows its messages. */
function commit(event: EngineEvent) {
  const { patch, notices } = applyEngineEvent(useLabStore.getState(), event);
  useLabStore.setState(patch);
  for (const notice of notices) reportError(notice.message, notice.recoverable);
}

function onEvent(event: EngineEvent) {
  switch (event.type) {
    case 'status': {
      const busy = event.status === 'training' || event.status === 'stepping';
      if (engineBusy && !busy) requestedWork = null;
      engineBusy = busy;
      if (event.memoryBudgetMiB !== undefined) engineBudgetMiB = event.memoryBudgetMiB;
      // Shown once the writes before it have landed: "idle" means the step is saved.
      void whenPersisted().then(() => commit(event));
      return;
    }
    case 'fatal':
      void recoverFromFailure(event, event.activity);
      return;
    case 'step': {
      const { report, runId } = event;
      consecutiveFailures = 0;
      if (requestedWork === 'step') requestedWork = null;
      commit(event);
      savePointOf(runId, report.step);
      if (runId !== useLabStore.getState().activeRunId) return;
      persist(() =>
        db.saveStepGroups(
          runId,
          { step: report.step, groups: report.groups },
          PERSISTED_GROUP_STEPS,
        ),
      );
      return;
    }
    case 'eval':
      commit(event);
      savePointOf(event.runId, event.report.step);
      return;
    case 'warmstartDone': {
      commit(event);
      const run = useLabStore.getState().runs.find((r) => r.id === event.runId);
      if (run) persist(() => db.saveRun(run));
      return;
    }
    case 'snapshot':
      answerRequest(event);
      return;
    case 'judged':
    case 'solved':
    case 'gguf':
      answerRequest(event);
      return;
    case 'error':
      commit(event);
      settleRequests(event.message);
      return;
    default:
      commit(event);
  }
}

/** Queues the write of one step's metric point, as the store now holds it. */
function savePointOf(runId: string, step: number) {
  const run = useLabStore.getState().runs.find((r) => r.id === runId);
  const point = run?.points.find((p) => p.step === step);
  if (point) persist(() => db.savePoint(runId, point));
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
  stopEngine();
  settleRequests(`The engine stopped: ${failure.message}`);
  consecutiveFailures += 1;
  const failures = consecutiveFailures;
  useLabStore.setState({ status: 'loading' });
  // The last step's snapshot may still be on its way into IndexedDB.
  await whenPersisted();
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

/** `name`, or `name (2)`, `name (3)`, … : the first that no run in `runs` has. */
export function uniqueRunName(name: string, runs: readonly RunRecord[]): string {
  const taken = new Set(runs.map((run) => run.name));
  if (!taken.has(name)) return name;
  for (let n = 2; ; n++) if (!taken.has(`${name} (${n})`)) return `${name} (${n})`;
}

/** One past the highest "run N" kept, so numbers never repeat after a delete. */
function nextRunNumber(runs: readonly RunRecord[]): number {
  const numbers = runs.map((run) => Number(/^run (\d+)\b/.exec(run.name)?.[1] ?? 0));
  return Math.max(0, ...numbers) + 1;
}

export function newRunId(): string {
  return `run-${Date.now().toString(36)}-${Math.floor(performance.now()).toString(36)}`;
}

function newRunRecord(config: RunConfig, name?: string): RunRecord {
  const runs = useLabStore.getState().runs;
  const base =
    name ?? `run ${nextRunNumber(runs)} · ${config.grpo.mode} · seed ${config.grpo.seed}`;
  return {
    id: newRunId(),
    name: uniqueRunName(base, runs),
    config,
    createdAt: Date.now(),
    points: [],
    visible: true,
  };
}

/**
 * A run nothing has happened in: no step, no evaluation, and the shipped warm start's models
 * (a warm start from scratch is worth keeping at step 0). Reset or a link replaces it.
 */
export function isEmptyRun(run: RunRecord): boolean {
  return run.points.length === 0 && !run.warmStart && !run.name.startsWith(WARM_START_NAME);
}

const WARM_START_NAME = 'warm start from scratch';

/** Removes the active run when it is empty, so a new one takes its place instead of piling up. */
async function dropEmptyActiveRun() {
  const state = useLabStore.getState();
  const active = activeRun(state);
  if (!active || !isEmptyRun(active)) return;
  useLabStore.setState({ runs: state.runs.filter((run) => run.id !== active.id) });
  await db.deleteRun(active.id);
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
          ? signalSelection(groups.at(-1)!.step, groups.at(-1)!.groups)
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

/** Opens the lab: the URL's config, and the saved active run resumed when it matches it. */
export async function bootLab() {
  const { config, problems, given, lesson } = readConfigFromUrl();
  useLabStore.setState({
    config,
    configProblems: problems,
    lesson: lesson ? { id: lesson.lesson.id, base: lesson.base } : null,
  });
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
  if (given && !(await linkDownloadAllowed(config))) {
    // Declined: the saved run as it was, else a run of the defaults; the URL follows it.
    if (saved) {
      const [snapshot, groups] = await Promise.all([
        db.loadSnapshot(saved.id),
        db.loadGroups(saved.id),
      ]);
      await startRun(saved, snapshot, { groups });
    } else await newRun(DEFAULT_RUN_CONFIG);
    return;
  }
  // A link resumes the newest saved run with its settings, so reopening it adds no run.
  const resumed =
    saved && (!given || sameConfig(saved.config, config))
      ? saved
      : given
        ? runs.findLast((run) => sameConfig(run.config, config))
        : undefined;
  if (resumed) {
    const [snapshot, groups] = await Promise.all([
      db.loadSnapshot(resumed.id),
      db.loadGroups(resumed.id),
    ]);
    await startRun(resumed, snapshot, { groups });
    return;
  }
  if (saved) useLabStore.setState({ activeRunId: saved.id });
  await newRun(config, lesson ? lessonRunName(lesson.lesson.runs[0]!, config) : undefined);
}

/** A lesson's run as the runs table and the charts' legend name it. */
export function lessonRunName(run: LessonRun, config: RunConfig): string {
  return `${run.name} · seed ${config.grpo.seed}`;
}

/** Answers the page's question about a link's download (DownloadConsent's buttons). */
let answerLinkDownload: ((allowed: boolean) => void) | null = null;

export function decideLinkDownload(allowed: boolean) {
  useLabStore.setState({ pendingDownload: null });
  answerLinkDownload?.(allowed);
  answerLinkDownload = null;
}

/**
 * Whether a link's base may download: at once when nothing needs asking (no base, or its files
 * are in Cache Storage), else once the user clicks (nothing reaches the hub before).
 */
async function linkDownloadAllowed(config: RunConfig): Promise<boolean> {
  const pending = await downloadToConfirm(config);
  if (!pending) return true;
  useLabStore.setState({ pendingDownload: pending });
  return new Promise((resolve) => {
    answerLinkDownload = resolve;
  });
}

/** A fresh run from the shipped warm start with `config` (Reset; a lesson's run has its name). */
export async function newRun(config: RunConfig = useLabStore.getState().config, name?: string) {
  consecutiveFailures = 0;
  await dropEmptyActiveRun();
  const run = newRunRecord(config, name);
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
    `${WARM_START_NAME} · ${minutes} min · seed ${config.grpo.seed}`,
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

/**
 * Adds an imported run and makes it the active one. `replace` false keeps a run of the same
 * id that is already here: the import gets a new id and a name of its own.
 */
export async function addImportedRun(
  imported: RunRecord,
  snapshot: RunSnapshot | undefined,
  groups: db.StoredGroups,
  replace = true,
) {
  const others = useLabStore.getState().runs.filter((r) => !(replace && r.id === imported.id));
  const run = replace
    ? { ...imported, name: uniqueRunName(imported.name, others) }
    : { ...imported, id: newRunId(), name: uniqueRunName(imported.name, others) };
  // Shown as the active run at once: the saves below take a moment, and the run list must
  // not show the import while another run is marked active.
  useLabStore.setState({ runs: [...others, run], activeRunId: run.id });
  await db.saveRunWithPoints(run);
  if (snapshot) await db.saveSnapshot(run.id, snapshot);
  await db.saveGroups(run.id, groups);
  consecutiveFailures = 0;
  await startRun(run, snapshot, { groups });
}
