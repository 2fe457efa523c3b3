// Runs reference code in the host JavaScript engine (V8 in Node) to check tasks quickly.
// Only for trusted code (our own references) in tests and the CLI: untrusted programs go
// through src/sandbox.
import { jsonEqual } from '../sandbox/verdict';
import type { TaskTest } from './types';

export interface NodeCheckResult {
  passed: boolean;
  /** Indices of failing tests, with what went wrong. */
  failures: { index: number; message: string }[];
}

export function checkInNode(
  code: string,
  entryPoint: string,
  tests: readonly TaskTest[],
): NodeCheckResult {
  let fn: (...args: unknown[]) => unknown;
  try {
    fn = new Function(`${code}\nreturn ${entryPoint};`)() as typeof fn;
  } catch (error) {
    return { passed: false, failures: [{ index: -1, message: `does not load: ${String(error)}` }] };
  }
  const failures: NodeCheckResult['failures'] = [];
  tests.forEach((test, index) => {
    try {
      // Fresh copies: a program that mutates its arguments must not change the next test.
      const args = JSON.parse(JSON.stringify(test.args)) as unknown[];
      const text = JSON.stringify(fn(...args));
      const actual: unknown = text === undefined ? undefined : JSON.parse(text);
      if (!jsonEqual(actual, test.expected)) {
        failures.push({ index, message: `got ${text}, expected ${JSON.stringify(test.expected)}` });
      }
    } catch (error) {
      failures.push({ index, message: `threw ${String(error)}` });
    }
  });
  return { passed: failures.length === 0, failures };
}
