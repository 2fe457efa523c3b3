// `node scripts/paired-checked.mjs FIRST.json[,FIRST2.json…] OTHER.json[,OTHER2.json…] …`: the
// examples-checked pass@1 of several arms on the same tasks, compared pairwise (issue 30,
// EXPERIMENTS §7). Each argument is one arm: comma-separated `npm run --silent eval -- … --samples
// K --json --show` reports, one per sampling seed, over the same suite. Prints each arm's mean
// over seeds, then the first arm minus each other arm with a standard error clustered by task
// (each task's difference averaged over the seeds first: the seeds of one task are not
// independent).
import { readFileSync } from 'node:fs';

const arms = process.argv.slice(2);
if (arms.length < 2) {
  console.error('usage: node scripts/paired-checked.mjs ARM_A.json[,…] ARM_B.json[,…] [ARM_C…]');
  process.exit(2);
}

/** One arm: for each seed's report, task id → whether its checked submission passed. */
function readArm(list) {
  return list.split(',').map((file) => {
    const report = JSON.parse(readFileSync(file, 'utf8'));
    const suites = Object.values(report.suites);
    if (suites.length !== 1) throw new Error(`${file}: one suite per report, not ${suites.length}`);
    const verdicts = new Map();
    for (const example of suites[0].examples) {
      if (example.checked === undefined)
        throw new Error(`${file}: no checked verdicts (run eval with --samples K --json --show)`);
      verdicts.set(example.id, example.checked);
    }
    return verdicts;
  });
}

const data = arms.map(readArm);
const mean = (values) => values.reduce((a, b) => a + b, 0) / values.length;
for (const [i, seeds] of data.entries()) {
  const rates = seeds.map((v) => mean([...v.values()].map(Number)));
  console.log(
    `${arms[i]}: ${mean(rates).toFixed(3)} (per seed ${rates.map((r) => r.toFixed(3)).join(', ')})`,
  );
}
const [first, ...others] = data;
for (const [j, other] of others.entries()) {
  if (other.length !== first.length) throw new Error('every arm needs the same number of seeds');
  const tasks = [...first[0].keys()];
  const perTask = tasks.map((task) =>
    mean(first.map((seed, s) => Number(seed.get(task)) - Number(other[s].get(task)))),
  );
  const d = mean(perTask);
  const sd = Math.sqrt(perTask.reduce((a, x) => a + (x - d) ** 2, 0) / (perTask.length - 1));
  const se = sd / Math.sqrt(perTask.length);
  const z = se > 0 ? (d / se).toFixed(2) : 'n/a';
  console.log(
    `first − ${arms[j + 1]}: ${d >= 0 ? '+' : ''}${d.toFixed(3)} ± ${se.toFixed(3)} (z ${z})`,
  );
}
