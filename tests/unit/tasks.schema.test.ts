// The task schema: the validator's messages, user task files, JSON representability.
import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import {
  formatTaskError,
  generateTasks,
  jsonProblem,
  parseUserTasks,
  validateTask,
} from '../../src/tasks';

const good = {
  statement: 'Return twice the number.',
  entryPoint: 'double',
  tests: [{ args: [2], expected: 4 }],
  code: 'function double(x){return x*2}',
};

describe('validateTask', () => {
  it('accepts every generated task after a JSON round trip', () => {
    for (const task of generateTasks({ count: 200, seed: 3 })) {
      const result = validateTask(JSON.parse(JSON.stringify(task)));
      expect(result.ok ? [] : result.errors.map(formatTaskError)).toEqual([]);
    }
  });

  it('names the task and the field of each problem', () => {
    const [task] = generateTasks({ tiers: ['L4'], count: 1, seed: 1 });
    const broken = JSON.parse(JSON.stringify(task));
    broken.tier = 'L9';
    broken.tests[1].args = [];
    broken.strategies[0].plan = '1. first\n3. third';
    broken.efficiencyTests = [99];
    const result = validateTask(broken);
    expect(result.ok).toBe(false);
    if (result.ok) return;
    const fields = result.errors.map((e) => e.field);
    expect(fields).toEqual(['tier', 'tests[1].args', 'strategies[0].plan', 'efficiencyTests[0]']);
    expect(result.errors.every((e) => e.taskId === task?.id)).toBe(true);
    expect(formatTaskError(result.errors[0]!)).toContain(`task "${task?.id}", field "tier"`);
  });

  it('requires both strategies and an efficiency test on L4', () => {
    const [task] = generateTasks({ tiers: ['L4'], count: 1, seed: 2 });
    const result = validateTask({
      ...task,
      strategies: task?.strategies.slice(0, 1),
      efficiencyTests: [],
    });
    expect(result.ok ? [] : result.errors.map((e) => e.field)).toEqual([
      'strategies',
      'efficiencyTests',
    ]);
  });
});

describe('jsonProblem', () => {
  it('refuses values JSON cannot carry unchanged', () => {
    expect(jsonProblem([1, 'a', null, { b: [true] }])).toBeNull();
    expect(jsonProblem(Number.NaN)).toContain('NaN');
    expect(jsonProblem([1, Number.POSITIVE_INFINITY])).toContain('[1]');
    expect(jsonProblem(-0)).toContain('-0');
    expect(jsonProblem(undefined)).toContain('undefined');
    expect(jsonProblem(new Date(0))).toContain('plain object');
  });
});

describe('parseUserTasks', () => {
  it('loads the example file shipped in public/tasks', () => {
    const text = readFileSync(
      new URL('../../public/tasks/example-user-tasks.json', import.meta.url),
      'utf8',
    );
    const { tasks, errors } = parseUserTasks(text);
    expect(errors).toEqual([]);
    expect(tasks.map((t) => t.id)).toEqual(['double-it', 'count-long-words', 'user-3']);
    expect(tasks[1]?.strategies[0]?.plan).toBe(
      '1. split it into words\n2. keep words longer than 3\n3. count them',
    );
    expect(tasks[1]?.tier).toBe('L3');
    expect(tasks[2]?.strategies).toEqual([]);
  });

  it('refuses bad tasks by name and field and keeps the good ones', () => {
    const file = {
      tasks: [
        { ...good, id: 'ok-1' },
        { ...good, id: 'no-entry', entryPoint: undefined },
        { ...good, id: 'tests-object', tests: { args: [1], expected: 2 } },
        { id: 'ok-2', ...good },
        { ...good, id: 'ok-1' },
        { ...good, id: 'bad-args', tests: [{ args: 5, expected: 1 }] },
        'not a task',
      ],
    };
    // 1e999 parses to Infinity: the one non-JSON-representable number a JSON file can hold.
    const text = JSON.stringify(file).replace(
      '{"id":"ok-2"',
      '{"id":"nan-expected","statement":"x","entryPoint":"double","tests":[{"args":[1],"expected":1e999}]},{"id":"ok-2"',
    );
    const { tasks, errors } = parseUserTasks(text);
    expect(tasks.map((t) => t.id)).toEqual(['ok-1', 'ok-2']);
    const named = errors.map((e) => `${e.taskId}:${e.field}`);
    expect(named).toEqual([
      'no-entry:entryPoint',
      'tests-object:tests',
      'nan-expected:tests[0].expected',
      'ok-1:id',
      'bad-args:tests[0].args',
      '#8:(task)',
    ]);
    expect(errors.find((e) => e.taskId === 'nan-expected')?.message).toContain('Infinity');
    expect(errors.find((e) => e.field === 'id')?.message).toContain('duplicate');
  });

  it('refuses a file that is not JSON, naming the file', () => {
    const { tasks, errors } = parseUserTasks('{"tasks": [');
    expect(tasks).toEqual([]);
    expect(errors).toHaveLength(1);
    expect(errors[0]?.field).toBe('(file)');
    expect(errors[0]?.message).toMatch(/not valid JSON/);
  });

  it('accepts a bare array and numbered plan text', () => {
    const { tasks, errors } = parseUserTasks(JSON.stringify([{ ...good, plan: '1. double it' }]));
    expect(errors).toEqual([]);
    expect(tasks[0]?.strategies[0]).toEqual({
      name: 'direct',
      plan: '1. double it',
      code: good.code,
    });
  });
});
