// `npm run experiments`: the lab's miniature of the paper's comparison. Warm start vs
// single-agent GRPO vs frozen Planner vs CoRe (both roles), the same compute budget for the
// three GRPO arms (same steps, same number of programs per step), 3 seeds each; greedy
// pass@1 per suite (held-out, L1–L4) and the exec cost / peak memory of passing L4 programs.
// Writes runs/experiments/<arm>-s<seed>/ (resumable: a cut-off run continues with --resume),
// runs/experiments/results.json and the table in docs/EXPERIMENTS.md.
// Options (env): STEPS=30 SEEDS=1,2,3 JOBS=2 CHECKPOINT=public/checkpoints/tiny EVAL_TASKS=50
// OUT=runs/experiments DOC=docs/EXPERIMENTS.md TABLE_ONLY=1 (rewrite the table from the runs on
// disk; a dry run: OUT=/tmp/x DOC=/tmp/x.md STEPS=1 ...)
import { spawn } from 'node:child_process';
import { existsSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';

const STEPS = Number(process.env.STEPS ?? 30);
const SEEDS = (process.env.SEEDS ?? '1,2,3').split(',').map(Number);
const JOBS = Number(process.env.JOBS ?? 2);
const CHECKPOINT = process.env.CHECKPOINT ?? 'public/checkpoints/tiny';
const EVAL_TASKS = Number(process.env.EVAL_TASKS ?? 50);
const ROOT = process.env.OUT ?? 'runs/experiments';
const DOC = process.env.DOC ?? 'docs/EXPERIMENTS.md';

// Same compute per step for every GRPO arm: 4 tasks and 32 programs (core and frozen Planner:
// 4 tasks × 2 plans × 4 programs; single: 4 tasks × 8 programs, no plan).
const COMMON = [
  '--tasks-per-step',
  '4',
  '--lr',
  '1e-4',
  '--beta',
  '0.04',
  '--plan-tokens',
  '64',
  '--program-tokens',
  '96',
  '--eval-tasks',
  String(EVAL_TASKS),
  '--final-eval',
  '--checkpoint',
  CHECKPOINT,
  '--backend',
  'wasm',
];
const ARMS = {
  single: ['--mode', 'single', '--plans', '1', '--programs', '8'],
  'frozen-planner': ['--mode', 'frozen-planner', '--plans', '2', '--programs', '4'],
  core: ['--mode', 'core', '--plans', '2', '--programs', '4'],
};

function runArgs(arm, seed) {
  const out = join(ROOT, `${arm}-s${seed}`);
  // The warm-start rows: zero GRPO steps, evaluated like the arms they start.
  const evalOnly = { 'warm-start': ARMS.core, 'warm-start-coder-alone': ARMS.single }[arm];
  if (evalOnly) {
    return { out, args: [...evalOnly, '--steps', '0', '--seed', '1', ...COMMON, '--out', out] };
  }
  const resumable =
    existsSync(join(out, 'snapshot', 'run.json')) && existsSync(join(out, 'config.json'));
  if (resumable) return { out, args: ['--resume', out] };
  return {
    out,
    args: [...ARMS[arm], '--steps', String(STEPS), '--seed', String(seed), ...COMMON, '--out', out],
  };
}

function train(arm, seed) {
  const { out, args } = runArgs(arm, seed);
  if (existsSync(join(out, 'eval.json'))) return Promise.resolve();
  const started = Date.now();
  console.log(`start ${arm} seed ${seed}: npm run --silent train -- grpo ${args.join(' ')}`);
  return new Promise((resolve, reject) => {
    const child = spawn('npx', ['vite-node', 'src/cli/train.ts', '--', 'grpo', ...args], {
      stdio: ['ignore', 'pipe', 'inherit'],
    });
    let lastLine = '';
    child.stdout.on('data', (chunk) => {
      lastLine = String(chunk).trim().split('\n').pop() ?? lastLine;
    });
    child.on('exit', (code) => {
      const minutes = ((Date.now() - started) / 60000).toFixed(1);
      console.log(
        `done  ${arm} seed ${seed} in ${minutes} min (exit ${code}) ${lastLine.slice(0, 160)}`,
      );
      code === 0 ? resolve() : reject(new Error(`${arm} seed ${seed} failed (exit ${code})`));
    });
  });
}

async function pool(jobs, width) {
  const queue = [...jobs];
  const workers = Array.from({ length: width }, async () => {
    while (queue.length > 0) {
      const job = queue.shift();
      await job();
    }
  });
  await Promise.all(workers);
}

const jobs = [
  () => train('warm-start', 1),
  () => train('warm-start-coder-alone', 1),
  ...SEEDS.flatMap((seed) => Object.keys(ARMS).map((arm) => () => train(arm, seed))),
];
// TABLE_ONLY=1 rewrites the table from the runs on disk without starting any.
if (process.env.TABLE_ONLY !== '1') {
  const started = Date.now();
  await pool(jobs, JOBS);
  console.log(`all runs done in ${((Date.now() - started) / 60000).toFixed(1)} min`);
}
writeTable();

function writeTable() {
  const rows = [
    ['warm start (Planner → Coder)', 'warm-start', [1]],
    ['warm start, Coder alone (no plan)', 'warm-start-coder-alone', [1]],
    ['single-agent GRPO (Coder, no plan)', 'single', SEEDS],
    ['frozen Planner, GRPO on the Coder', 'frozen-planner', SEEDS],
    ['CoRe (both roles, collaborative credit)', 'core', SEEDS],
  ];
  const columns = ['heldout', 'L1', 'L2', 'L3', 'L4'];
  const results = {};
  const lines = [
    `| arm | runs | ${columns.map((c) => `pass@1 ${c}`).join(' | ')} | L4 exec cost (work) | L4 peak memory (KB) | coder/reward, first → last 5 steps |`,
    `|---|---|${columns.map(() => '---').join('|')}|---|---|---|`,
  ];
  for (const [label, arm, seeds] of rows) {
    const evals = seeds
      .map((seed) => join(ROOT, `${arm}-s${seed}`, 'eval.json'))
      .filter((path) => existsSync(path))
      .map((path) => JSON.parse(readFileSync(path, 'utf8')));
    results[arm] = evals;
    if (evals.length === 0) {
      lines.push(
        `| ${label} | 0/${seeds.length} (not run yet) |${columns.map(() => ' – |').join('')} – | – | – |`,
      );
      continue;
    }
    const cell = (pick, scale = 1, digits = 3) => {
      const values = evals
        .map(pick)
        .filter((v) => v !== null && v !== undefined)
        .map((v) => v * scale);
      if (values.length === 0) return '–';
      const mean = values.reduce((a, b) => a + b, 0) / values.length;
      const std =
        values.length > 1
          ? Math.sqrt(values.reduce((s, v) => s + (v - mean) ** 2, 0) / (values.length - 1))
          : 0;
      const note = values.length < evals.length ? ` (${values.length} runs)` : '';
      return values.length > 1
        ? `${mean.toFixed(digits)} ± ${std.toFixed(digits)}${note}`
        : `${mean.toFixed(digits)}${note}`;
    };
    lines.push(
      `| ${label} | ${evals.length}/${seeds.length} | ${columns
        .map((c) => cell((e) => e.metrics[`eval/pass@1/${c}`]))
        .join(
          ' | ',
        )} | ${cell((e) => e.metrics['eval/exec_cost/L4'], 1, 1)} | ${cell((e) => e.metrics['eval/peak_memory/L4'], 1 / 1024, 1)} | ${rewardTrend(arm, seeds)} |`,
    );
  }
  writeFileSync(join(ROOT, 'results.json'), `${JSON.stringify(results, null, 2)}\n`);
  const complete = rows.every(([, arm, seeds]) => results[arm].length === seeds.length);
  const table = [
    '<!-- experiments:begin (written by `npm run experiments`) -->',
    complete
      ? ''
      : '**PARTIAL: some runs have not finished; rerun `npm run experiments` to complete (finished runs are kept, cut-off runs resume).**\n',
    `Settings: ${STEPS} GRPO steps per run, seeds ${SEEDS.join(', ')}, warm start \`${CHECKPOINT}\`, greedy pass@1 on the first ${EVAL_TASKS} tasks of each fixed suite, backend wasm. Generated ${new Date().toISOString().slice(0, 16)}Z.`,
    '',
    ...lines,
    '<!-- experiments:end -->',
  ].join('\n');
  const doc = existsSync(DOC) ? readFileSync(DOC, 'utf8') : '';
  const updated = doc.includes('<!-- experiments:begin')
    ? doc.replace(/<!-- experiments:begin[\s\S]*<!-- experiments:end -->/, table)
    : `${doc}\n${table}\n`;
  writeFileSync(DOC, updated);
  console.log(table);
}

/** Mean training reward of the Coder over the first and the last 5 steps (finished runs). */
function rewardTrend(arm, seeds) {
  const curves = seeds
    .map((seed) => join(ROOT, `${arm}-s${seed}`))
    .filter((dir) => existsSync(join(dir, 'eval.json'))) // finished runs only
    .map((dir) => join(dir, 'metrics.jsonl'))
    .map((path) =>
      readFileSync(path, 'utf8')
        .split('\n')
        .filter((line) => line.trim() !== '')
        .map((line) => JSON.parse(line)['coder/reward']),
    )
    .filter((curve) => curve.length >= 10);
  if (curves.length === 0) return '–';
  const mean = (xs) => xs.reduce((a, b) => a + b, 0) / xs.length;
  const first = mean(curves.flatMap((c) => c.slice(0, 5)));
  const last = mean(curves.flatMap((c) => c.slice(-5)));
  return `${first.toFixed(3)} → ${last.toFixed(3)}`;
}
