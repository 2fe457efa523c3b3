// The worker pool with real worker_threads: job order, batching, watchdog, crash recovery.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createSandbox } from '../../src/sandbox/nodeSandbox';
import { nodeWorkerScript, spawnNodeWorker } from '../../src/sandbox/nodeWorker';
import { createPool } from '../../src/sandbox/pool';
import type { CasesJob, Sandbox } from '../../src/sandbox/types';

const square = (i: number): CasesJob => ({
  kind: 'cases',
  id: `square-${i}`,
  code: `function sq(x) { return x * x + ${i % 3}; }`,
  entryPoint: 'sq',
  tests: [{ args: [i], expected: i * i }],
});

let sandbox: Sandbox;
beforeAll(async () => {
  sandbox = await createSandbox({ size: 2, limits: { deadlineMs: 300 } });
});
afterAll(() => sandbox.close());

describe('worker pool', () => {
  it('returns results in job order across workers and batches', async () => {
    const jobs = Array.from({ length: 600 }, (_, i) => square(i));
    const results = await sandbox.run(jobs);
    expect(results.map((r) => r.id)).toEqual(jobs.map((j) => j.id));
    expect(results.map((r) => r.passed)).toEqual(jobs.map((_, i) => i % 3 === 0));
    expect(results[1]?.tests[0]?.actual).toBe('2');
  });

  it('serves concurrent run() calls independently', async () => {
    const [a, b] = await Promise.all([
      sandbox.run([square(3), square(6)]),
      sandbox.run([square(9), square(1), square(12)]),
    ]);
    expect(a.map((r) => r.id)).toEqual(['square-3', 'square-6']);
    expect(b.map((r) => r.id)).toEqual(['square-9', 'square-1', 'square-12']);
    expect([...a, ...b].filter((r) => r.passed).map((r) => r.id)).toEqual([
      'square-3',
      'square-6',
      'square-9',
      'square-12',
    ]);
  });

  it('kills a worker that ignores its deadline and re-runs the rest of its batch', async () => {
    const bomb: CasesJob = {
      kind: 'cases',
      id: 'bomb',
      code: 'function f() { const a = []; for (;;) a.push(new Array(1e5).fill(1)); }',
      entryPoint: 'f',
      tests: [{ args: [], expected: 1 }],
    };
    const jobs = [
      square(0),
      square(3),
      bomb,
      ...Array.from({ length: 40 }, (_, i) => square(i * 3)),
    ];
    const started = Date.now();
    const results = await sandbox.run(jobs);
    // Deadline 300 ms + 500 ms grace, then a fresh worker; generous for loaded shared machines.
    expect(Date.now() - started).toBeLessThan(15_000);
    expect(results[2]).toMatchObject({ id: 'bomb', passed: false, errorKind: 'watchdog_killed' });
    expect(results.filter((r) => r.id !== 'bomb').every((r) => r.passed)).toBe(true);
    expect(results.map((r) => r.id)).toEqual(jobs.map((j) => j.id));
    // The pool is healthy afterwards.
    expect((await sandbox.run([square(6)]))[0]?.passed).toBe(true);
  });

  it('replaces a worker that dies mid-batch; only the running job is lost', async () => {
    const script = await nodeWorkerScript();
    let spawned = 0;
    // The first worker is really terminated (as if the OS killed it) while job 2 runs; jobs 0
    // and 1 finished in it but their results were never sent, so they must run again.
    const pool = createPool({
      size: 1,
      sharedProgress: false,
      spawn: () => {
        const worker = spawnNodeWorker(script);
        if (spawned++ > 0) return worker;
        return {
          ...worker,
          onMessage: (listener) =>
            worker.onMessage((message) => {
              listener(message);
              if (message.type === 'started' && message.index === 2) worker.terminate();
            }),
        };
      },
    });
    try {
      const slow: CasesJob = {
        ...square(15),
        code: 'function sq(x) { const end = Date.now() + 200; while (Date.now() < end) {} return x * x; }',
      };
      const jobs = [
        square(0),
        square(3),
        slow,
        ...Array.from({ length: 5 }, (_, i) => square(18 + i * 3)),
      ];
      const results = await pool.run(jobs);
      expect(spawned).toBe(2);
      expect(results.map((r) => r.id)).toEqual(jobs.map((j) => j.id));
      expect(results[2]).toMatchObject({ passed: false, errorKind: 'watchdog_killed' });
      expect(results.filter((_, i) => i !== 2).every((r) => r.passed)).toBe(true);
    } finally {
      await pool.close();
    }
  });
});
