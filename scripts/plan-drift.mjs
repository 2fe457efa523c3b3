// `node scripts/plan-drift.mjs RUN...`: what GRPO does to the plans a run samples on the examples
// task set (issue 30). For each run's samples.jsonl, split by the task's chain length (tier L1:
// one step, L2: two), in the first and the last third of its steps: the share of sampled plans
// that are exactly the task's reference plan, the share that have two or more steps, and the
// share of tasks with at least one exact plan among their N. GRPO can only reinforce a plan it
// samples, so the last column says how often a chain length gets anything to learn from.
import { readFileSync } from 'node:fs';

const lines = (plan) =>
  plan
    .trim()
    .split('\n')
    .filter((line) => line.trim() !== '');

function thirdStats(records, tier) {
  const tasks = records.filter((r) => r.tier === tier && r.plans?.length);
  let plans = 0;
  let exact = 0;
  let multi = 0;
  let anyExact = 0;
  for (const task of tasks) {
    const want = (task.reference?.[0]?.plan ?? '').trim();
    let found = false;
    for (const { plan } of task.plans) {
      if (!plan) continue; // a dropped plan (plan dropout) is no sample of the Planner's
      plans++;
      if (plan.trim() === want) {
        exact++;
        found = true;
      }
      if (lines(plan).length >= 2) multi++;
    }
    if (found) anyExact++;
  }
  const share = (n, d) => (d ? (n / d).toFixed(3) : '–');
  return `${share(exact, plans)} / ${share(multi, plans)} / ${share(anyExact, tasks.length)} (${tasks.length})`;
}

const runs = process.argv.slice(2);
if (!runs.length) {
  console.error('usage: node scripts/plan-drift.mjs RUN...');
  process.exit(2);
}
console.log(
  '| run | chain length | first third: exact / two or more steps / tasks with an exact plan (tasks) | last third |',
);
console.log('|---|---|---|---|');
for (const run of runs) {
  const records = readFileSync(`${run}/samples.jsonl`, 'utf8')
    .trim()
    .split('\n')
    .map((line) => JSON.parse(line));
  const steps = [...new Set(records.map((r) => r.step))].sort((a, b) => a - b);
  const third = Math.floor(steps.length / 3);
  const first = new Set(steps.slice(0, third));
  const last = new Set(steps.slice(steps.length - third));
  for (const [tier, label] of [
    ['L1', 'one step'],
    ['L2', 'two steps'],
  ])
    console.log(
      `| ${run} | ${label} | ${thirdStats(
        records.filter((r) => first.has(r.step)),
        tier,
      )} | ${thirdStats(
        records.filter((r) => last.has(r.step)),
        tier,
      )} |`,
    );
}
