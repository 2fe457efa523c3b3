// Every program of the hostile corpus is contained with the right error kind, the pool stays
// healthy, and an honest program run right after each hostile one still gets the right verdict.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createSandbox } from '../../src/sandbox/nodeSandbox';
import type { RunResult, Sandbox } from '../../src/sandbox/types';
import { honestJob, hostileCorpus } from '../fixtures/hostile';

let sandbox: Sandbox;
let results: RunResult[];
beforeAll(async () => {
  sandbox = await createSandbox({ size: 2 });
  // Hostile and honest jobs interleaved in one run: each honest job shares a batch (and so a
  // worker, or its replacement) with the hostile job before it.
  results = await sandbox.run(hostileCorpus.flatMap((hostile, i) => [hostile.job, honestJob(i)]));
});
afterAll(() => sandbox.close());

describe('hostile corpus', () => {
  it('has at least 40 programs', () => {
    expect(hostileCorpus.length).toBeGreaterThanOrEqual(40);
    expect(new Set(hostileCorpus.map((h) => h.name)).size).toBe(hostileCorpus.length);
  });

  it.each(hostileCorpus.map((hostile, i) => [hostile.name, i] as const))(
    '%s is contained',
    (_name, i) => {
      const hostile = hostileCorpus[i]!;
      const result = results[2 * i]!;
      const first = result.tests[0]!;
      expect(result.id).toBe(hostile.job.id);
      expect(result.passed, first.message ?? first.actual).toBe(hostile.passed);
      expect(hostile.errorKinds, `${first.errorKind}: ${first.message}`).toContain(first.errorKind);
      if (hostile.actual !== undefined) expect(first.actual).toBe(hostile.actual);
      if (hostile.passCount !== undefined) expect(result.passCount).toBe(hostile.passCount);
      const honest = results[2 * i + 1]!;
      expect(honest.id).toBe(`honest-${i}`);
      expect(honest.passed, JSON.stringify(honest.tests)).toBe(true);
    },
  );

  it('leaves the pool healthy', async () => {
    const after = await sandbox.run(Array.from({ length: 20 }, (_, i) => honestJob(100 + i)));
    expect(after.every((r) => r.passed)).toBe(true);
  });
});
