// Task suite files for the CLIs: public/tasks/suite-<name>.json, or any file in that format.
// A malformed one is refused with one line naming the file (and the line, for bad JSON).
import type { SuiteFile } from '../tasks';
import { loadSuite } from '../tasks';
import { parseJsonText, readTextFile } from './jsonFiles';

/** The suite in `path`, validated. */
export async function readSuiteFile(path: string): Promise<SuiteFile> {
  const data = parseJsonText<unknown>(await readTextFile(path), path);
  try {
    return loadSuite(data);
  } catch (error) {
    throw new Error(`${path}: ${(error as Error).message}`);
  }
}
