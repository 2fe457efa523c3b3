// `npm run --silent tasks -- <command>`: the task world from the command line.
//   export  --tier L1,L2,L3,L4 --split train|validation|heldout --count N --seed S [--out FILE.jsonl]
//           [--format openrlhf|verl|trl --out DIR]  an engine's dataset, task file and reward .py
//           (held-out tasks exist for L2 and L3; other requested tiers are skipped there)
//   suites  [--check]          regenerate public/tasks/suite-*.json (or check they are current)
//   show    --tier L2 [--split S] [--count N] [--seed S]     print statements, plans, code
//   check   --tier L1,L2 [--split S] [--count N] [--seed S] [--sandbox]   run every reference
import { readFileSync, writeFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { createSandbox } from '../sandbox/nodeSandbox';
import {
  buildSuite,
  checkInSandbox,
  generateTasks,
  SPLITS,
  type Split,
  SUITES,
  serializeSuite,
  TIERS,
  type Tier,
  toJsonl,
} from '../tasks';
import { exportForEngine, exportFormat } from '../tasks/exportNode';
import { checkInNode } from '../tasks/nodeCheck';

const SUITE_DIR = fileURLToPath(new URL('../../public/tasks/', import.meta.url));

function flag(args: string[], name: string): string | undefined {
  const i = args.indexOf(`--${name}`);
  return i >= 0 ? args[i + 1] : undefined;
}

function fail(message: string): never {
  console.error(message);
  process.exit(1);
}

function parseTiers(text: string | undefined): Tier[] {
  const tiers = (text ?? TIERS.join(',')).split(',').map((t) => t.trim().toUpperCase());
  for (const t of tiers)
    if (!TIERS.includes(t as Tier)) fail(`unknown tier "${t}" (use ${TIERS.join(', ')})`);
  return tiers as Tier[];
}

function parseSplit(text: string | undefined): Split {
  const split = (text ?? 'train') as Split;
  if (!SPLITS.includes(split)) fail(`unknown split "${text}" (use ${SPLITS.join(', ')})`);
  return split;
}

function parseInt10(text: string | undefined, fallback: number, name: string): number {
  const value = text === undefined ? fallback : Number(text);
  if (!Number.isInteger(value) || value < 0) fail(`--${name} must be a whole number`);
  return value;
}

function request(args: string[], count: number) {
  return {
    tiers: parseTiers(flag(args, 'tier')),
    split: parseSplit(flag(args, 'split')),
    count: parseInt10(flag(args, 'count'), count, 'count'),
    seed: parseInt10(flag(args, 'seed'), 1, 'seed'),
  };
}

function exportTasks(args: string[]): void {
  const format = exportFormat(flag(args, 'format'));
  const req = request(args, 100);
  const out = flag(args, 'out');
  if (format !== 'lab') {
    console.log(exportForEngine(format, generateTasks(req), req.split, out));
    return;
  }
  const text = toJsonl(generateTasks(req));
  if (out) writeFileSync(out, text);
  else process.stdout.write(text);
}

function suites(args: string[]): void {
  let stale = 0;
  for (const spec of SUITES) {
    const path = `${SUITE_DIR}${spec.file}`;
    const text = serializeSuite(buildSuite(spec));
    if (args.includes('--check')) {
      let current = '';
      try {
        current = readFileSync(path, 'utf8');
      } catch {}
      if (current !== text) {
        stale++;
        console.log(`stale: ${spec.file}`);
      }
    } else {
      writeFileSync(path, text);
      console.log(`wrote ${spec.file} (${text.length} bytes)`);
    }
  }
  if (stale) fail(`${stale} suite file(s) differ from what the generator makes`);
}

function show(args: string[]): void {
  for (const task of generateTasks(request(args, 3))) {
    console.log(`# ${task.id} (${task.tier})\n${task.statement}`);
    for (const s of task.strategies) console.log(`-- ${s.name}\n${s.plan}\n${s.code}`);
    console.log(
      `tests: ${task.tests.length}, e.g. ${JSON.stringify(task.tests[2] ?? task.tests[0]).slice(0, 160)}\n`,
    );
  }
}

async function check(args: string[]): Promise<void> {
  const tasks = generateTasks(request(args, 200));
  let failures = 0;
  for (const task of tasks) {
    for (const s of task.strategies) {
      const result = checkInNode(s.code, task.entryPoint, task.tests);
      if (!result.passed) {
        failures++;
        console.log(`node: ${task.id} ${s.name}: ${result.failures[0]?.message}`);
      }
    }
  }
  console.log(`node: ${tasks.length} tasks, ${failures} failing strategies`);
  if (args.includes('--sandbox')) {
    const sandbox = await createSandbox();
    try {
      const bad = await checkInSandbox(sandbox, tasks);
      for (const f of bad.slice(0, 20))
        console.log(`sandbox: ${f.taskId} ${f.strategy}: ${f.message}`);
      console.log(`sandbox: ${tasks.length} tasks, ${bad.length} failing strategies`);
      failures += bad.length;
    } finally {
      await sandbox.close();
    }
  }
  if (failures) process.exitCode = 1;
}

const [command, ...rest] = process.argv.slice(2).filter((a) => a !== '--');
try {
  switch (command) {
    case 'export':
      exportTasks(rest);
      break;
    case 'suites':
      suites(rest);
      break;
    case 'show':
      show(rest);
      break;
    case 'check':
      await check(rest);
      break;
    default:
      fail(
        'usage: tasks export|suites|show|check [--tier L1,L2] [--split train] [--count N] [--seed S] [--out FILE]',
      );
  }
} catch (error) {
  fail(`tasks ${command}: ${error instanceof Error ? error.message : String(error)}`);
}
