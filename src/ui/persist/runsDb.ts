// Runs survive a reload: metrics, recent sample groups and the latest snapshot of each run
// live in IndexedDB, through idb's promise wrapper.
import { type DBSchema, type IDBPDatabase, openDB } from 'idb';
import type { RunSnapshot, SampleGroup } from '../../engine/api';
import type { RunRecord } from '../state/labStore';

export type StoredGroups = { step: number; groups: SampleGroup[] }[];

interface LabDb extends DBSchema {
  runs: { key: string; value: RunRecord };
  snapshots: { key: string; value: RunSnapshot };
  /** One step's groups per key, `runId/step`, so each step writes only its own. */
  groups: { key: string; value: StoredGroups[number] };
  meta: { key: string; value: string | null };
}

let opened: Promise<IDBPDatabase<LabDb>> | null = null;

function open(): Promise<IDBPDatabase<LabDb>> {
  opened ??= openDB<LabDb>('core-code-lab', 1, {
    upgrade(db) {
      for (const name of ['runs', 'snapshots', 'groups', 'meta'] as const) {
        if (!db.objectStoreNames.contains(name)) db.createObjectStore(name);
      }
    },
  });
  return opened;
}

export async function saveRun(run: RunRecord): Promise<void> {
  await (await open()).put('runs', run, run.id);
}

export async function loadRuns(): Promise<RunRecord[]> {
  const runs = await (await open()).getAll('runs');
  return runs.sort((a, b) => a.createdAt - b.createdAt);
}

export async function saveSnapshot(runId: string, snapshot: RunSnapshot): Promise<void> {
  await (await open()).put('snapshots', snapshot, runId);
}

export async function loadSnapshot(runId: string): Promise<RunSnapshot | undefined> {
  return (await open()).get('snapshots', runId);
}

const stepKey = (runId: string, step: number) => `${runId}/${String(step).padStart(10, '0')}`;
const runRange = (runId: string, belowStep?: number) =>
  IDBKeyRange.bound(
    `${runId}/`,
    belowStep === undefined ? `${runId}/\uffff` : stepKey(runId, belowStep),
    false,
    belowStep !== undefined,
  );

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
  ]);
}
