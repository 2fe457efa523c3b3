// `npm run --silent sandbox -- --suite FILE.jsonl [--solution-field canonical_solution] [--json]`
// Runs an MBXP / HumanEval-X style suite through the sandbox pool and prints one JSON line per
// task (--json) or a human summary.
import { readFileSync } from 'node:fs';
import { createSandbox } from '../sandbox/nodeSandbox';
import { parseSuite, type SuiteRow } from '../sandbox/suite';
import type { RunResult } from '../sandbox/types';

interface CliOptions {
  suite: string;
  solutionField: string;
  json: boolean;
  workers: number | undefined;
}

function parseArgs(argv: string[]): CliOptions {
  const args = argv.filter((arg) => arg !== '--');
  const value = (flag: string) => {
    const at = args.indexOf(flag);
    return at >= 0 ? args[at + 1] : undefined;
  };
  const suite = value('--suite');
  if (!suite) {
    console.error(
      'usage: npm run --silent sandbox -- --suite FILE.jsonl [--solution-field canonical_solution] [--workers N] [--json]',
    );
    process.exit(2);
  }
  const workers = value('--workers');
  return {
    suite,
    solutionField: value('--solution-field') ?? 'canonical_solution',
    json: args.includes('--json'),
    workers: workers ? Number(workers) : undefined,
  };
}

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

const options = parseArgs(process.argv.slice(2));
const { rows, problems } = parseSuite(readFileSync(options.suite, 'utf8'), options.solutionField);
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
