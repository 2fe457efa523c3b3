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

/** Names of the functions the code declares (`function f(`, `const f = (…) =>`, `= function`), in order. */
export function declaredFunctions(code: string): string[] {
  const names: string[] = [];
  const pattern =
    /function\s+([A-Za-z_$][\w$]*)\s*\(|(?:const|let|var)\s+([A-Za-z_$][\w$]*)\s*=\s*(?:async\s*)?(?:function\b|\([^)]*\)\s*=>|[A-Za-z_$][\w$]*\s*=>)/g;
  for (const match of code.matchAll(pattern)) {
    const name = match[1] ?? match[2];
    if (name && !names.includes(name)) names.push(name);
  }
  return names;
}

/**
 * The function the tests call when the user names none: the declared function no other
 * code uses (helpers are called by it), the last of them when there are several; null when
 * the code declares none.
 */
export function detectEntryPoint(code: string): string | null {
  const names = declaredFunctions(code);
  const unused = names.filter((name) => {
    const uses = code.match(new RegExp(`(?<![\\w$])${name.replace(/\$/g, '\\$')}(?![\\w$])`, 'g'));
    return (uses?.length ?? 0) <= 1; // only its own declaration
  });
  return unused.at(-1) ?? names.at(-1) ?? null;
}
