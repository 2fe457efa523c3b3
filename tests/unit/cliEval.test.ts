// `npm run eval` on each kind of shipped warm start of the examples world: a pair, one model
// (coder/ alone) and a self-plan model (--self-plan), with K sampled programs: the JSON report
// has pass@K and pass@1 of the first sampled program that passes the statement's examples.
import { execFile } from 'node:child_process';
import { describe, expect, it } from 'vitest';

function evalCli(args: string[]): Promise<{ status: number; stdout: string; stderr: string }> {
  return new Promise((resolve) => {
    execFile(
      process.execPath,
      ['scripts/cli.mjs', 'eval', ...args],
      { timeout: 240_000 },
      (error, stdout, stderr) =>
        resolve({
          status: error ? Number((error as { code?: number }).code ?? 1) : 0,
          stdout,
          stderr,
        }),
    );
  });
}

describe('npm run eval on the examples world', () => {
  it.each([
    ['tiny-examples', []],
    ['tiny-examples-single', []],
    ['tiny-examples-self-plan', ['--self-plan']],
  ])('%s: pass@K and the examples-checked pass@1', async (checkpoint, extra) => {
    const suite = 'public/tasks/examples/suite-examples.json';
    const run = await evalCli([
      '--checkpoint',
      `public/checkpoints/${checkpoint}`,
      ...extra,
      '--suite',
      suite,
      '--limit',
      '3',
      '--samples',
      '2',
      '--backend',
      'wasm',
      '--json',
    ]);
    expect(run.status, run.stderr).toBe(0);
    const report = JSON.parse(run.stdout) as {
      suites: Record<string, { overall: Record<string, number> }>;
    };
    const overall = report.suites[suite]!.overall;
    expect(overall.tasks).toBe(3);
    for (const key of ['pass@1', 'pass@k', 'pass@1_checked'])
      expect(overall[key]).toBeGreaterThanOrEqual(0);
    // The checked submission is one of the sampled programs or the greedy one.
    expect(overall['pass@1_checked']).toBeLessThanOrEqual(
      overall['pass@k']! + overall['pass@1']! + 1e-9,
    );
  });
});
