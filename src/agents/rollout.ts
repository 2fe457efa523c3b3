// One step's rollouts for the Planner → Coder topology: for each task the Planner samples
// N plans, and for each plan the Coder samples M programs. In `single` mode there is no
// Planner: the Coder reads the statement with an empty plan (coderPrompt(tok, s, '')), N = 1.
// In `self-plan` mode the one model (in the Coder's place) writes plan, <|code|> and program
// in one sequence from the Planner's prompt (selfPlan.ts), N = 1.
// Prompts are the warm start's formats (src/agents/format.ts), so RL continues what SFT taught;
// over a pretrained base they are its chat template's (agents/chatPrompts.ts, `prompts`).
import type { CoderSees } from '../rl/config';
import type { Sampler } from '../rollout/types';
import type { Task } from '../tasks';
import type { CharTokenizer } from '../tokenizer';
import { coderView } from './coderView';
import { completionText, plannerPromptWithExample, type WorkedExample } from './format';
import { labPrompts, type RolePrompts } from './rolePrompts';
import { selfPlanPrompt, selfPlanTokens, splitSelfPlan } from './selfPlan';

/** One sampled completion with what the trainer needs to score it again. */
export interface Completion {
  prompt: number[];
  /** Generated tokens, ending with <|endoftext|> when `finished`. */
  tokens: number[];
  /** log π_old(token) at sampling time, one per token. */
  logProbs: number[];
  finished: boolean;
  /** Decoded text without the end token (self-plan: the program after <|code|>). */
  text: string;
  /** Self-plan: the plan the sequence wrote before <|code|>. */
  plan?: string;
}

/** A task's rollouts: N plans (one empty pseudo-plan in single mode) × M programs each. */
export interface TaskRollout {
  task: Task;
  /** Sampled plans; null in single mode (the Coder got an empty plan). */
  plans: Completion[] | null;
  /** programs[n][m]: the m-th program written from plan n. */
  programs: Completion[][];
  /** Plan dropout: droppedPlans[n] true when plan n's programs were written from an empty plan. */
  droppedPlans?: boolean[];
}

export interface RolloutOptions {
  plansPerTask: number;
  programsPerPlan: number;
  maxPlanTokens: number;
  maxProgramTokens: number;
  temperature: number;
  topK: number;
  /** Seeds of this step's two sampling calls (derive them from (run seed, step)). */
  plannerSeed: number;
  coderSeed: number;
  /** The Retriever's worked example for each plan (task-major, t · N + n); absent: none. */
  examples?: readonly (WorkedExample | null)[];
  /** What the Coder reads besides the plan (default: the statement). */
  coderSees?: CoderSees;
  /** Plan dropout, task-major (t · N + n): that plan's programs are written from an empty plan. */
  droppedPlans?: readonly boolean[];
  /** Self-plan mode (no Planner): the Coder's model writes plan and program in one sequence. */
  selfPlan?: boolean;
}

export interface RolloutAgents {
  tokenizer: CharTokenizer;
  /** How prompts are built and completions read; absent: the lab's formats over `tokenizer`. */
  prompts?: RolePrompts;
  /** null: single-agent mode, no plans. */
  planner: Sampler | null;
  coder: Sampler;
}

