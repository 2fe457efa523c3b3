// `npm run experiments`: the lab's miniature of the paper's comparison. Warm start vs
// single-agent GRPO vs the paper's ablations (frozen Planner: CoRe without Planner RL; frozen
// Coder: without Coder RL) vs CoRe (both roles), CoRe's alternating schedule and its Planner
// credit variants, each GRPO arm on the run defaults
// (the page's and `npm run train`'s) with the same compute: the same steps, tasks and sampled
// programs per step (single samples N·M programs per task where CoRe samples N plans × M
// programs); 3 seeds each; greedy pass@1 per suite and the exec cost / peak memory of passing
// L4 programs, and each run's Collaboration Gain at its final evaluation (greedy pass@1 of the
// same Coder from the Planner's plan − from another task's plan; beside it the reference plan's
// and no plan's, agents/evaluate.ts). `single` starts from its own
// warm start (statement → code, the Coder's SFT budget: public/checkpoints/tiny-single), so the
// gap measures collaboration, not the prompt. Runs are budgeted in steps, not minutes, so a
// seed gives the same result on a busy machine as on a quiet one; a finished run (its eval.json)
// is skipped and a cut-off one resumes, so the command can be run again until the table is full
// (in the background: `nohup npm run experiments > /tmp/exp.log 2>&1 &`).
// Writes runs/experiments/<arm>-s<seed>/ (resumable: a cut-off run continues with --resume),
// docs/experiments/results.json, the table in docs/EXPERIMENTS.md, and each finished run's
// config.json, metrics.jsonl and eval.json under docs/experiments/<OUT's name>/ (ARCHIVE=).
// Options (env): STEPS=100 SEEDS=1,2,3 JOBS=1 STAGE_STEPS=10 CHECKPOINT=public/checkpoints/tiny
// SINGLE_CHECKPOINT=public/checkpoints/tiny-single EVAL_TASKS=50 EVAL_EVERY= OUT=runs/experiments
// DOC=docs/EXPERIMENTS.md RESULTS=docs/experiments/results.json ARMS=core,single,...
// TABLE_ONLY=1 (rewrite the table from the runs on disk; a dry run: OUT=/tmp/x DOC=/tmp/x.md
// RESULTS=/tmp/x.json STEPS=1 ...)
// WORLD=examples: the examples task set (issue 30): its suites (examples, examples-length,
// examples-compose), its warm start (public/checkpoints/tiny-examples), runs under
// runs/experiments-examples, results-examples.json and its own table in the DOC. Its arms are
// those with a warm start for it: warm-start(-single), single (tiny-examples-single: the Coder
// alone, warmstart --coder-alone --task-set examples), single-2x (tiny-examples-single-2x: the
// same with preset tiny-2x, the pair's parameters in one model), self-plan
// (tiny-examples-self-plan: warmstart --self-plan, plan <|code|> program in one sequence),
// frozen-planner, core, core-sees-plan. On the procedural world single-2x and self-plan start
// from public/checkpoints/tiny-single-2x and tiny-self-plan.
import { spawn } from 'node:child_process';
import { copyFileSync, existsSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { dirname, join } from 'node:path';

const EXAMPLES = (process.env.WORLD ?? 'procedural') === 'examples';
const STEPS = Number(process.env.STEPS ?? 100);
const SEEDS = (process.env.SEEDS ?? '1,2,3').split(',').map(Number);
const JOBS = Number(process.env.JOBS ?? 1);
const CHECKPOINT =
  process.env.CHECKPOINT ??
  (EXAMPLES ? 'public/checkpoints/tiny-examples' : 'public/checkpoints/tiny');
const SINGLE_CHECKPOINT =
  process.env.SINGLE_CHECKPOINT ??
  (EXAMPLES ? 'public/checkpoints/tiny-examples-single' : 'public/checkpoints/tiny-single');
const SELF_PLAN_CHECKPOINT =
  process.env.SELF_PLAN_CHECKPOINT ??
  (EXAMPLES ? 'public/checkpoints/tiny-examples-self-plan' : 'public/checkpoints/tiny-self-plan');
const EVAL_TASKS = Number(process.env.EVAL_TASKS ?? 50);
// K of the alternating arm: steps per stage (the Planner's K, then the Coder's K, …).
const STAGE_STEPS = Number(process.env.STAGE_STEPS ?? 10);
const ROOT = process.env.OUT ?? (EXAMPLES ? 'runs/experiments-examples' : 'runs/experiments');
const DOC = process.env.DOC ?? 'docs/EXPERIMENTS.md';
// Where each finished run's config, metrics and evaluation are copied (archiveRuns).
const ARCHIVE = process.env.ARCHIVE ?? join('docs/experiments', ROOT.split('/').at(-1));
const RESULTS =
  process.env.RESULTS ??
  (EXAMPLES ? 'docs/experiments/results-examples.json' : 'docs/experiments/results.json');
const SUITES = EXAMPLES
  ? ['examples-length', 'examples-compose', 'examples']
  : ['heldout', 'L1', 'L2', 'L3', 'L4', 'L5'];
// The suites the differences and the per-run gains are shown for.
const KEY_SUITES = EXAMPLES ? SUITES : ['heldout', 'L5'];
// The table's markers in the DOC: each world has its own table.
const MARK = EXAMPLES ? 'experiments-examples' : 'experiments';

// N and M of the run defaults (src/rl/config.ts); every other setting is the CLI's default.
// The table reports each run's programs and tokens per step from its own config and metrics,
// so a drift here shows.
const DEFAULTS = { plansPerTask: 4, programsPerPlan: 2 };
// β = 0.001 instead of the default 0, in every arm alike, only so the k3 KL to the warm start is
// measured (how far the policies moved); at KL ≈ 1e-3 the penalty is ~1e-6 of the loss.
const COMMON = [
  '--eval-tasks',
  String(EVAL_TASKS),
  // EVAL_EVERY=0: only the final evaluation (long runs spend less on the periodic ones).
  ...(process.env.EVAL_EVERY ? ['--eval-every', process.env.EVAL_EVERY] : []),
  '--final-eval',
  '--backend',
  'wasm',
  '--beta',
  '0.001',
  ...(EXAMPLES ? ['--task-set', 'examples'] : []),
];
const collaborative = [
  '--plans',
  String(DEFAULTS.plansPerTask),
  '--programs',
  String(DEFAULTS.programsPerPlan),
];

// The Coder alone samples N·M programs per task where the pair samples N plans × M programs.
const alone = [
  '--mode',
  'single',
  '--plans',
  '1',
  '--programs',
  String(DEFAULTS.plansPerTask * DEFAULTS.programsPerPlan),
];

/** Each arm: what the CLI adds to the defaults, and the warm start it starts from. */
const ARMS = {
  'warm-start': {
    args: [...collaborative, '--mode', 'core'],
    checkpoint: CHECKPOINT,
    evalOnly: true,
  },
  'warm-start-single': {
    args: alone,
    checkpoint: SINGLE_CHECKPOINT,
    evalOnly: true,
  },
  'warm-start-single-2x': {
    args: alone,
    checkpoint: `${SINGLE_CHECKPOINT}-2x`,
    evalOnly: true,
    label: 'warm start, one model with the pair’s parameters',
  },
  'warm-start-self-plan': {
    args: ['--mode', 'self-plan', ...alone.slice(2)],
    checkpoint: SELF_PLAN_CHECKPOINT,
    evalOnly: true,
    label: 'warm start, self-plan (plan, then code)',
  },
  single: {
    args: alone,
    checkpoint: SINGLE_CHECKPOINT,
  },
  // Issue 30's fair single agents: one model with the pair's parameter count (preset tiny-2x,
  // the Coder alone), and one model writing plan <|code|> program in one sequence (the pair's
  // token budget, one policy), each warm-started with the single arm's budget.
  'single-2x': {
    args: alone,
    checkpoint: `${SINGLE_CHECKPOINT}-2x`,
    label: 'single-2x (one model, the pair’s parameters)',
  },
  'self-plan': {
    args: ['--mode', 'self-plan', ...alone.slice(2)],
    checkpoint: SELF_PLAN_CHECKPOINT,
    label: 'self-plan (one model: plan, then code)',
  },
  'frozen-planner': {
    args: [...collaborative, '--mode', 'frozen-planner'],
    checkpoint: CHECKPOINT,
  },
  core: { args: [...collaborative, '--mode', 'core'], checkpoint: CHECKPOINT },
  // Issue 30: the Coder reads only the signature and the plan, so the plan must carry the task.
  'core-sees-plan': {
    args: [...collaborative, '--mode', 'core', '--coder-sees', 'plan'],
    checkpoint: CHECKPOINT,
    label: 'CoRe, the Coder sees only signature + plan',
  },
  // Issue 24: CoRe without Coder RL (the Planner learns against a fixed Coder); CoRe with the
  // roles in alternating stages of STAGE_STEPS steps; CoRe paying a plan its best program.
  'frozen-coder': {
    args: [...collaborative, '--mode', 'frozen-coder'],
    checkpoint: CHECKPOINT,
    label: 'frozen Coder, GRPO on the Planner',
  },
  alternating: {
    args: [
      ...collaborative,
      '--mode',
      'core',
      '--schedule',
      'alternating',
      '--stage-steps',
      String(STAGE_STEPS),
    ],
    checkpoint: CHECKPOINT,
    label: `CoRe, alternating stages (K = ${STAGE_STEPS})`,
  },
  'core-best-credit': {
    args: [...collaborative, '--mode', 'core', '--planner-credit', 'best'],
    checkpoint: CHECKPOINT,
    label: 'CoRe, Planner credit best-of-M',
  },
  // Issue 14: CoRe with a Debugger (D repairs of up to 8 failing programs per step, paid the
  // improvement) and with a Retriever (one of BM25's K = 4 train-split examples per plan,
  // learned); their warm starts sit in CHECKPOINT/debugger, retriever, planner-retrieval.
  'core+debugger': {
    args: [...collaborative, '--mode', 'core', '--agents', 'planner,coder,debugger'],
    checkpoint: CHECKPOINT,
    label: 'CoRe + Debugger',
  },
  'core+retriever': {
    args: [...collaborative, '--mode', 'core', '--agents', 'retriever,planner,coder'],
    checkpoint: CHECKPOINT,
    label: 'CoRe + Retriever',
  },
};
const EXAMPLES_ARMS = [
  'warm-start',
  'warm-start-single',
  'warm-start-single-2x',
  'warm-start-self-plan',
  'single',
  'single-2x',
  'self-plan',
  'frozen-planner',
  'core',
  'core-sees-plan',
];
// By default, every arm whose warm start is on disk; ARMS= names them and fails loudly on a
// missing one.
const shipped = (arm) => existsSync(join(ARMS[arm].checkpoint, 'coder', 'model.safetensors'));
const CHOSEN = (
  process.env.ARMS ?? (EXAMPLES ? EXAMPLES_ARMS : Object.keys(ARMS)).filter(shipped).join(',')
).split(',');
if (!process.env.ARMS) {
  const missing = (EXAMPLES ? EXAMPLES_ARMS : Object.keys(ARMS)).filter((arm) => !shipped(arm));
  if (missing.length > 0)
    console.log(`arms without a warm start on disk, left out: ${missing.join(', ')}`);
}

function runArgs(arm, seed) {
  const out = join(ROOT, `${arm}-s${seed}`);
  const spec = ARMS[arm];
  const base = [...spec.args, '--checkpoint', spec.checkpoint, ...COMMON, '--out', out];
  // The warm-start rows: zero GRPO steps, evaluated like the arms they start.
  if (spec.evalOnly) return { out, args: [...base, '--steps', '0', '--seed', '1'] };
  const resumable =
    existsSync(join(out, 'snapshot', 'run.json')) && existsSync(join(out, 'config.json'));
  if (resumable) return { out, args: ['--resume', out] };
  return { out, args: [...base, '--steps', String(STEPS), '--seed', String(seed)] };
}

function train(arm, seed) {
  const { out, args } = runArgs(arm, seed);
  if (existsSync(join(out, 'eval.json'))) return Promise.resolve();
  const started = Date.now();
  console.log(`start ${arm} seed ${seed}: npm run --silent train -- grpo ${args.join(' ')}`);
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, ['scripts/cli.mjs', 'train', 'grpo', ...args], {
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

const seedsOf = (arm) => (ARMS[arm].evalOnly ? [1] : SEEDS);
// Seed-major, so a cut-off session still has every arm at seed 1.
const jobs = [
  ...CHOSEN.filter((arm) => ARMS[arm].evalOnly).map((arm) => () => train(arm, 1)),
  ...SEEDS.flatMap((seed) =>
    CHOSEN.filter((arm) => !ARMS[arm].evalOnly).map((arm) => () => train(arm, seed)),
  ),
];
// TABLE_ONLY=1 rewrites the table from the runs on disk without starting any.
if (process.env.TABLE_ONLY !== '1') {
  const started = Date.now();
  await pool(jobs, JOBS);
  console.log(`all runs done in ${((Date.now() - started) / 60000).toFixed(1)} min`);
}

function readJsonl(path) {
  if (!existsSync(path)) return [];
  return readFileSync(path, 'utf8')
    .split('\n')
    .filter((line) => line.trim() !== '')
    .map((line) => JSON.parse(line));
}

const mean = (xs) => xs.reduce((a, b) => a + b, 0) / xs.length;
const stderr = (xs) =>
  xs.length > 1
    ? Math.sqrt(xs.reduce((s, x) => s + (x - mean(xs)) ** 2, 0) / (xs.length - 1) / xs.length)
    : 0;

/** One finished run as results.json writes it, or null. */
function runResult(arm, seed) {
  const dir = join(ROOT, `${arm}-s${seed}`);
  if (!existsSync(join(dir, 'eval.json'))) return null;
  const metrics = JSON.parse(readFileSync(join(dir, 'eval.json'), 'utf8')).metrics;
  const config = existsSync(join(dir, 'config.json'))
    ? JSON.parse(readFileSync(join(dir, 'config.json'), 'utf8'))
    : {};
  const steps = readJsonl(join(dir, 'metrics.jsonl')).filter((r) => r.step > 0);
  const third = Math.max(1, Math.floor(steps.length / 3));
  const lastThird = steps.slice(-third);
  const avg = (key) => {
    const values = lastThird.map((r) => r[key]).filter((v) => typeof v === 'number');
    return values.length > 0 ? mean(values) : null;
  };
  const grpo = config.grpo ?? config.config?.grpo ?? {};
  const planCount = grpo.mode === 'single' ? 0 : (grpo.plansPerTask ?? 0);
  // A frozen Coder logs no completion lengths (they come with its update): no token count then.
  const tokensPerStep =
    steps.length && steps.every((r) => 'coder/completions/mean_length' in r)
      ? mean(
          steps.map(
            (r) =>
              (grpo.tasksPerStep ?? 0) *
                (planCount * (r['planner/completions/mean_length'] ?? 0) +
                  Math.max(1, planCount) *
                    (grpo.programsPerPlan ?? 0) *
                    (r['coder/completions/mean_length'] ?? 0)) +
              // The new agents' samples count too: D repairs of each repaired program, and
              // one Retriever answer per plan.
              (r['debugger/programs'] ?? 0) *
                (grpo.repairsPerProgram ?? 0) *
                (r['debugger/completions/mean_length'] ?? 0) +
              (String(grpo.agents ?? '').includes('retriever')
                ? (grpo.tasksPerStep ?? 0) *
                  planCount *
                  (r['retriever/completions/mean_length'] ?? 0)
                : 0),
          ),
        )
      : null;
  const pass = Object.fromEntries(
    SUITES.map((suite) => [suite, metrics[`eval/pass@1/${suite}`] ?? null]),
  );
  return {
    arm,
    seed,
    steps: steps.length,
    warm_start: ARMS[arm]?.checkpoint ?? null,
    'pass@1': pass,
    'pass@1_all': metrics['eval/pass@1'] ?? null,
    // The Collaboration Gain by intervention (null without a Planner: single mode): the same
    // Coder's greedy pass@1 from the Planner's plan − from another task's plan; the planner gap
    // (reference plan − own) and own − no plan; overall and per suite.
    collaboration_gain: metrics['eval/collaboration_gain'] ?? null,
    planner_gap: metrics['eval/planner_gap'] ?? null,
    plan_vs_none: metrics['eval/plan_vs_none'] ?? null,
    'pass@1_swapped_plan': metrics['eval/pass@1_swapped_plan'] ?? null,
    'pass@1_no_plan': metrics['eval/pass@1_no_plan'] ?? null,
    collaboration_gain_by_suite: Object.fromEntries(
      SUITES.map((suite) => [suite, metrics[`eval/collaboration_gain/${suite}`] ?? null]),
    ),
    // With a Debugger: after one repair round of the greedy programs.
    'pass@1_repair': metrics['eval/pass@1_repair'] ?? null,
    l4_exec_cost: metrics['eval/exec_cost/L4'] ?? null,
    l4_peak_memory: metrics['eval/peak_memory/L4'] ?? null,
    programs_per_step:
      (grpo.tasksPerStep ?? 0) * Math.max(1, planCount) * (grpo.programsPerPlan ?? 0),
    sampled_tokens_per_step: tokensPerStep,
    coder_kl: avg('coder/kl'),
    coder_entropy: avg('coder/entropy'),
    planner_kl: avg('planner/kl'),
    planner_entropy: avg('planner/entropy'),
    pass_fraction_first_third: steps.length
      ? mean(steps.slice(0, third).map((r) => r['coder/rewards/pass_fraction/mean'] ?? 0))
      : null,
    pass_fraction_last_third: avg('coder/rewards/pass_fraction/mean'),
  };
}

function writeTable() {
  const rows = [
    ['warm start (Planner → Coder)', 'warm-start'],
    ['warm start, Coder alone (statement → code)', 'warm-start-single'],
    ['single-agent GRPO (Coder alone)', 'single'],
    ['frozen Planner, GRPO on the Coder', 'frozen-planner'],
    ['CoRe (both roles, collaborative credit)', 'core'],
    ...Object.keys(ARMS)
      .filter(
        (arm) =>
          !['warm-start', 'warm-start-single', 'single', 'frozen-planner', 'core'].includes(arm),
      )
      .map((arm) => [ARMS[arm].label ?? arm, arm]),
  ];
  const runs = [];
  const byArm = {};
  for (const [, arm] of rows) {
    byArm[arm] = seedsOf(arm)
      .map((seed) => runResult(arm, seed))
      .filter((r) => r !== null);
    runs.push(...byArm[arm]);
  }
  mkdirSync(dirname(RESULTS), { recursive: true });
  writeFileSync(RESULTS, `${JSON.stringify({ runs }, null, 2)}\n`);

  const fmt = (values, digits = 3) => {
    const xs = values.filter((v) => typeof v === 'number');
    if (xs.length === 0) return '–';
    return xs.length > 1
      ? `${mean(xs).toFixed(digits)} ± ${stderr(xs).toFixed(digits)}`
      : mean(xs).toFixed(digits);
  };
  const l34 = (r) =>
    r['pass@1'].L3 == null ? null : ((r['pass@1'].L3 ?? 0) + (r['pass@1'].L4 ?? 0)) / 2;
  const lines = [
    `| arm | runs | ${SUITES.map((c) => `pass@1 ${c}`).join(' | ')} | pass@1 L3+L4 | pass@1 all / after one repair | Collaboration Gain (own − swapped) / planner gap | L4 exec cost | L4 peak memory (KB) | programs / tokens per step | Coder KL / entropy (last third) | Planner KL / entropy |`,
    `|---|---|${SUITES.map(() => '---').join('|')}|---|---|---|---|---|---|---|---|`,
  ];
  for (const [label, arm] of rows) {
    const rs = byArm[arm];
    if (!CHOSEN.includes(arm) && rs.length === 0) continue;
    if (rs.length === 0) {
      lines.push(
        `| ${label} | 0/${seedsOf(arm).length} (not run yet) |${SUITES.map(() => ' – |').join('')} – | – | – | – | – | – | – | – |`,
      );
      continue;
    }
    const col = (pick, digits) => fmt(rs.map(pick), digits);
    lines.push(
      `| ${label} | ${rs.length}/${seedsOf(arm).length} | ${SUITES.map((c) => col((r) => r['pass@1'][c])).join(' | ')} | ${col(l34)} | ${col((r) => r['pass@1_all'])} / ${col((r) => r['pass@1_repair'])} | ${col((r) => r.collaboration_gain)} / ${col((r) => r.planner_gap)} | ${col((r) => r.l4_exec_cost, 1)} | ${col((r) => (r.l4_peak_memory ?? Number.NaN) / 1024, 1)} | ${ARMS[arm].evalOnly ? '–' : `${col((r) => r.programs_per_step, 0)} / ${col((r) => r.sampled_tokens_per_step, 0)}`} | ${col((r) => r.coder_kl, 4)} / ${col((r) => r.coder_entropy, 3)} | ${col((r) => r.planner_kl, 4)} / ${col((r) => r.planner_entropy, 3)} |`,
    );
  }
  // The paper's claim as a difference of arms: mean over seeds ± the standard error of the difference.
  const diff = (a, b, pick) => {
    const xa = (byArm[a] ?? []).map(pick).filter((v) => typeof v === 'number');
    const xb = (byArm[b] ?? []).map(pick).filter((v) => typeof v === 'number');
    if (xa.length < 2 || xb.length < 2) return '–';
    const d = mean(xa) - mean(xb);
    const se = Math.sqrt(stderr(xa) ** 2 + stderr(xb) ** 2);
    // No spread in either arm (every seed the same greedy answers): no standard error to count in.
    if (se === 0) return `${d >= 0 ? '+' : ''}${d.toFixed(3)} (no spread over seeds)`;
    return `${d >= 0 ? '+' : ''}${d.toFixed(3)} ± ${se.toFixed(3)} (${(d / se).toFixed(1)} SE)`;
  };
  const comparisons = [
    ['core − single', 'core', 'single'],
    ['core − single-2x', 'core', 'single-2x'],
    ['core − self-plan', 'core', 'self-plan'],
    ['core-sees-plan − self-plan', 'core-sees-plan', 'self-plan'],
    ['core − frozen-planner', 'core', 'frozen-planner'],
    ['core − frozen-coder', 'core', 'frozen-coder'],
    ['alternating − core', 'alternating', 'core'],
    ['core-best-credit − core', 'core-best-credit', 'core'],
    ...Object.keys(ARMS)
      .filter((arm) => arm.startsWith('core+'))
      .map((arm) => [`${arm} − core`, arm, 'core']),
  ].filter(([, a, b]) => CHOSEN.includes(a) && CHOSEN.includes(b));
  const diffLines = [
    `| difference | ${KEY_SUITES.map((c) => `pass@1 ${c}`).join(' | ')} | pass@1 L3+L4 | pass@1 all | Collaboration Gain | L4 exec cost |`,
    `|---|${KEY_SUITES.map(() => '---').join('|')}|---|---|---|---|`,
    ...comparisons.map(
      ([label, a, b]) =>
        `| ${label} | ${KEY_SUITES.map((c) => diff(a, b, (r) => r['pass@1'][c])).join(' | ')} | ${diff(a, b, l34)} | ${diff(a, b, (r) => r['pass@1_all'])} | ${diff(a, b, (r) => r.collaboration_gain)} | ${diff(a, b, (r) => r.l4_exec_cost)} |`,
    ),
  ];
  // Every run's Collaboration Gain (the arms' means hide how the seeds spread).
  const gainLines = [
    `| arm | seed | steps | pass@1 all | swapped plan | no plan | Collaboration Gain (own − swapped) | planner gap | ${KEY_SUITES.map((c) => `gain ${c}`).join(' | ')} |`,
    `|---|---|---|---|---|---|---|---|${KEY_SUITES.map(() => '---').join('|')}|`,
    ...runs
      .filter((r) => r.collaboration_gain !== null)
      .map(
        (r) =>
          `| ${r.arm} | ${r.seed} | ${r.steps} | ${r['pass@1_all']?.toFixed(3)} | ${r['pass@1_swapped_plan']?.toFixed(3) ?? '–'} | ${r['pass@1_no_plan']?.toFixed(3) ?? '–'} | ${r.collaboration_gain >= 0 ? '+' : ''}${r.collaboration_gain.toFixed(3)} | ${r.planner_gap?.toFixed(3) ?? '–'} | ${KEY_SUITES.map((c) => r.collaboration_gain_by_suite[c]?.toFixed(3) ?? '–').join(' | ')} |`,
      ),
  ];
  const complete = rows.every(
    ([, arm]) => !CHOSEN.includes(arm) || byArm[arm].length === seedsOf(arm).length,
  );
  const table = [
    `<!-- ${MARK}:begin (written by \`${EXAMPLES ? 'WORLD=examples ' : ''}npm run experiments\`) -->`,
    complete
      ? ''
      : '**PARTIAL: some runs have not finished; rerun `npm run experiments` to complete (finished runs are kept, cut-off runs resume).**\n',
    `Settings: ${STEPS} GRPO steps per run on the run defaults, seeds ${SEEDS.join(', ')}, ${EXAMPLES ? 'the examples task set, ' : ''}warm starts \`${CHECKPOINT}\` and \`${SINGLE_CHECKPOINT}\` (single), greedy pass@1 on the first ${EVAL_TASKS} tasks of each fixed suite (and the same Coder from another task's plan, the reference plan and no plan, for the Collaboration Gain), alternating stages of ${STAGE_STEPS} steps, backend wasm; mean ± standard error over seeds. Generated ${new Date().toISOString().slice(0, 16)}Z.`,
    '',
    ...lines,
    '',
    ...diffLines,
    '',
    ...gainLines,
    `<!-- ${MARK}:end -->`,
  ].join('\n');
  const doc = existsSync(DOC) ? readFileSync(DOC, 'utf8') : '';
  const updated = doc.includes(`<!-- ${MARK}:begin`)
    ? doc.replace(new RegExp(`<!-- ${MARK}:begin[\\s\\S]*<!-- ${MARK}:end -->`), table)
    : `${doc}\n${table}\n`;
  writeFileSync(DOC, updated);
  console.log(table);
}

/**
 * Every finished run's record beside the results (config.json, metrics.jsonl, eval.json: ~85 KB
 * a run; the checkpoints, snapshot and samples stay under OUT), so the table can be checked and
 * redrawn from the repository alone.
 */
function archiveRuns() {
  for (const arm of CHOSEN) {
    for (const seed of seedsOf(arm)) {
      const from = join(ROOT, `${arm}-s${seed}`);
      if (!existsSync(join(from, 'eval.json'))) continue;
      const to = join(ARCHIVE, `${arm}-s${seed}`);
      mkdirSync(to, { recursive: true });
      for (const file of ['config.json', 'metrics.jsonl', 'eval.json']) {
        if (existsSync(join(from, file))) copyFileSync(join(from, file), join(to, file));
      }
    }
  }
}

// Last, so every helper above is defined.
writeTable();
archiveRuns();
