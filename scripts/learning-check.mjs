// `node scripts/learning-check.mjs DIR...`: is a run learning? For each headless run folder
// (npm run train -- grpo ... --out DIR), the sampled programs' pass fraction
// (coder/rewards/pass_fraction/mean) averaged over the first and the last third of its steps,
// the difference in standard errors, and the quick evaluation at step 0 against the final
// one (metrics.jsonl's step-0 line, eval.json). The bar (issue 24's; issue 12's was 2): last
// third > first third by more than 2.5 standard errors (Z_BAR=… to change it), and the final
// evaluation above step 0's, in every seed.
import { existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';

const KEY = 'coder/rewards/pass_fraction/mean';
const Z_BAR = Number(process.env.Z_BAR ?? 2.5);

function meanAndSe(values) {
  const n = values.length;
  const mean = values.reduce((a, b) => a + b, 0) / n;
  const variance = n > 1 ? values.reduce((a, b) => a + (b - mean) ** 2, 0) / (n - 1) : 0;
  return { mean, se: Math.sqrt(variance / n), n };
}

const rows = [];
for (const dir of process.argv.slice(2)) {
  const lines = readFileSync(join(dir, 'metrics.jsonl'), 'utf8').trim().split('\n');
  const records = lines.map((line) => JSON.parse(line));
  const steps = records.filter((r) => r.step > 0 && KEY in r);
  const third = Math.max(1, Math.floor(steps.length / 3));
  const first = meanAndSe(steps.slice(0, third).map((r) => r[KEY]));
  const last = meanAndSe(steps.slice(-third).map((r) => r[KEY]));
  const z = (last.mean - first.mean) / Math.sqrt(first.se ** 2 + last.se ** 2 || 1e-12);
  const atStart = records.find((r) => r.step === 0)?.['eval/pass@1'];
  // The final evaluation (eval.json, --final-eval or --minutes), else the last step's periodic one.
  const final = existsSync(join(dir, 'eval.json'))
    ? JSON.parse(readFileSync(join(dir, 'eval.json'), 'utf8')).metrics?.['eval/pass@1']
    : records.findLast((r) => r.step > 0 && 'eval/pass@1' in r)?.['eval/pass@1'];
  rows.push({
    run: dir,
    steps: steps.length,
    first_third: Number(first.mean.toFixed(3)),
    last_third: Number(last.mean.toFixed(3)),
    z: Number(z.toFixed(2)),
    eval_step0: atStart,
    eval_final: final,
    learning: z > Z_BAR && final !== undefined && atStart !== undefined && final > atStart,
  });
}
console.table(rows);
