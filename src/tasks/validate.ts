// Hand-written schema check for tasks loaded from JSON (suites, user files, exports). Every
// error names the task and the field, so a person can fix a file by reading the message.
import { jsonProblem } from './json';
import { STRATEGY_NAMES, type Strategy, type Task, type TaskTest, TIERS, type Tier } from './types';

export interface TaskError {
  /** The task's id when known, else a position like "#3". */
  taskId: string;
  /** Path of the bad field, e.g. "tests[2].expected"; "(file)" for the whole file. */
  field: string;
  message: string;
}

export type ValidationResult = { ok: true; task: Task } | { ok: false; errors: TaskError[] };

export function formatTaskError(error: TaskError): string {
  return `task "${error.taskId}", field "${error.field}": ${error.message}`;
}

const IDENTIFIER = /^[A-Za-z_$][A-Za-z0-9_$]*$/;
const PLAN_LINE = /^(\d+)\. \S/;

/** Why a plan is not "1. …\n2. …" numbered from 1, or null. Empty plans are allowed. */
export function planProblem(plan: string): string | null {
  if (plan === '') return null;
  const lines = plan.split('\n');
  for (let i = 0; i < lines.length; i++) {
    const match = PLAN_LINE.exec(lines[i] ?? '');
    if (!match || Number(match[1]) !== i + 1) {
      return `line ${i + 1} should read "${i + 1}. <step>" (got ${JSON.stringify(lines[i])})`;
    }
  }
  return null;
}

const isRecord = (v: unknown): v is Record<string, unknown> =>
  typeof v === 'object' && v !== null && !Array.isArray(v);

export function validateTask(raw: unknown, position = 0): ValidationResult {
  const errors: TaskError[] = [];
  const rec = isRecord(raw) ? raw : {};
  const taskId = typeof rec.id === 'string' && rec.id !== '' ? rec.id : `#${position + 1}`;
  const fail = (field: string, message: string) => errors.push({ taskId, field, message });
  if (!isRecord(raw)) {
    fail('(task)', 'a task must be a JSON object');
    return { ok: false, errors };
  }
  const text = (field: string): string => {
    const value = rec[field];
    if (typeof value !== 'string' || value.trim() === '') fail(field, 'must be a non-empty string');
    return typeof value === 'string' ? value : '';
  };
  const id = text('id');
  const family = text('family');
  const statement = text('statement');
  const entryPoint = text('entryPoint');
  if (entryPoint && !IDENTIFIER.test(entryPoint))
    fail('entryPoint', `"${entryPoint}" is not a JavaScript identifier`);
  const tier = rec.tier as Tier;
  if (!TIERS.includes(tier)) fail('tier', `must be one of ${TIERS.join(', ')}`);
  const arity = rec.arity;
  if (typeof arity !== 'number' || !Number.isInteger(arity) || arity < 0)
    fail('arity', 'must be a whole number ≥ 0');

  const tests = validateTests(rec.tests, typeof arity === 'number' ? arity : -1, fail);
  const examples =
    rec.examples === undefined
      ? undefined
      : validateTests(rec.examples, typeof arity === 'number' ? arity : -1, fail, 'examples');
  const strategies = validateStrategies(rec.strategies, entryPoint, fail);
  const efficiencyTests = validateEfficiency(rec.efficiencyTests, tests.length, fail);
  const steps = rec.steps;
  if (!Array.isArray(steps) || !steps.every((s) => typeof s === 'string'))
    fail('steps', 'must be an array of strings');
  if (tier === 'L4') {
    const names = strategies.map((s) => s.name);
    if (!names.includes('naive') || !names.includes('efficient')) {
      fail('strategies', 'an L4 task needs a "naive" and an "efficient" strategy');
    }
    if (efficiencyTests.length === 0)
      fail('efficiencyTests', 'an L4 task needs at least one efficiency test');
  }
  if (errors.length) return { ok: false, errors };
  return {
    ok: true,
    task: {
      id,
      family,
      tier,
      statement,
      entryPoint,
      arity: arity as number,
      tests,
      ...(examples ? { examples } : {}),
      strategies,
      efficiencyTests,
      steps: steps as string[],
    },
  };
}

type Fail = (field: string, message: string) => void;

function validateTests(raw: unknown, arity: number, fail: Fail, field = 'tests'): TaskTest[] {
  if (!Array.isArray(raw)) {
    fail(field, 'must be an array of {args, expected}');
    return [];
  }
  if (raw.length === 0) fail(field, 'needs at least one test');
  for (const [i, test] of raw.entries()) {
    if (!isRecord(test)) {
      fail(`${field}[${i}]`, 'must be an object {args, expected}');
      continue;
    }
    if (!Array.isArray(test.args)) fail(`${field}[${i}].args`, 'must be an array of arguments');
    else {
      if (arity >= 0 && test.args.length !== arity) {
        fail(
          `${field}[${i}].args`,
          `has ${test.args.length} arguments, the entry point takes ${arity}`,
        );
      }
      const problem = jsonProblem(test.args);
      if (problem) fail(`${field}[${i}].args`, `not JSON-representable: ${problem}`);
    }
    if (!('expected' in test)) fail(`${field}[${i}].expected`, 'is missing');
    else {
      const problem = jsonProblem(test.expected);
      if (problem) fail(`${field}[${i}].expected`, `not JSON-representable: ${problem}`);
    }
  }
  return raw as TaskTest[];
}

function validateStrategies(raw: unknown, entryPoint: string, fail: Fail): Strategy[] {
  if (!Array.isArray(raw)) {
    fail('strategies', 'must be an array of {name, plan, code}');
    return [];
  }
  for (const [i, s] of raw.entries()) {
    if (!isRecord(s)) {
      fail(`strategies[${i}]`, 'must be an object {name, plan, code}');
      continue;
    }
    if (!STRATEGY_NAMES.includes(s.name as Strategy['name'])) {
      fail(`strategies[${i}].name`, `must be one of ${STRATEGY_NAMES.join(', ')}`);
    }
    if (typeof s.plan !== 'string') fail(`strategies[${i}].plan`, 'must be a string');
    else {
      const problem = planProblem(s.plan);
      if (problem) fail(`strategies[${i}].plan`, problem);
    }
    if (typeof s.code !== 'string' || s.code.trim() === '')
      fail(`strategies[${i}].code`, 'must be non-empty code');
    else if (entryPoint && !s.code.includes(entryPoint)) {
      fail(`strategies[${i}].code`, `does not mention the entry point "${entryPoint}"`);
    }
  }
  return raw as Strategy[];
}

function validateEfficiency(raw: unknown, testCount: number, fail: Fail): number[] {
  if (!Array.isArray(raw)) {
    fail('efficiencyTests', 'must be an array of test indices');
    return [];
  }
  raw.forEach((index, i) => {
    if (typeof index !== 'number' || !Number.isInteger(index) || index < 0 || index >= testCount) {
      fail(`efficiencyTests[${i}]`, `must be an index into tests (0..${testCount - 1})`);
    }
  });
  if (new Set(raw).size !== raw.length) fail('efficiencyTests', 'has repeated indices');
  return raw as number[];
}
