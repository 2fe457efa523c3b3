// Warm starts for the Debugger and the Retriever (`npm run warmstart-agents`), engine code:
// - the Debugger starts from the Coder's weights and learns, on train-split tasks, to turn a
//   mutated reference program (an operator, a bound, a constant, a missing step) with the
//   sandbox's report of its first failing test back into the reference program;
// - the Retriever starts from the Planner's weights and learns to answer, among K library
//   candidates (shuffled), the one sharing most steps with the task (ties: the earliest);
// - the Planner that reads examples ("planner-retrieval"): the Planner continued on
//   example-first prompts (BM25's top-1 with the reference plan), half of them, the other
//   half plain, so it still plans without one.
// Examples come only from the train split; the library is the session's own.
import type { LoadedCheckpoint } from '../model';
import { loadCheckpoint, saveCheckpoint } from '../model';
import { passesAll } from '../rl/rewards';
import type { Sandbox } from '../sandbox/types';
import { BucketedBatches } from '../sft/batches';
import { DEFAULT_SFT, runSft, type SftProgress } from '../sft/trainer';
import { createTaskSampler, type Task } from '../tasks';
import { Rng } from '../tasks/random';
import { debuggerExample, failureReport } from './debugger';
import { MUTATION_KINDS, mutate } from './debugger/mutate';
import { plannerPromptWithExample, type RoleExample } from './format';
import { judgePrograms } from './judge';
import { buildLibrary, type ExampleLibrary, retrieverExample } from './retriever';

export interface AgentWarmStartOptions {
  /** SFT steps per agent. */
  steps: number;
  seed: number;
  batchSize?: number;
  candidates?: number;
  /** Peak learning rate (fine-tuning from trained weights: lower than a warm start from scratch). */
  peakLr?: number;
  onProgress?: (agent: string, progress: SftProgress) => void;
}

const TIER_MIX = { L1: 1, L2: 2, L3: 2, L4: 1 };

async function copyOf(from: LoadedCheckpoint, note: string): Promise<LoadedCheckpoint> {
  return loadCheckpoint(
    await saveCheckpoint(from.model, from.tokenizer, { ...from.lab, from: note }),
  );
}

/** Mutated reference programs that fail a test, with their report, → the reference (train split). */
export async function debuggerExamples(
  tasks: readonly Task[],
  sandbox: Sandbox,
  seed: number,
): Promise<{ statement: string; plan: string; program: string; report: string; repair: string }[]> {
  const rng = new Rng(seed);
  const drafts = tasks.flatMap((task) => {
    const strategy = task.strategies[rng.below(task.strategies.length)]!;
    // The first kind (from a seeded start) that has a site in this program.
    const first = rng.below(MUTATION_KINDS.length);
    for (let k = 0; k < MUTATION_KINDS.length; k++) {
      const kind = MUTATION_KINDS[(first + k) % MUTATION_KINDS.length]!;
      const program = mutate(strategy.code, kind, rng);
      if (program && program !== strategy.code) return [{ task, strategy, program }];
    }
    return [];
  });
  const judged = await judgePrograms(
    sandbox,
    drafts.map((d) => ({ task: d.task, completion: d.program })),
  );
  return drafts.flatMap((d, i) => {
    const j = judged[i]!;
    if (passesAll(j.outcome)) return [];
    const report = failureReport(d.task, j.run);
    if (!report) return [];
    return [
      {
        statement: d.task.statement,
        plan: d.strategy.plan,
        program: d.program,
        report,
        repair: d.strategy.code,
      },
    ];
  });
}

/** Steps two step signatures share (as multisets). */
export function sharedSteps(a: readonly string[], b: readonly string[]): number {
  const left = [...b];
  let shared = 0;
  for (const step of a) {
    const at = left.indexOf(step);
    if (at >= 0) {
      shared++;
      left.splice(at, 1);
    }
  }
  return shared;
}

export function retrieverExamples(
  tasks: readonly Task[],
  library: ExampleLibrary,
  k: number,
  seed: number,
  tok: LoadedCheckpoint['tokenizer'],
): RoleExample[] {
  const rng = new Rng(seed);
  return tasks.flatMap((task) => {
    const candidates = rng.shuffle(library.candidates(task.statement, k));
    if (candidates.length < 2) return [];
    const overlap = candidates.map((c) => sharedSteps(task.steps, c.steps));
    const best = overlap.indexOf(Math.max(...overlap));
    return [retrieverExample(tok, task.statement, candidates, best)];
  });
}

export async function warmStartAgents(
  base: { planner: LoadedCheckpoint; coder: LoadedCheckpoint },
  sandbox: Sandbox,
  options: AgentWarmStartOptions,
): Promise<{
  debugger: LoadedCheckpoint;
  retriever: LoadedCheckpoint;
  plannerRetrieval: LoadedCheckpoint;
}> {
  const { steps, seed, batchSize = 16, candidates = 4, peakLr = 1e-3 } = options;
  const prng = new Rng(seed);
  const tok = base.coder.tokenizer;
  const library = buildLibrary();
  const sampler = createTaskSampler({ mix: TIER_MIX, split: 'train', seed: prng.fork() });
  const train = async (
    agent: string,
    checkpoint: LoadedCheckpoint,
    pool: RoleExample[],
  ): Promise<void> => {
    if (pool.length === 0) throw new Error(`warm start: no ${agent} examples`);
    let next = 0;
    const source = (n: number) => Array.from({ length: n }, () => pool[next++ % pool.length]!);
    const batches = new BucketedBatches(
      source,
      batchSize,
      prng.fork(),
      8,
      checkpoint.model.config.nCtx,
    );
    await runSft(
      checkpoint.model,
      () => batches.next(),
      { ...DEFAULT_SFT, peakLr, warmupSteps: 20, steps, padId: tok.padId, logEvery: 20 },
      (progress) => options.onProgress?.(agent, progress),
    );
  };

  const debuggerModel = await copyOf(base.coder, 'coder');
  const repairs = await debuggerExamples(
    sampler.next(Math.max(600, steps * 4)),
    sandbox,
    prng.fork(),
  );
  await train(
    'debugger',
    debuggerModel,
    repairs.map((item) => debuggerExample(tok, item)),
  );
  debuggerModel.lab = {
    ...debuggerModel.lab,
    agentWarmStart: { steps, seed, examples: repairs.length },
  };

  const retrieverModel = await copyOf(base.planner, 'planner');
  const choices = retrieverExamples(
    sampler.next(Math.max(600, steps * 4)),
    library,
    candidates,
    prng.fork(),
    tok,
  );
  await train('retriever', retrieverModel, choices);
  retrieverModel.lab = {
    ...retrieverModel.lab,
    agentWarmStart: { steps, seed, examples: choices.length },
  };

  const plannerModel = await copyOf(base.planner, 'planner');
  const planTasks = sampler.next(Math.max(600, steps * 4));
  const plans = planTasks.map((task, i): RoleExample => {
    const strategy = task.strategies[i % task.strategies.length]!;
    const example = i % 2 === 0 ? (library.candidates(task.statement, 1)[0] ?? null) : null;
    return {
      prompt: plannerPromptWithExample(tok, task.statement, example),
      answer: [...tok.encode(strategy.plan), tok.eosId],
    };
  });
  await train('planner-retrieval', plannerModel, plans);
  plannerModel.lab = {
    ...plannerModel.lab,
    agentWarmStart: { steps, seed, examples: plans.length },
  };

  return { debugger: debuggerModel, retriever: retrieverModel, plannerRetrieval: plannerModel };
}
