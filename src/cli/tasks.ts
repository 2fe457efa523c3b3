// `npm run --silent tasks -- <command>`: the task world from the command line.
//   export  --tier L1,L2,L3,L4 --split train|validation|heldout --count N --seed S [--out FILE.jsonl]
//           --task-set examples: the examples world (tasks/examples/), --split train|validation|length|compose
//           [--format openrlhf|verl|trl --out DIR]  an engine's dataset, task file and reward .py
//           (held-out tasks exist for L2 and L3; other requested tiers are skipped there)
//   suites  [--check]          regenerate public/tasks/suite-*.json (or check they are current);
//           --task-set examples: public/tasks/examples/suite-*.json
//   show    --tier L2 [--split S] [--count N] [--seed S]     print statements, plans, code
//   check   --tier L1,L2 [--split S] [--count N] [--seed S] [--sandbox]   run every reference
//   mbxp    --in mbjsp_release_v1.2.jsonl --out public/tasks/mbxp   the MBXP task set (cli/tasksMbxp.ts)
import { mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
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
import {
  EXAMPLES_SPLITS,
  type ExamplesSplit,
  generateExamplesTasks,
} from '../tasks/examples/generate';
import { buildExamplesSuite, EXAMPLES_SUITES } from '../tasks/examples/suites';
import { EXPORT_FORMATS } from '../tasks/exportFormats';
import { exportForEngine, exportFormat } from '../tasks/exportNode';
import { mbxpFile, serializeTaskSet, TASK_SET_SPLITS } from '../tasks/mbxp/taskSet';
import { checkInNode } from '../tasks/nodeCheck';
import type { FlagSpecs } from './flags';
import { commandLine, UsageError } from './runCli';

const SUITE_DIR = fileURLToPath(new URL('../../public/tasks/', import.meta.url));
const PUBLIC_DIR = fileURLToPath(new URL('../../public/', import.meta.url));
const SPLIT_CHOICES = [...new Set([...SPLITS, ...EXAMPLES_SPLITS])];

const FLAGS = {
  tier: { kind: 'string', help: `comma-separated tiers of ${TIERS.join(',')} (default all)` },
  split: {
    kind: 'choice',
    choices: SPLIT_CHOICES,
    help: 'which split (default train); procedural: train|validation|heldout, examples: train|validation|length|compose',
  },
  'task-set': {
    kind: 'choice',
    choices: ['procedural', 'examples'],
    help: 'procedural (default): statements that list the steps; examples: signature and input/output examples only',
  },
  count: { kind: 'integer', help: 'how many tasks' },
  seed: { kind: 'integer', help: 'seed of the draw (default 1)' },
  out: { kind: 'string', help: 'export: FILE.jsonl (default stdout); with --format, a folder' },
  format: {
    kind: 'choice',
    choices: EXPORT_FORMATS,
    help: 'export: an engine’s dataset, task file and reward .py (default lab: task JSONL)',
  },
  check: { kind: 'boolean', help: 'suites: only check that the files are current' },
  sandbox: { kind: 'boolean', help: 'check: also run every reference in the QuickJS sandbox' },
  in: { kind: 'string', help: 'mbxp: MBXP’s JavaScript JSONL (mbjsp_release_v1.2.jsonl)' },
} satisfies FlagSpecs;
const {
  flags: f,
  words: [command],
} = commandLine('tasks', FLAGS, {
  usage:
    'npm run --silent tasks -- export|suites|show|check|mbxp [--tier L1,L2] [--split train] [--count N] [--seed S] [--in FILE] [--out FILE]',
  words: { name: 'command', choices: ['export', 'suites', 'show', 'check', 'mbxp'] },
});

function fail(message: string): never {
  console.error(`tasks: ${message}`);
  process.exit(1);
}

function parseTiers(text: string | undefined): Tier[] {
  const tiers = (text ?? TIERS.join(',')).split(',').map((t) => t.trim().toUpperCase());
  for (const t of tiers) {
    if (!TIERS.includes(t as Tier)) {
      throw new UsageError(`--tier: unknown tier "${t}" (use ${TIERS.join(', ')})`);
    }
  }
  return tiers as Tier[];
}

function atLeastZero(value: number | undefined, fallback: number, name: string): number {
  if (value !== undefined && value < 0) throw new UsageError(`--${name} must be ≥ 0, got ${value}`);
  return value ?? fallback;
}

const examplesWorld = f['task-set'] === 'examples';

/** The requested tasks of either world (the tier flag is the procedural world's). */
function requestedTasks(count: number) {
  if (examplesWorld) {
    const split = (f.split ?? 'train') as string;
    if (!(EXAMPLES_SPLITS as readonly string[]).includes(split)) {
      throw new UsageError(
        `--split ${split}: the examples world's splits are ${EXAMPLES_SPLITS.join(', ')}`,
      );
    }
    const seed = atLeastZero(f.seed, 1, 'seed');
    return {
      tasks: generateExamplesTasks(
        { split: split as ExamplesSplit, seed },
        atLeastZero(f.count, count, 'count'),
      ),
      split: (split === 'length' || split === 'compose' ? 'heldout' : split) as Split,
    };
  }
  const req = request(count);
  return { tasks: generateTasks(req), split: req.split };
}

function request(count: number) {
  if (f.split !== undefined && !(SPLITS as readonly string[]).includes(f.split)) {
    throw new UsageError(
      `--split ${f.split}: the procedural world's splits are ${SPLITS.join(', ')} (${f.split} is the examples world's: add --task-set examples)`,
    );
  }
  return {
    tiers: parseTiers(f.tier),
    split: (f.split ?? 'train') as Split,
    count: atLeastZero(f.count, count, 'count'),
    seed: atLeastZero(f.seed, 1, 'seed'),
  };
}

function exportTasks(): void {
  const format = exportFormat(f.format);
  const req = requestedTasks(100);
  const out = f.out;
  if (format !== 'lab') {
    console.log(exportForEngine(format, req.tasks, req.split, out));
    return;
  }
  const text = toJsonl(req.tasks);
  if (out) writeFileSync(out, text);
  else process.stdout.write(text);
}

function suites(): void {
  let stale = 0;
  const files = examplesWorld
    ? EXAMPLES_SUITES.map((spec) => ({
        file: spec.file,
        path: `${PUBLIC_DIR}${spec.file}`,
        build: () => buildExamplesSuite(spec),
      }))
    : SUITES.map((spec) => ({
        file: spec.file,
        path: `${SUITE_DIR}${spec.file}`,
        build: () => buildSuite(spec),
      }));
  for (const spec of files) {
    const path = spec.path;
    const text = serializeSuite(spec.build());
    if (f.check) {
      let current = '';
      try {
        current = readFileSync(path, 'utf8');
      } catch {}
      if (current !== text) {
        stale++;
        console.log(`stale: ${spec.file}`);
      }
    } else {
      mkdirSync(dirname(path), { recursive: true });
      writeFileSync(path, text);
      console.log(`wrote ${spec.file} (${text.length} bytes)`);
    }
  }
  if (stale) fail(`${stale} suite file(s) differ from what the generator makes`);
}

function show(): void {
  for (const task of requestedTasks(3).tasks) {
    console.log(`# ${task.id} (${task.tier})\n${task.statement}`);
    for (const s of task.strategies) console.log(`-- ${s.name}\n${s.plan}\n${s.code}`);
    console.log(
      `tests: ${task.tests.length}, e.g. ${JSON.stringify(task.tests[2] ?? task.tests[0]).slice(0, 160)}\n`,
    );
  }
}

async function check(): Promise<void> {
  const { tasks } = requestedTasks(200);
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
  if (f.sandbox) {
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

/** The MBXP task set: public/tasks/mbxp/{train,validation}.json from MBXP's JSONL. */
async function mbxp(): Promise<void> {
  if (!f.in) throw new UsageError('mbxp needs --in FILE.jsonl (MBXP’s mbjsp_release_v1.2.jsonl)');
  if (!f.out) throw new UsageError('mbxp needs --out DIR (public/tasks/mbxp)');
  let text: string;
  try {
    text = readFileSync(f.in, 'utf8');
  } catch (error) {
    throw new UsageError(`--in ${f.in}: cannot read it (${(error as NodeJS.ErrnoException).code})`);
  }
  const { buildMbxpTaskSet, summarizeBuild } = await import('./tasksMbxp');
  const sandbox = await createSandbox();
  try {
    const build = await buildMbxpTaskSet(text, sandbox);
    if (build.rows === 0) fail(`${f.in}: no MBXP rows`);
    mkdirSync(f.out, { recursive: true });
    for (const split of TASK_SET_SPLITS) {
      const file = mbxpFile(split).split('/').at(-1) ?? `${split}.json`;
      writeFileSync(join(f.out, file), serializeTaskSet(split, build.splits[split]));
    }
    console.log(summarizeBuild(build));
  } finally {
    await sandbox.close();
  }
}

switch (command) {
  case 'export':
    exportTasks();
    break;
  case 'suites':
    suites();
    break;
  case 'show':
    show();
    break;
  case 'check':
    await check();
    break;
  case 'mbxp':
    await mbxp();
    break;
}
