// `npx vite-node scripts/agents-check.ts [public/checkpoints/tiny]`: how good the Debugger's
// and the Retriever's warm starts are before any GRPO (the table in
// public/checkpoints/tiny/README.md), greedy, on VALIDATION tasks:
// - the Debugger's fix rate on one-mutation breaks of reference programs (and the Coder's
//   weights in its place);
// - how often the Retriever's choice (and BM25's top-1) shares most steps with the task;
// - the Planner's plan_exact with and without a worked example (plain and adapted Planner).
import { debuggerPrompt } from '../src/agents/debugger';
import { completionText, plannerPromptWithExample } from '../src/agents/format';
import { judgePrograms } from '../src/agents/judge';
import { buildLibrary, parseChoice, retrieverPrompt } from '../src/agents/retriever';
import { debuggerExamples, sharedSteps } from '../src/agents/warmStartAgents';
import { initBackend } from '../src/gpu/backend';
import { loadCheckpointDir } from '../src/model/checkpointNode';
import { passesAll } from '../src/rl/rewards';
import { KvCacheSampler } from '../src/rollout/kvSampler';
import type { SampleOptions } from '../src/rollout/types';
import { createSandbox } from '../src/sandbox/nodeSandbox';
import { generateTasks } from '../src/tasks';

await initBackend('wasm');
const dir = process.argv[2] ?? 'public/checkpoints/tiny';
const sandbox = await createSandbox();
const library = buildLibrary();
const greedy = (maxNewTokens: number, stopId: number): SampleOptions => ({
  maxNewTokens,
  temperature: 0,
  topK: 0,
  seed: 1,
  stopId,
});

// The Debugger on mutated validation references.
const tasks = generateTasks({
  tiers: ['L1', 'L2', 'L3', 'L4'],
  split: 'validation',
  count: 200,
  seed: 77,
});
const items = (await debuggerExamples(tasks, sandbox, 5)).slice(0, 150);
for (const name of ['debugger', 'coder']) {
  const { model, tokenizer: tok } = await loadCheckpointDir(`${dir}/${name}`);
  const out = await new KvCacheSampler(model).sample(
    items.map((e) => debuggerPrompt(tok, e.statement, e.plan, e.program, e.report)),
    greedy(96, tok.eosId),
  );
  const judged = await judgePrograms(
    sandbox,
    items.map((e, i) => ({
      task: tasks.find((t) => t.statement === e.statement)!,
      completion: completionText(tok, out.tokens[i]!),
    })),
  );
  const fixed = judged.filter((j) => passesAll(j.outcome)).length;
  console.log(
    JSON.stringify({
      check: 'repair mutated validation references',
      weights: name,
      mutants: items.length,
      fixRate: fixed / items.length,
    }),
  );
}

// The Retriever's choices.
{
  const queries = generateTasks({ tiers: ['L2', 'L3'], split: 'validation', count: 200, seed: 11 });
  const { model, tokenizer: tok } = await loadCheckpointDir(`${dir}/retriever`);
  const lists = queries.map((t) => library.candidates(t.statement, 4));
  const out = await new KvCacheSampler(model).sample(
    queries.map((t, i) => retrieverPrompt(tok, t.statement, lists[i]!)),
    greedy(2, tok.eosId),
  );
  let learned = 0;
  let top1 = 0;
  let valid = 0;
  let tied = 0;
  queries.forEach((t, i) => {
    const overlap = lists[i]!.map((c) => sharedSteps(t.steps, c.steps));
    const best = Math.max(...overlap);
    const choice = parseChoice(completionText(tok, out.tokens[i]!), lists[i]!.length);
    if (choice !== null) valid++;
    if (overlap[choice ?? 0] === best) learned++;
    if (overlap[0] === best) top1++;
    if (overlap.every((o) => o === best)) tied++;
  });
  const n = queries.length;
  console.log(
    JSON.stringify({
      check: 'retriever picks most shared steps',
      tasks: n,
      validChoice: valid / n,
      learned: learned / n,
      bm25Top1: top1 / n,
      allTied: tied / n,
    }),
  );
}

// The Planner with and without a worked example.
{
  const planned = generateTasks({ tiers: ['L1', 'L2'], split: 'validation', count: 40, seed: 7 });
  for (const name of ['planner', 'planner-retrieval']) {
    const { model, tokenizer: tok } = await loadCheckpointDir(`${dir}/${name}`);
    for (const withExample of [false, true]) {
      const out = await new KvCacheSampler(model).sample(
        planned.map((t) =>
          plannerPromptWithExample(
            tok,
            t.statement,
            withExample ? (library.candidates(t.statement, 1)[0] ?? null) : null,
          ),
        ),
        greedy(64, tok.eosId),
      );
      const exact = planned.filter((t, i) =>
        t.strategies.some((s) => s.plan === completionText(tok, out.tokens[i]!)),
      ).length;
      console.log(
        JSON.stringify({
          check: 'plan exact',
          weights: name,
          withExample,
          tasks: planned.length,
          exact: exact / planned.length,
        }),
      );
    }
  }
}
await sandbox.close();
process.exit(0);
