// Host-side judging: raw outcomes from the executor + the job's expected values → verdicts.
// Expected values stay here; the sandboxed program never sees them.
import { resolveLimits } from './limits';
import type { RawOutcome, RawRunResult, WireJob } from './protocol';
import type { RunLimits, RunResult, SandboxJob, TestVerdict } from './types';

/** The job as sent to an executor: arguments as JSON text, expected values left behind. */
export function toWireJob(job: SandboxJob, defaults?: Partial<RunLimits>): WireJob {
  const limits = resolveLimits(defaults, job.limits);
  if (job.kind === 'script') {
    return { kind: 'script', id: job.id, code: job.code, testScript: job.testScript, limits };
  }
  return {
    kind: 'cases',
    id: job.id,
    code: job.code,
    entryPoint: job.entryPoint,
    argsJson: job.tests.map((test) => JSON.stringify(test.args) ?? '[]'),
    limits,
  };
}

export function judge(job: SandboxJob, raw: RawRunResult): RunResult {
  const tests =
    job.kind === 'cases'
      ? job.tests.map((test, i) => judgeCase(test.expected, raw.outcomes[i]))
      : [judgeScript(raw.outcomes[0])];
  const passCount = tests.filter((test) => test.passed).length;
  const result: RunResult = {
    id: job.id,
    passed: tests.length > 0 && passCount === tests.length,
    passCount,
    total: tests.length,
    errorKind: raw.programError?.errorKind ?? null,
    tests,
    cost: raw.cost,
  };
  if (raw.programError) result.message = raw.programError.message;
  return result;
}

/** A whole job lost to the watchdog or a crashed worker. */
export function lostJob(job: SandboxJob, message: string, wallMs: number): RunResult {
  const total = job.kind === 'cases' ? job.tests.length : 1;
  const verdict: TestVerdict = { passed: false, errorKind: 'watchdog_killed', message };
  return {
    id: job.id,
    passed: false,
    passCount: 0,
    total,
    errorKind: 'watchdog_killed',
    message,
    tests: Array.from({ length: total }, () => verdict),
    cost: { wallMs, work: 0, peakBytes: 0 },
  };
}

function judgeCase(expected: unknown, outcome: RawOutcome | undefined): TestVerdict {
  if (!outcome) return { passed: false, errorKind: 'runtime', message: 'no outcome' };
  if (!outcome.ok) return { passed: false, errorKind: outcome.errorKind, message: outcome.message };
  const actual = outcome.json === undefined ? undefined : JSON.parse(outcome.json);
  const verdict: TestVerdict = {
    passed: jsonEqual(actual, normalizeExpected(expected)),
    errorKind: null,
  };
  if (outcome.json !== undefined) verdict.actual = outcome.json;
  return verdict;
}

function judgeScript(outcome: RawOutcome | undefined): TestVerdict {
  if (!outcome) return { passed: false, errorKind: 'runtime', message: 'no outcome' };
  if (!outcome.ok) return { passed: false, errorKind: outcome.errorKind, message: outcome.message };
  return { passed: true, errorKind: null };
}

/** Expected values go through JSON too, so both sides mean the same thing (NaN → null, …). */
function normalizeExpected(expected: unknown): unknown {
  const text = JSON.stringify(expected);
  return text === undefined ? undefined : JSON.parse(text);
}

/** Deep equality of two JSON values: object key order ignored, own keys only. */
export function jsonEqual(a: unknown, b: unknown): boolean {
  if (a === b) return true;
  if (typeof a !== 'object' || typeof b !== 'object' || a === null || b === null) return false;
  if (Array.isArray(a) !== Array.isArray(b)) return false;
  if (Array.isArray(a) && Array.isArray(b)) {
    return a.length === b.length && a.every((item, i) => jsonEqual(item, b[i]));
  }
  const objA = a as Record<string, unknown>;
  const objB = b as Record<string, unknown>;
  const keysA = Object.keys(objA);
  if (keysA.length !== Object.keys(objB).length) return false;
  return keysA.every((key) => Object.hasOwn(objB, key) && jsonEqual(objA[key], objB[key]));
}
