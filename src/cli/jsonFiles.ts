// JSON files the CLIs read (a run's config.json, a snapshot's run-config.json, a suite): a
// missing or malformed one is refused with one line naming the file and, for bad JSON, the line.
import { readFile } from 'node:fs/promises';

/** The file's text; a missing or unreadable file throws naming it. */
export async function readTextFile(path: string): Promise<string> {
  try {
    return await readFile(path, 'utf8');
  } catch (error) {
    const code = (error as NodeJS.ErrnoException).code;
    const why =
      code === 'ENOENT' ? 'no such file' : code === 'EISDIR' ? 'a folder, not a file' : code;
    throw new Error(`${path}: ${why ?? (error as Error).message}`);
  }
}

/** The file's JSON value (unchecked: the caller validates its shape). */
export async function readJsonFile<T>(path: string): Promise<T> {
  return parseJsonText<T>(await readTextFile(path), path);
}

/**
 * `text` as JSON; on a syntax error throws `FILE, line L: not valid JSON (…)`. `firstLine` is
 * the line `text` starts on in the file (for one line of a .jsonl).
 */
export function parseJsonText<T>(text: string, path: string, firstLine = 1): T {
  try {
    return JSON.parse(text) as T;
  } catch (error) {
    const message = (error as Error).message;
    const at = /at position (\d+)/.exec(message);
    const offset = at ? Number(at[1]) : text.length;
    const before = text.slice(0, offset).split('\n');
    const line = firstLine + before.length - 1;
    const column = (before.at(-1)?.length ?? 0) + 1;
    const why = message.replace(/ in JSON at position \d+( \(line \d+ column \d+\))?/, '');
    throw new Error(`${path}, line ${line} column ${column}: not valid JSON (${why})`);
  }
}
