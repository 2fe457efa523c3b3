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
 * `text` as JSON; on a syntax error throws `FILE, line L column C: not valid JSON (…)`.
 * `firstLine` is the line `text` starts on in the file (for one line of a .jsonl).
 */
export function parseJsonText<T>(text: string, path: string, firstLine = 1): T {
  try {
    return JSON.parse(text) as T;
  } catch (error) {
    const message = (error as Error).message;
    const before = text.slice(0, errorOffset(text, message)).split('\n');
    const line = firstLine + before.length - 1;
    const column = (before.at(-1)?.length ?? 0) + 1;
    const why = message
      .replace(/( in JSON)? at position \d+( \(line \d+ column \d+\))?$/, '')
      .replace(/, (\.\.\.)?".*" is not valid JSON$/s, '');
    throw new Error(`${path}, line ${line} column ${column}: not valid JSON (${why})`);
  }
}

/**
 * Where JSON.parse stopped. V8 gives a position for most errors but words an unexpected
 * token with an excerpt instead; then the offset is found as the shortest prefix that fails
 * before its own end (a prefix cut before the bad token only runs out of input).
 */
function errorOffset(text: string, message: string): number {
  const at = /at position (\d+)/.exec(message);
  if (at) return Number(at[1]);
  if (/Unexpected end/.test(message)) return text.length;
  let good = 0;
  let bad = text.length;
  while (bad - good > 1) {
    const mid = (good + bad) >> 1;
    if (failsBeforeEnd(text.slice(0, mid))) bad = mid;
    else good = mid;
  }
  return bad - 1;
}

function failsBeforeEnd(prefix: string): boolean {
  try {
    JSON.parse(prefix);
    return false;
  } catch (error) {
    const message = (error as Error).message;
    if (/Unexpected end/.test(message)) return false;
    const at = /at position (\d+)/.exec(message);
    return !at || Number(at[1]) < prefix.length;
  }
}
