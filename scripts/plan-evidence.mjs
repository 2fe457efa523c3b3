// `node scripts/plan-evidence.mjs [RUNS]`: where the examples world's plans go wrong (issue 30).
// For every finished run of `WORLD=examples npm run experiments` (RUNS, default
// runs/experiments-examples/<arm>-s<seed>/eval.json), each suite's greedy plans against the
// task's reference plan (public/tasks/examples/suite-*.json): the share that is exactly the
// reference, that has the reference's number of steps, whose first step is the reference's,
// the share of reference steps named at their place, and pass@1 when the plan is exact and
// when it is not. Pooled over seeds (tasks × seeds), one row per arm and suite, as markdown.
// Arms without plans (single, single-2x) have none to score and are left out.
import { existsSync, readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';

const ROOT = process.argv[2] ?? 'runs/experiments-examples';
const SUITES = ['examples', 'examples-length', 'examples-compose'];

const reference = new Map();
for (const suite of SUITES) {
  const file = JSON.parse(readFileSync(`public/tasks/examples/suite-${suite}.json`, 'utf8'));
  for (const task of file.tasks) reference.set(task.id, task.strategies[0].plan);
}

/** A plan's steps without their numbers ("1. sort them" → "sort them"). */
const steps = (plan) =>
  plan
    .split('\n')
    .map((line) => line.replace(/^\s*\d+\.\s*/, '').trim())
    .filter((line) => line !== '');

const rows = new Map();
for (const dir of readdirSync(ROOT).sort()) {
  const file = join(ROOT, dir, 'eval.json');
  if (!existsSync(file)) continue;
  const arm = dir.replace(/-s\d+$/, '');
  const evaluation = JSON.parse(readFileSync(file, 'utf8'));
  for (const suite of SUITES) {
    const examples = evaluation.suites?.[suite]?.examples ?? [];
    if (examples.every((e) => e.plan === '')) continue; // no Planner, no plan of its own
    const key = `${arm}|${suite}`;
    const row = rows.get(key) ?? {
      arm,
      suite,
      seeds: new Set(),
      n: 0,
      exact: 0,
      length: 0,
      first: 0,
      stepsNamed: 0,
      stepsTotal: 0,
      passExact: [0, 0],
      passOther: [0, 0],
    };
    row.seeds.add(dir);
    for (const e of examples) {
      const want = steps(reference.get(e.id) ?? '');
      const got = steps(e.plan);
      const exact = want.join('\n') === got.join('\n');
      row.n++;
      if (exact) row.exact++;
      if (got.length === want.length) row.length++;
      if (got[0] !== undefined && got[0] === want[0]) row.first++;
      row.stepsNamed += want.filter((step, i) => got[i] === step).length;
      row.stepsTotal += want.length;
      const bucket = exact ? row.passExact : row.passOther;
      bucket[0] += e.passed ? 1 : 0;
      bucket[1]++;
    }
    rows.set(key, row);
  }
}

const share = (a, b) => (b === 0 ? '–' : (a / b).toFixed(2));
console.log(
  '| arm | suite | runs | plans | exact | right number of steps | first step right | reference steps named in place | pass@1, exact plan | pass@1, other plans |',
);
console.log('|---|---|---|---|---|---|---|---|---|---|');
for (const r of rows.values()) {
  console.log(
    `| ${r.arm} | ${r.suite} | ${r.seeds.size} | ${r.n} | ${share(r.exact, r.n)} | ${share(r.length, r.n)} | ${share(r.first, r.n)} | ${share(r.stepsNamed, r.stepsTotal)} | ${share(...r.passExact)} (${r.passExact[1]}) | ${share(...r.passOther)} (${r.passOther[1]}) |`,
  );
}
