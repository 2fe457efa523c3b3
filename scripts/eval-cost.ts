// `npx vite-node scripts/eval-cost.ts [-- TASKS REPEATS]`: what the Collaboration Gain adds to
// an evaluation. On the first TASKS tasks of each fixed suite with the shipped tiny warm start
// (wasm), times each part of the evaluation: the Planner's greedy plans, the Coder's greedy
// programs from them, their sandbox batch (the evaluation as it was), and the part the gain
// adds: the Coder's greedy programs from the statement alone and their sandbox batch. Each part
// is timed REPEATS times, interleaved, and the fastest kept (a busy machine only adds time), so
// the ratio is of one run's parts; also the mean tokens each pass decodes.
import { readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { coderPrompt, completionText, plannerPrompt } from '../src/agents/format';
import { judgePrograms } from '../src/agents/judge';
import { DEFAULT_RUN_CONFIG } from '../src/engine/runConfig';
import { initBackend } from '../src/gpu/backend';
import { loadCheckpointDir } from '../src/model/checkpointNode';
import { KvCacheSampler } from '../src/rollout/kvSampler';
import { createSandbox } from '../src/sandbox/nodeSandbox';
import { loadSuite, SUITE_NAMES, type Task } from '../src/tasks';

const args = process.argv.slice(2).filter((a) => a !== '--');
const TASKS = Number(args[0] ?? DEFAULT_RUN_CONFIG.evalTasksPerTier);
const REPEATS = Number(args[1] ?? 3);
await initBackend('wasm');
const planner = await loadCheckpointDir('public/checkpoints/tiny/planner', false);
const coder = await loadCheckpointDir('public/checkpoints/tiny/coder', false);
const tok = coder.tokenizer;
const tasks: Task[] = [];
for (const name of SUITE_NAMES) {
  const file = join('public/tasks', `suite-${name}.json`);
  tasks.push(...loadSuite(await readFile(file, 'utf8')).tasks.slice(0, TASKS));
}
const { maxPlanTokens, maxProgramTokens } = DEFAULT_RUN_CONFIG.grpo;
const greedy = (maxNewTokens: number) => ({
  maxNewTokens,
  temperature: 0,
  topK: 0,
  seed: 1,
  stopId: tok.eosId,
});
const plannerSampler = new KvCacheSampler(planner.model);
const coderSampler = new KvCacheSampler(coder.model);
const sandbox = await createSandbox();
const best: Record<string, number> = {};
const tokens: Record<string, number> = {};
async function timed<T>(part: string, run: () => Promise<T>): Promise<T> {
  const start = performance.now();
  const result = await run();
  const seconds = (performance.now() - start) / 1000;
  best[part] = Math.min(best[part] ?? Number.POSITIVE_INFINITY, seconds);
  return result;
}
const decode = async (part: string, sampler: KvCacheSampler, prompts: number[][], max: number) => {
  const out = await timed(part, () => sampler.sample(prompts, greedy(max)));
  tokens[part] = out.tokens.reduce((s, t) => s + t.length, 0) / out.tokens.length;
  return out.tokens.map((ids) => completionText(tok, ids));
};
const judge = (part: string, codes: string[]) =>
  timed(part, () =>
    judgePrograms(
      sandbox,
      tasks.map((task, i) => ({ task, completion: codes[i]! })),
    ),
  );
try {
  for (let r = 0; r < REPEATS; r++) {
    const plans = await decode(
      'plans',
      plannerSampler,
      tasks.map((t) => plannerPrompt(tok, t.statement)),
      maxPlanTokens,
    );
    const fromPlans = await decode(
      'programs from the plans',
      coderSampler,
      tasks.map((t, i) => coderPrompt(tok, t.statement, plans[i]!)),
      maxProgramTokens,
    );
    await judge('sandbox, from the plans', fromPlans);
    const alone = await decode(
      'programs alone (added)',
      coderSampler,
      tasks.map((t) => coderPrompt(tok, t.statement, '')),
      maxProgramTokens,
    );
    await judge('sandbox, alone (added)', alone);
  }
} finally {
  await sandbox.close();
}
const total = (pick: (part: string) => boolean) =>
  Object.entries(best).reduce((s, [part, v]) => s + (pick(part) ? v : 0), 0);
const before = total((part) => !part.includes('added'));
const added = total((part) => part.includes('added'));
console.log(`${tasks.length} tasks (${TASKS} per suite), fastest of ${REPEATS}:`);
for (const [part, seconds] of Object.entries(best)) {
  const mean = tokens[part] !== undefined ? `, ${tokens[part]!.toFixed(1)} tokens each` : '';
  console.log(`  ${part.padEnd(26)} ${seconds.toFixed(2)} s${mean}`);
}
console.log(
  `the evaluation: ${before.toFixed(2)} s; the Coder-alone pass adds ${added.toFixed(2)} s (+${((100 * added) / before).toFixed(0)}%)`,
);
process.exit(0);
