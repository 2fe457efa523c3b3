// The Retriever agent (retriever,planner,coder topologies): for each task BM25 proposes K
// worked examples from the train-split library; for each of the task's N plans the
// Retriever picks one (R = N choices per task, plan n reads choice n), so its GRPO group is
// the R choices of one task and its reward the mean Coder reward of the plan that followed
// (the Planner's reward for that plan), minus the format penalty for an answer that names
// no candidate (the Planner then reads BM25's top-1). With retrievalPolicy `bm25` every plan
// reads BM25's top-1 and nothing learns. Everything the Retriever adds to a step lives in
// this folder: bm25.ts, library.ts, format.ts, and here its sampling, credit and sequences.
import { contiguousGroups, groupAdvantages } from '../../rl/advantages';
import type { RetrievalPolicy, ScaleRewards } from '../../rl/config';
import type { RewardParts } from '../../rl/rewards';
import type { PolicySequence } from '../../rl/trainer';
import type { Sampler } from '../../rollout/types';
import type { Task } from '../../tasks';
import type { CharTokenizer } from '../../tokenizer';
import type { RoleCredit } from '../credit';
import { plannerPromptWithExample, type WorkedExample } from '../format';
import { type Completion, sampleCompletions } from '../rollout';
import { parseChoice, retrieverPrompt } from './format';
import type { ExampleLibrary, LibraryEntry } from './library';

export { Bm25Index, words } from './bm25';
export { parseChoice, retrieverExample, retrieverPrompt } from './format';
export {
  buildLibrary,
  ExampleLibrary,
  LIBRARY_SEED,
  LIBRARY_SIZE,
  type LibraryEntry,
  libraryEntry,
} from './library';

export interface RetrievalStep {
  /** BM25's K candidates of each task. */
  candidates: LibraryEntry[][];
  /** Per plan (task-major, t · N + n): the chosen candidate, null when the answer named none. */
  choices: (number | null)[];
  /** The example each plan read (BM25's top-1 where the choice was null). */
  examples: (WorkedExample | null)[];
  /** The Retriever's sampled answers, one per plan; null with the bm25 policy. */
  completions: Completion[] | null;
}

export interface RetrievalOptions {
  plansPerTask: number;
  candidates: number;
  policy: RetrievalPolicy;
  temperature: number;
  topK: number;
  seed: number;
  /** The Retriever's context (its prompt's candidate lines are cut to fit). */
  retrieverContext?: number;
  /**
   * The Planner's context and longest plan: an example that would not leave room for a whole
   * plan is not shown (that plan reads none).
   */
  plannerContext?: number;
  maxPlanTokens?: number;
}

export async function retrieve(
  tasks: readonly Task[],
  library: ExampleLibrary,
  agent: { sampler: Sampler | null; tokenizer: CharTokenizer },
  options: RetrievalOptions,
): Promise<RetrievalStep> {
  const N = options.plansPerTask;
  const candidates = tasks.map((t) => library.candidates(t.statement, options.candidates));
  const tok = agent.tokenizer;
  const fits = (task: Task, example: WorkedExample | null): WorkedExample | null =>
    example &&
    plannerPromptWithExample(tok, task.statement, example).length + (options.maxPlanTokens ?? 0) <=
      (options.plannerContext ?? Number.POSITIVE_INFINITY)
      ? example
      : null;
  if (options.policy === 'bm25' || !agent.sampler) {
    const choices = tasks.flatMap((_, t) =>
      Array.from({ length: N }, () => ((candidates[t]?.length ?? 0) > 0 ? 0 : null)),
    );
    return {
      candidates,
      choices,
      examples: choices.map((c, i) =>
        c === null ? null : fits(tasks[Math.floor(i / N)]!, candidates[Math.floor(i / N)]![c]!),
      ),
      completions: null,
    };
  }
  const prompts = tasks.flatMap((task, t) =>
    Array.from({ length: N }, () =>
      retrieverPrompt(tok, task.statement, candidates[t]!, options.retrieverContext),
    ),
  );
  const completions = await sampleCompletions(agent.sampler, tok, prompts, {
    maxNewTokens: 2,
    temperature: options.temperature,
    topK: options.topK,
    seed: options.seed,
  });
  const choices = completions.map((c, i) =>
    parseChoice(c.text, candidates[Math.floor(i / N)]!.length),
  );
  const examples = choices.map((c, i) => {
    const list = candidates[Math.floor(i / N)]!;
    return fits(tasks[Math.floor(i / N)]!, list[c ?? 0] ?? null);
  });
  return { candidates, choices, examples, completions };
}

/**
 * The Retriever's credit: choice i's reward is `planRewards[i]` (the mean Coder reward of the
 * plan written with its example) minus `formatPenalty` when the choice named no candidate;
 * groups are the N choices of each task.
 */
export function retrieverCredit(
  planRewards: readonly RewardParts[],
  choices: readonly (number | null)[],
  plansPerTask: number,
  formatPenalty: number,
  scale: ScaleRewards,
): RoleCredit {
  if (planRewards.length !== choices.length) {
    throw new Error(`retrieverCredit: ${choices.length} choices for ${planRewards.length} plans`);
  }
  const rewards = planRewards.map((parts, i) => {
    const penalty = choices[i] === null ? formatPenalty : 0;
    return {
      ...parts,
      formatPenalty: parts.formatPenalty + penalty,
      total: parts.total - penalty,
    };
  });
  return {
    rewards,
    advantages: groupAdvantages(
      rewards.map((p) => p.total),
      contiguousGroups(rewards.length, plansPerTask),
      scale,
    ),
  };
}

export function retrieverSequences(step: RetrievalStep, credit: RoleCredit): PolicySequence[] {
  if (!step.completions) return [];
  return step.completions.map((c, i) => ({
    prompt: c.prompt,
    completion: c.tokens,
    oldLogProbs: c.logProbs,
    advantage: credit.advantages.advantages[i] ?? 0,
  }));
}
