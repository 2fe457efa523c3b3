// `npm run --silent sandbox -- --suite FILE.jsonl [--solution-field canonical_solution] [--json]`
// Runs an MBXP / HumanEval-X style suite through the sandbox pool and prints one JSON line per
// task (--json) or a human summary.
import { createSandbox } from '../sandbox/nodeSandbox';
import { parseSuite, type SuiteRow } from '../sandbox/suite';
import type { RunResult } from '../sandbox/types';
import type { FlagSpecs } from './flags';
import { readTextFile } from './jsonFiles';
import { commandLine, UsageError } from './runCli';

const FLAGS = {
  suite: { kind: 'string', help: 'the suite, FILE.jsonl (required)' },
  'solution-field': {
    kind: 'string',
    help: 'the field holding each solution (default canonical_solution)',
  },
  workers: { kind: 'integer', help: 'sandbox workers (default: the pool’s own)' },
  json: { kind: 'boolean', help: 'one JSON line per task instead of a summary' },
} satisfies FlagSpecs;

function jsonLine(row: SuiteRow, result: RunResult | undefined): string {
  if ('skipped' in row) {
    return JSON.stringify({
      task_id: row.taskId,
      passed: false,
      skipped: true,
      reason: row.skipped,
    });
  }
  return JSON.stringify({
    task_id: row.taskId,
    passed: result?.passed ?? false,
    error_kind: result?.tests[0]?.errorKind ?? result?.errorKind ?? null,
    wall_ms: Number((result?.cost.wallMs ?? 0).toFixed(3)),
    work: result?.cost.work ?? 0,
    peak_bytes: result?.cost.peakBytes ?? 0,
  });
}

const { flags } = commandLine('sandbox', FLAGS, {
  usage:
    'npm run --silent sandbox -- --suite FILE.jsonl [--solution-field canonical_solution] [--workers N] [--json]',
});
if (!flags.suite) throw new UsageError('--suite FILE.jsonl is required');
if (flags.workers !== undefined && flags.workers < 1) {
  throw new UsageError(`--workers must be at least 1, got ${flags.workers}`);
}
const options = {
  suite: flags.suite,
  solutionField: flags['solution-field'] ?? 'canonical_solution',
  json: flags.json === true,
  workers: flags.workers,
};
const { rows, problems } = parseSuite(await readTextFile(options.suite), options.solutionField);
for (const problem of problems) console.error(`${options.suite}: ${problem.message}`);

const started = performance.now();
const sandbox = await createSandbox({ size: options.workers });
const runnable = rows.flatMap((row) => ('job' in row ? [row.job] : []));
const results = await sandbox.run(runnable); // in job order
await sandbox.close();

let next = 0;
const counts = new Map<string, number>();
let passed = 0;
let skipped = 0;
for (const row of rows) {
  const result = 'job' in row ? results[next++] : undefined;
  if (options.json) console.log(jsonLine(row, result));
  if ('skipped' in row) skipped++;
  else if (result?.passed) passed++;
  else {
    const kind = result?.tests[0]?.errorKind ?? 'wrong';
    counts.set(kind, (counts.get(kind) ?? 0) + 1);
  }
}
if (!options.json) {
  const seconds = (performance.now() - started) / 1000;
  console.log(`${options.suite}: ${rows.length} tasks, ${runnable.length} run, ${skipped} skipped`);
  console.log(`passed ${passed}/${runnable.length} in ${seconds.toFixed(1)} s`);
  for (const [kind, count] of [...counts].sort((a, b) => b[1] - a[1]))
    console.log(`  ${kind}: ${count}`);
  if (problems.length > 0) console.log(`${problems.length} malformed line(s), see above`);
}
process.exitCode = problems.length > 0 ? 1 : 0;
