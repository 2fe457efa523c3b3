import type { CaseTest } from '../../engine/api';

/** The tests editor holds a JSON array of `{ "args": [...], "expected": ... }`. */
export function parseTests(text: string): CaseTest[] {
  let parsed: unknown;
  try {
    parsed = JSON.parse(text);
  } catch (error) {
    throw new Error(`Tests are not valid JSON: ${(error as Error).message}`);
  }
  if (!Array.isArray(parsed)) throw new Error('Tests must be a JSON array of { args, expected }.');
  return parsed.map((test: unknown, index) => {
    if (typeof test !== 'object' || test === null || Array.isArray(test)) {
      throw new Error(`Test ${index + 1} must be an object with "args" and "expected".`);
    }
    const { args, expected } = test as { args?: unknown; expected?: unknown };
    if (!Array.isArray(args)) throw new Error(`Test ${index + 1}: "args" must be an array.`);
    if (expected === undefined) throw new Error(`Test ${index + 1}: "expected" is missing.`);
    return { args, expected };
  });
}

/** The first declared function's name: the entry point when the user has not named one. */
export function detectEntryPoint(code: string): string | null {
  const match = /function\s+([A-Za-z_$][\w$]*)\s*\(/.exec(code);
  return match?.[1] ?? null;
}
