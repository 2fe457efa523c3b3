// Verdict logic against real programs in real QuickJS, on this thread (no pool).
import { beforeAll, describe, expect, it } from 'vitest';
import { createLocalRunner, type LocalRunner } from '../../src/sandbox/runJob';
import type { CasesJob, ScriptJob } from '../../src/sandbox/types';
import { jsonEqual } from '../../src/sandbox/verdict';

let runner: LocalRunner;
beforeAll(async () => {
  runner = await createLocalRunner({ deadlineMs: 500 });
});

const cases = (code: string, entryPoint: string, tests: CasesJob['tests']): CasesJob => ({
  kind: 'cases',
  id: entryPoint,
  code,
  entryPoint,
  tests,
});
const script = (code: string, testScript: string): ScriptJob => ({
  kind: 'script',
  id: 's',
  code,
  testScript,
});

describe('cases jobs', () => {
  it('judges each test by deep equality on the host and returns the actual JSON', async () => {
    const result = await runner.runJob(
      cases(
        'function pairs(n) { return Array.from({ length: n }, (_, i) => ({ i, sq: i * i })); }',
        'pairs',
        [
          {
            args: [2],
            expected: [
              { i: 0, sq: 0 },
              { i: 1, sq: 1 },
            ],
          },
          { args: [1], expected: [{ sq: 0, i: 0 }] },
          { args: [2], expected: [{ i: 0, sq: 0 }] },
        ],
      ),
    );
    expect(result.tests.map((t) => t.passed)).toEqual([true, true, false]);
    expect(result).toMatchObject({ passed: false, passCount: 2, total: 3, errorKind: null });
    expect(result.tests[2]?.actual).toBe('[{"i":0,"sq":0},{"i":1,"sq":1}]');
    expect(result.cost.work).toBeGreaterThanOrEqual(0);
    expect(result.cost.peakBytes).toBeGreaterThan(10_000);
    expect(result.cost.wallMs).toBeGreaterThan(0);
  });

  it('reads strings holding NUL characters whole (a C string would end at the first)', async () => {
    const code = 'function nul(s) { return [s + "\\0", "a\\0b\\0"]; }';
    const result = await runner.runJob(
      cases(code, 'nul', [
        { args: ['x'], expected: ['x\0', 'a\0b\0'] },
        { args: ['x'], expected: ['x', 'a'] },
      ]),
    );
    expect(result.tests.map((t) => t.passed)).toEqual([true, false]);
    expect(result.tests[1]?.actual).toBe(JSON.stringify(['x\0', 'a\0b\0']));
  });

  it('supports const/arrow entry points, async functions and JSON-like values', async () => {
    const code = `
      const double = (xs) => xs.map((x) => x * 2);
      async function later(x) { await null; return { x, nan: NaN, u: undefined, f() {} }; }
      function nothing() {}`;
    expect(
      (await runner.runJob(cases(code, 'double', [{ args: [[1, 2]], expected: [2, 4] }]))).passed,
    ).toBe(true);
    const later = await runner.runJob(
      cases(code, 'later', [{ args: [5], expected: { x: 5, nan: null } }]),
    );
    expect(later.passed).toBe(true);
    expect(later.tests[0]?.actual).toBe('{"x":5,"nan":null}');
    const nothing = await runner.runJob(
      cases(code, 'nothing', [{ args: [], expected: undefined }]),
    );
    expect(nothing.tests[0]).toMatchObject({ passed: true, errorKind: null });
  });

  it('names each failure with its error kind', async () => {
    const kinds = async (code: string, args: unknown[] = []) =>
      (await runner.runJob(cases(code, 'f', [{ args, expected: 1 }]))).tests[0]?.errorKind;
    expect(await kinds('function f() { return 1')).toBe('syntax');
    expect(await kinds('function f() { throw new TypeError("no"); }')).toBe('runtime');
    expect(await kinds('function f() { while (true) {} }')).toBe('timeout');
    expect(await kinds('function f() { return "x".repeat(2 ** 28); }')).toBe('out_of_memory');
    expect(await kinds('function f(n) { return f(n + 1); }', [0])).toBe('stack_overflow');
    expect(await kinds('function f() { return "x".repeat(1e6); }')).toBe('output_too_large');
    expect(await kinds('function f() { return require("fs"); }')).toBe('module_refused');
    expect(await kinds('const g = 1;')).toBe('runtime');
  });

  it('a program-level failure fails every test and is reported once', async () => {
    const result = await runner.runJob(
      cases('function f( {', 'f', [
        { args: [1], expected: 1 },
        { args: [2], expected: 2 },
      ]),
    );
    expect(result.errorKind).toBe('syntax');
    expect(result.tests.every((t) => t.errorKind === 'syntax')).toBe(true);
    expect(result.message).toMatch(/SyntaxError/);
  });

  it('stops running tests once the program deadline has passed', async () => {
    const result = await runner.runJob({
      ...cases(
        'function f(ms) { const end = Date.now() + ms; while (Date.now() < end) {} return ms; }',
        'f',
        [
          { args: [50], expected: 50 },
          { args: [400], expected: 400 },
          { args: [1], expected: 1 },
        ],
      ),
      limits: { deadlineMs: 300 },
    });
    expect(result.tests.map((t) => t.errorKind)).toEqual([null, 'timeout', 'timeout']);
  });

  it('counts more work for more computation, deterministically', async () => {
    const job = (n: number) =>
      cases(
        'function loop(n) { let s = 0; for (let i = 0; i < n; i++) s += i % 7; return s; }',
        'loop',
        [{ args: [n], expected: null }],
      );
    const small = (await runner.runJob(job(1e4))).cost.work;
    const big = (await runner.runJob(job(1e6))).cost.work;
    expect(big).toBeGreaterThan(small * 10);
    expect((await runner.runJob(job(1e6))).cost.work).toBe(big);
  });

  it('isolates programs: nothing leaks from one job into the next', async () => {
    await runner.runJob(
      cases('globalThis.leak = 1; Array.prototype.x = 2; function f() { return 1; }', 'f', []),
    );
    const result = await runner.runJob(
      cases('function f() { return [typeof leak, [].x === undefined]; }', 'f', [
        { args: [], expected: ['undefined', true] },
      ]),
    );
    expect(result.passed).toBe(true);
  });
});

