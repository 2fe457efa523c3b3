// Runs survive a reload: runs, their metric points, recent sample groups and the latest
// snapshot of each run live in IndexedDB (engine/labDb: one database, opened the same way
// by the page and the engine Worker, which writes the snapshots). A step writes only its own
// records (its point, its groups), so its cost does not grow with the steps a run has.
import type { DBSchema } from 'idb';
import {
  loadSnapshot,
  openLabDb,
  type RunSnapshot,
  type SampleGroup,
  saveSnapshot,
  stepKey,
} from '../../engine/api';
import type { MetricPoint, RunRecord } from '../state/labStore';

export type StoredGroups = { step: number; groups: SampleGroup[] }[];

interface LabDb extends DBSchema {
  /** A run without its points (they are in `points`). */
  runs: { key: string; value: RunRecord };
  snapshots: { key: string; value: RunSnapshot };
  /** One step's groups per key, `runId/step`, so each step writes only its own. */
  groups: { key: string; value: StoredGroups[number] };
  /** One step's metrics per key, `runId/step`. */
  points: { key: string; value: MetricPoint };
  meta: { key: string; value: string | null };
}

const open = () => openLabDb<LabDb>();

const runRange = (runId: string, belowStep?: number) =>
  IDBKeyRange.bound(
    `${runId}/`,
    belowStep === undefined ? `${runId}/\uffff` : stepKey(runId, belowStep),
    false,
    belowStep !== undefined,
  );

/** The run's own fields (name, config, visibility, warm start); its points go one by one. */
export async function saveRun(run: RunRecord): Promise<void> {
  await (await open()).put('runs', { ...run, points: [] }, run.id);
}

/** A run with every point (an import, a recovery): the record and all its points. */
export async function saveRunWithPoints(run: RunRecord): Promise<void> {
  const tx = (await open()).transaction(['runs', 'points'], 'readwrite');
  const points = tx.objectStore('points');
  await Promise.all([
    tx.objectStore('runs').put({ ...run, points: [] }, run.id),
    points.delete(runRange(run.id)),
    ...run.points.map((point) => points.put(point, stepKey(run.id, point.step))),
    tx.done,
  ]);
}

/** One step's metrics (a step's, or an evaluation merged into it). */
export async function savePoint(runId: string, point: MetricPoint): Promise<void> {
  await (await open()).put('points', point, stepKey(runId, point.step));
}

export async function loadRuns(): Promise<RunRecord[]> {
  const db = await open();
  const runs = await db.getAll('runs');
  const withPoints = await Promise.all(
    runs.map(async (run) => ({ ...run, points: await db.getAll('points', runRange(run.id)) })),
  );
  return withPoints.sort((a, b) => a.createdAt - b.createdAt);
}

// The page saves a snapshot it holds (an import); the Worker saves its own steps'.
export { loadSnapshot, saveSnapshot };

/** Saves one step's groups and forgets those older than `keep` steps. */
export async function saveStepGroups(
  runId: string,
  entry: StoredGroups[number],
  keep: number,
): Promise<void> {
  const tx = (await open()).transaction('groups', 'readwrite');
  const writes: Promise<unknown>[] = [tx.store.put(entry, stepKey(runId, entry.step)), tx.done];
  if (entry.step - keep + 1 > 0) {
    writes.push(tx.store.delete(runRange(runId, entry.step - keep + 1)));
  }
  await Promise.all(writes);
}

export async function saveGroups(runId: string, groups: StoredGroups): Promise<void> {
  for (const entry of groups) await saveStepGroups(runId, entry, groups.length);
}

export async function loadGroups(runId: string): Promise<StoredGroups> {
  return (await open()).getAll('groups', runRange(runId));
}

export async function saveActiveRunId(runId: string | null): Promise<void> {
  await (await open()).put('meta', runId, 'activeRunId');
}

export async function loadActiveRunId(): Promise<string | null | undefined> {
  return (await open()).get('meta', 'activeRunId');
}

export async function deleteRun(runId: string): Promise<void> {
  const db = await open();
  await Promise.all([
    db.delete('runs', runId),
    db.delete('snapshots', runId),
    db.delete('groups', runRange(runId)),
    db.delete('points', runRange(runId)),
  ]);
}
