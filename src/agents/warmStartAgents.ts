// Warm starts for the Debugger and the Retriever (`npm run warmstart-agents`), engine code:
// - the Debugger starts from the Coder's weights and learns, on train-split tasks, to turn a
//   mutated reference program (an operator, a bound, a constant, a missing step) with the
//   sandbox's report of its first failing test back into the reference program;
// - the Retriever starts from the Planner's weights and learns to answer, among K library
//   candidates (shuffled), the one sharing most steps with the task (ties: the earliest);
// - the Planner that reads examples ("planner-retrieval"): the Planner continued on prompts
//   with a worked example (BM25's top-1 with its reference plan), half of them, the other
//   half plain, so it still plans without one.
// `agents` picks which of the three to train (all by default).
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
  /** Which to make (default all three). */
  agents?: readonly AgentWarmStart[];
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

/** The agents `npm run warmstart-agents` makes, by the folder each is saved in. */
export const AGENT_WARM_STARTS = ['debugger', 'retriever', 'planner-retrieval'] as const;
export type AgentWarmStart = (typeof AGENT_WARM_STARTS)[number];

export async function warmStartAgents(
  base: { planner: LoadedCheckpoint; coder: LoadedCheckpoint },
  sandbox: Sandbox,
  options: AgentWarmStartOptions,
): Promise<Partial<Record<AgentWarmStart, LoadedCheckpoint>>> {
  const { steps, seed, batchSize = 16, candidates = 4, peakLr = 1e-3 } = options;
  const chosen = options.agents ?? AGENT_WARM_STARTS;
  const tok = base.coder.tokenizer;
  const library = buildLibrary();
  // One seed per agent, drawn up front: each agent's warm start is the same whichever are made.
  const root = new Rng(seed);
  const seeds = Object.fromEntries(AGENT_WARM_STARTS.map((name) => [name, root.fork()])) as Record<
    AgentWarmStart,
    number
  >;
  const tasksFor = (name: AgentWarmStart, count: number) =>
    createTaskSampler({ mix: TIER_MIX, split: 'train', seed: seeds[name] }).next(count);
  const train = async (
    agent: AgentWarmStart,
    checkpoint: LoadedCheckpoint,
    pool: RoleExample[],
  ): Promise<LoadedCheckpoint> => {
    if (pool.length === 0) throw new Error(`warm start: no ${agent} examples`);
    let next = 0;
    const source = (n: number) => Array.from({ length: n }, () => pool[next++ % pool.length]!);
    const batches = new BucketedBatches(
      source,
      batchSize,
      seeds[agent] + 1,
      8,
      checkpoint.model.config.nCtx,
    );
    await runSft(
      checkpoint.model,
      () => batches.next(),
      { ...DEFAULT_SFT, peakLr, warmupSteps: 20, steps, padId: tok.padId, logEvery: 20 },
      (progress) => options.onProgress?.(agent, progress),
    );
    checkpoint.lab = {
      ...checkpoint.lab,
      agentWarmStart: { steps, seed, batchSize, peakLr, examples: pool.length },
    };
    return checkpoint;
  };

  const made: Partial<Record<AgentWarmStart, LoadedCheckpoint>> = {};
  // Distinct tasks for each: about two passes over the examples in `steps` batches.
  const distinct = Math.max(600, Math.ceil((steps * batchSize) / 2));
  if (chosen.includes('debugger')) {
    const repairs = await debuggerExamples(
      tasksFor('debugger', distinct),
      sandbox,
      seeds.debugger + 2,
    );
    made.debugger = await train(
      'debugger',
      await copyOf(base.coder, 'coder'),
      repairs.map((item) => debuggerExample(tok, item)),
    );
  }
  if (chosen.includes('retriever')) {
    const choices = retrieverExamples(
      tasksFor('retriever', distinct),
      library,
      candidates,
      seeds.retriever + 2,
      tok,
    );
    made.retriever = await train('retriever', await copyOf(base.planner, 'planner'), choices);
  }
  if (chosen.includes('planner-retrieval')) {
    const plans = tasksFor('planner-retrieval', distinct).map((task, i): RoleExample => {
      const strategy = task.strategies[i % task.strategies.length]!;
      const example = i % 2 === 0 ? (library.candidates(task.statement, 1)[0] ?? null) : null;
      return {
        prompt: plannerPromptWithExample(tok, task.statement, example),
        answer: [...tok.encode(strategy.plan), tok.eosId],
      };
    });
    made['planner-retrieval'] = await train(
      'planner-retrieval',
      await copyOf(base.planner, 'planner'),
      plans,
    );
  }
  return made;
}