describe('script jobs', () => {
  it('passes only when the test script runs to completion', async () => {
    const code = 'function add(a, b) { return a + b; }';
    const good =
      'const _ = require("lodash");\nif (!_.isEqual(add(1, 2), 3)) throw new Error("wrong");';
    const bad =
      'const _ = require("lodash");\nif (!_.isEqual(add(1, 2), 4)) throw new Error("wrong");';
    expect((await runner.runJob(script(code, good))).passed).toBe(true);
    const failed = await runner.runJob(script(code, bad));
    expect(failed.tests[0]).toMatchObject({
      passed: false,
      errorKind: 'runtime',
      message: 'Error: wrong',
    });
    expect(failed.errorKind).toBeNull();
  });

  it('provides assert (loose and strict), lodash.isEqual and a throwing console.assert', async () => {
    const code = 'function f() { return [1, { a: "2" }]; }';
    const pass = [
      'const assert = require("assert"); assert.deepEqual(f(), [1, { a: 2 }]); assert.ok(1); assert(true);',
      'const assert = require("node:assert"); assert.deepStrictEqual(f(), [1, { a: "2" }]); assert.equal(1, "1");',
      'const assert = require("assert"); assert.strictEqual(f()[0], 1); assert.notDeepStrictEqual(f(), [1, { a: 2 }]);',
      'const _ = require("lodash"); if (!_.isEqual(f(), [1, { a: "2" }]) || _.isEqual(f(), [1, {}])) throw 1;',
      'console.assert(f().length === 2); console.log("printing is allowed");',
    ];
    for (const testScript of pass)
      expect((await runner.runJob(script(code, testScript))).passed, testScript).toBe(true);
    const fail = [
      'require("assert").deepStrictEqual(f(), [1, { a: 2 }]);',
      'require("assert").strictEqual(f()[0], "1");',
      'console.assert(f().length === 3);',
      'require("assert").fail("no");',
    ];
    for (const testScript of fail)
      expect((await runner.runJob(script(code, testScript))).passed, testScript).toBe(false);
  });

  it('refuses other modules with module_refused', async () => {
    const result = await runner.runJob(script('function f() {}', 'require("lodash/fp");'));
    expect(result.tests[0]).toMatchObject({ errorKind: 'module_refused' });
    expect(result.tests[0]?.message).toMatch(/Cannot find module 'lodash\/fp'/);
  });

  it("a syntax error in the program is the program's, not the test's", async () => {
    const result = await runner.runJob(script('function f() { return 1; } /*', 'f();'));
    expect(result).toMatchObject({ passed: false, errorKind: 'syntax' });
  });
});

describe('jsonEqual', () => {
  it('is deep, order-insensitive for keys and strict on types', () => {
    expect(jsonEqual({ a: [1, { b: 2 }], c: null }, { c: null, a: [1, { b: 2 }] })).toBe(true);
    expect(jsonEqual([1, 2], [2, 1])).toBe(false);
    expect(jsonEqual({ a: 1 }, { a: 1, b: 2 })).toBe(false);
    expect(jsonEqual(1, '1')).toBe(false);
    expect(jsonEqual([], {})).toBe(false);
  });
});
