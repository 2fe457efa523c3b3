// Runs survive a reload: metrics, recent sample groups and the latest snapshot of each run
// live in IndexedDB. One small promise-based wrapper; no library.
import type { RunSnapshot, SampleGroup } from '../../engine/api';
import type { RunRecord } from '../state/labStore';

const DB_NAME = 'core-code-lab';
const DB_VERSION = 1;
const STORES = ['runs', 'snapshots', 'groups', 'meta'] as const;
type StoreName = (typeof STORES)[number];

export type StoredGroups = { step: number; groups: SampleGroup[] }[];

let opened: Promise<IDBDatabase> | null = null;

function open(): Promise<IDBDatabase> {
  opened ??= new Promise((resolve, reject) => {
    const request = indexedDB.open(DB_NAME, DB_VERSION);
    request.onupgradeneeded = () => {
      for (const name of STORES) {
        if (!request.result.objectStoreNames.contains(name)) request.result.createObjectStore(name);
      }
    };
    request.onsuccess = () => resolve(request.result);
    request.onerror = () => reject(request.error ?? new Error('IndexedDB failed to open'));
  });
  return opened;
}

function done<T>(request: IDBRequest<T>): Promise<T> {
  return new Promise((resolve, reject) => {
    request.onsuccess = () => resolve(request.result);
    request.onerror = () => reject(request.error ?? new Error('IndexedDB request failed'));
  });
}

async function put(store: StoreName, key: string, value: unknown): Promise<void> {
  const db = await open();
  await done(db.transaction(store, 'readwrite').objectStore(store).put(value, key));
}

async function get<T>(store: StoreName, key: string): Promise<T | undefined> {
  const db = await open();
  return done(db.transaction(store, 'readonly').objectStore(store).get(key)) as Promise<
    T | undefined
  >;
}

async function remove(store: StoreName, key: string | IDBKeyRange): Promise<void> {
  const db = await open();
  await done(db.transaction(store, 'readwrite').objectStore(store).delete(key));
}

export async function saveRun(run: RunRecord): Promise<void> {
  await put('runs', run.id, run);
}

export async function loadRuns(): Promise<RunRecord[]> {
  const db = await open();
  const runs = (await done(
    db.transaction('runs', 'readonly').objectStore('runs').getAll(),
  )) as RunRecord[];
  return runs.sort((a, b) => a.createdAt - b.createdAt);
}

export const saveSnapshot = (runId: string, snapshot: RunSnapshot) =>
  put('snapshots', runId, snapshot);
export const loadSnapshot = (runId: string) => get<RunSnapshot>('snapshots', runId);
// Groups are stored one step per key (`runId/step`), so each step writes only its own.
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
  const db = await open();
  const store = db.transaction('groups', 'readwrite').objectStore('groups');
  store.put(entry, stepKey(runId, entry.step));
  if (entry.step - keep + 1 > 0) await done(store.delete(runRange(runId, entry.step - keep + 1)));
}

export async function saveGroups(runId: string, groups: StoredGroups): Promise<void> {
  for (const entry of groups) await saveStepGroups(runId, entry, groups.length);
}

export async function loadGroups(runId: string): Promise<StoredGroups> {
  const db = await open();
  return (await done(
    db.transaction('groups', 'readonly').objectStore('groups').getAll(runRange(runId)),
  )) as StoredGroups;
}
export const saveActiveRunId = (runId: string | null) => put('meta', 'activeRunId', runId);
export const loadActiveRunId = () => get<string | null>('meta', 'activeRunId');

export async function deleteRun(runId: string): Promise<void> {
  const db = await open();
  await Promise.all([
    remove('runs', runId),
    remove('snapshots', runId),
    done(db.transaction('groups', 'readwrite').objectStore('groups').delete(runRange(runId))),
  ]);
}
