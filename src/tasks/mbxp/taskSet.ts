// The shipped MBXP task set: public/tasks/mbxp/{train,validation}.json, in the fixed suites'
// file form (a header, then one task per line; loadSuite validates every task). The split is
// fixed by each task id's hash, so it does not depend on which other tasks were kept, and a
// task never moves between splits when the set is regenerated
// (`npm run --silent tasks -- mbxp --in …/mbjsp_release_v1.2.jsonl --out public/tasks/mbxp`).
import { hashString } from '../random';
import { loadSuite, type SuiteFile, serializeSuite } from '../suites';
import type { Task } from '../types';

export type TaskSetSplit = 'train' | 'validation';
export const TASK_SET_SPLITS: readonly TaskSetSplit[] = ['train', 'validation'];

/** A task set's two splits, as the session takes them. */
export interface TaskSetSplits {
  train: Task[];
  validation: Task[];
}

/** Where the files are, relative to public/ (the page fetches them, the CLI reads them). */
export const MBXP_DIR = 'tasks/mbxp/';
export const mbxpFile = (split: TaskSetSplit): string => `${MBXP_DIR}${split}.json`;

export const MBXP_COMMAND =
  'npm run --silent tasks -- mbxp --in ../shared/data/mbxp-js/mbjsp_release_v1.2.jsonl --out public/tasks/mbxp';
export const MBXP_SOURCE =
  'MBXP JavaScript (mbjsp_release_v1.2.jsonl) from amazon-science/mxeval, Athiwaratkun et al. 2022, adapted from Google’s MBPP';
export const MBXP_LICENSE = 'Apache-2.0 (see LICENSE and NOTICE beside this file)';

/** One task in this many goes to validation. */
const VALIDATION_ONE_IN = 5;

/** FNV-1a of the id: the split of a task depends on its id alone. */
export function mbxpSplitOf(taskId: string): TaskSetSplit {
  return hashString(taskId) % VALIDATION_ONE_IN === 0 ? 'validation' : 'train';
}

/** A split's file: what the suites' files hold, plus where the tasks come from. */
export interface TaskSetFile extends SuiteFile {
  source: string;
  license: string;
}

export function serializeTaskSet(split: TaskSetSplit, tasks: readonly Task[]): string {
  const file: TaskSetFile = {
    suite: `mbxp-${split}`,
    split,
    // No seed: the split is the id's hash (mbxpSplitOf).
    seed: 0,
    command: MBXP_COMMAND,
    source: MBXP_SOURCE,
    license: MBXP_LICENSE,
    tasks: [...tasks],
  };
  return serializeSuite(file);
}

/** A split's tasks from its file's text; throws naming the file and every bad task. */
export function loadTaskSetSplit(text: string, split: TaskSetSplit): Task[] {
  const where = mbxpFile(split);
  let data: unknown;
  try {
    data = JSON.parse(text);
  } catch (error) {
    throw new Error(`${where}: not JSON (${(error as Error).message})`);
  }
  try {
    return loadSuite(data).tasks;
  } catch (error) {
    throw new Error(`${where}: ${(error as Error).message}`);
  }
}
