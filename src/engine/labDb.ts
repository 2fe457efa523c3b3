// The lab's IndexedDB database, opened the same way by the page and by the engine Worker.
// The page keeps runs, metric points, sample groups and the active run's id; the Worker
// writes each step's snapshot itself, where it is made, so the page's main thread never
// receives, clones or stores a model's weights while training.
import { type DBSchema, type IDBPDatabase, type IDBPTransaction, openDB } from 'idb';
import type { RunSnapshot } from './types';

export const LAB_DB_NAME = 'core-code-lab';
/** 2: metric points in a store of their own, one record per step (were inside each run). */
export const LAB_DB_VERSION = 2;
export const LAB_DB_STORES = ['runs', 'snapshots', 'groups', 'meta', 'points'] as const;

/** The part of the schema the engine uses; the page's schema (ui/persist/runsDb.ts) adds the rest. */
export interface SnapshotSchema extends DBSchema {
  snapshots: { key: string; value: RunSnapshot };
}

const opened = new Map<string, Promise<IDBPDatabase>>();

/** One connection per context; every store exists after it opens. */
export function openLabDb<Schema extends DBSchema>(): Promise<IDBPDatabase<Schema>> {
  let db = opened.get(LAB_DB_NAME);
  if (!db) {
    db = openDB(LAB_DB_NAME, LAB_DB_VERSION, {
      async upgrade(database, oldVersion, _newVersion, transaction) {
        for (const name of LAB_DB_STORES) {
          if (!database.objectStoreNames.contains(name)) database.createObjectStore(name);
        }
        if (oldVersion === 1) await movePointsOutOfRuns(transaction);
      },
      // Another tab (or the Worker) upgrading: close so it is not blocked; reopen next time.
      blocking() {
        void opened.get(LAB_DB_NAME)?.then((connection) => connection.close());
        opened.delete(LAB_DB_NAME);
      },
    });
    opened.set(LAB_DB_NAME, db);
  }
  return db as unknown as Promise<IDBPDatabase<Schema>>;
}

/** `runId/step`, zero-padded so keys sort by step: the key of a step's point and groups. */
export const stepKey = (runId: string, step: number) =>
  `${runId}/${String(step).padStart(10, '0')}`;

/** Version 1 kept each run's points inside its record: one record per point now. */
async function movePointsOutOfRuns(
  transaction: IDBPTransaction<unknown, string[], 'versionchange'>,
) {
  const points = transaction.objectStore('points');
  let cursor = await transaction.objectStore('runs').openCursor();
  while (cursor) {
    const runId = String(cursor.key);
    for (const point of (cursor.value as { points?: { step: number }[] }).points ?? [])
      await points.put(point, stepKey(runId, point.step));
    await cursor.update({ ...cursor.value, points: [] });
    cursor = await cursor.continue();
  }
}

export async function saveSnapshot(runId: string, snapshot: RunSnapshot): Promise<void> {
  await (await openLabDb<SnapshotSchema>()).put('snapshots', snapshot, runId);
}

export async function loadSnapshot(runId: string): Promise<RunSnapshot | undefined> {
  return (await openLabDb<SnapshotSchema>()).get('snapshots', runId);
}
