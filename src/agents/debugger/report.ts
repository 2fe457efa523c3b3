// The sandbox's report of a program's first failing test, in one short line the Debugger
// reads: the call with its arguments, the expected value, and what came back (the value, or
// the kind of error). Values are JSON, each cut at REPORT_VALUE_CHARS; the line at
// REPORT_CHARS. A program with no extractable function, or one that failed as a whole (a
// syntax error, a watchdog kill), says so instead.
import type { RunResult } from '../../sandbox/types';
import type { Task } from '../../tasks';

export const REPORT_VALUE_CHARS = 40;
export const REPORT_CHARS = 160;

function cut(text: string, chars: number): string {
  return text.length <= chars ? text : `${text.slice(0, chars - 1)}…`;
}

function json(value: unknown): string {
  return cut(JSON.stringify(value) ?? 'undefined', REPORT_VALUE_CHARS);
}

/** The first failing test's report; null when the program passed every test. */
export function failureReport(
  task: Pick<Task, 'entryPoint' | 'tests'>,
  run: RunResult | null,
): string | null {
  if (!run) return `no function ${task.entryPoint} found`;
  if (run.errorKind) return cut(`the program fails: ${run.errorKind} error`, REPORT_CHARS);
  const index = run.tests.findIndex((t) => !t.passed);
  if (index < 0) return run.passed ? null : 'no test ran';
  const verdict = run.tests[index]!;
  const test = task.tests[index];
  const call = `${task.entryPoint}(${(test?.args ?? []).map(json).join(', ')})`;
  const expected = json(test?.expected);
  const got =
    verdict.errorKind !== null
      ? `threw a ${verdict.errorKind} error`
      : `got ${cut(verdict.actual ?? 'undefined', REPORT_VALUE_CHARS)}`;
  return cut(`${call} should be ${expected}, ${got}`, REPORT_CHARS);
}