export async function sampleRollouts(
  tasks: readonly Task[],
  agents: RolloutAgents,
  options: RolloutOptions,
): Promise<TaskRollout[]> {
  const tok = agents.tokenizer;
  const format = agents.prompts ?? labPrompts(tok);
  if (options.selfPlan && !agents.planner) return sampleSelfPlans(tasks, agents, options);
  const plansPerTask = agents.planner ? options.plansPerTask : 1;
  const sample = (sampler: Sampler, prompts: number[][], maxNewTokens: number, seed: number) =>
    sampleCompletions(sampler, format, prompts, {
      maxNewTokens,
      temperature: options.temperature,
      topK: options.topK,
      seed,
    });

  // Plans, task-major: plan index = task · N + n (the layout plannerGroups expects). With a
  // Retriever, plan n of task t reads the worked example examples[t · N + n] first.
  let plans: Completion[] | null = null;
  if (agents.planner) {
    const examples = options.examples;
    const prompts = examples
      ? tasks.flatMap((task, t) =>
          Array.from({ length: plansPerTask }, (_, n) =>
            plannerPromptWithExample(tok, task.statement, examples[t * plansPerTask + n] ?? null),
          ),
        )
      : tasks.flatMap((task) => repeat(format.planner(task), plansPerTask));
    plans = await sample(agents.planner, prompts, options.maxPlanTokens, options.plannerSeed);
  }

  // Programs, plan-major: program index = (task · N + n) · M + m (coderGroups' layout).
  const coderPrompts = tasks.flatMap((task, t) =>
    Array.from({ length: plansPerTask }, (_, n) => {
      const dropped = options.droppedPlans?.[t * plansPerTask + n] === true;
      const planText = plans && !dropped ? (plans[t * plansPerTask + n]?.text ?? '') : '';
      return repeat(
        format.coder(coderView(task, options.coderSees), planText),
        options.programsPerPlan,
      );
    }).flat(),
  );
  const programs = await sample(
    agents.coder,
    coderPrompts,
    options.maxProgramTokens,
    options.coderSeed,
  );

  const perTask = plansPerTask * options.programsPerPlan;
  return tasks.map((task, t) => ({
    task,
    plans: plans ? plans.slice(t * plansPerTask, (t + 1) * plansPerTask) : null,
    programs: Array.from({ length: plansPerTask }, (_, n) => {
      const start = t * perTask + n * options.programsPerPlan;
      return programs.slice(start, start + options.programsPerPlan);
    }),
    ...(plans && options.droppedPlans
      ? {
          droppedPlans: Array.from(
            { length: plansPerTask },
            (_, n) => options.droppedPlans?.[t * plansPerTask + n] === true,
          ),
        }
      : {}),
  }));
}

/** Self-plan mode: M sequences of plan <|code|> program per task, one group per task. */
async function sampleSelfPlans(
  tasks: readonly Task[],
  agents: RolloutAgents,
  options: RolloutOptions,
): Promise<TaskRollout[]> {
  if (agents.prompts) {
    throw new Error('self-plan mode needs the lab’s own prompt formats, not a base model’s chat');
  }
  const tok = agents.tokenizer;
  const m = options.programsPerPlan;
  const sequences = await sampleCompletions(
    agents.coder,
    tok,
    tasks.flatMap((task) => repeat(selfPlanPrompt(tok, task.statement), m)),
    {
      maxNewTokens: selfPlanTokens(options.maxPlanTokens, options.maxProgramTokens),
      temperature: options.temperature,
      topK: options.topK,
      seed: options.coderSeed,
    },
  );
  const programs = sequences.map((sequence) => {
    const { plan, program } = splitSelfPlan(tok, sequence.tokens);
    return { ...sequence, text: program, plan };
  });
  return tasks.map((task, t) => ({
    task,
    plans: null,
    programs: [programs.slice(t * m, (t + 1) * m)],
  }));
}

/**
 * One sampling call over `prompts`, as Completions (the end token stops each): `tok` the lab's
 * tokenizer (its <|endoftext|>), or a RolePrompts (its stop ids and completion text).
 */
export async function sampleCompletions(
  sampler: Sampler,
  tok: CharTokenizer | RolePrompts,
  prompts: number[][],
  options: { maxNewTokens: number; temperature: number; topK: number; seed: number },
): Promise<Completion[]> {
  if (prompts.length === 0) return [];
  const lab = 'eosId' in tok;
  const result = await sampler.sample(prompts, {
    ...options,
    stopId: lab ? tok.eosId : tok.stopId,
    ...(!lab && tok.stopIds ? { stopIds: tok.stopIds } : {}),
  });
  return prompts.map((prompt, i) => ({
    prompt,
    tokens: result.tokens[i] ?? [],
    logProbs: result.logProbs[i] ?? [],
    finished: result.finished[i] ?? false,
    text: lab ? completionText(tok, result.tokens[i] ?? []) : tok.text(result.tokens[i] ?? []),
  }));
}

function repeat<T>(value: T, times: number): T[] {
  return Array.from({ length: times }, () => value);
}
