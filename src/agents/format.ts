// The agents' prompt formats: how a task becomes token sequences for each role. The
// Planner reads the statement and writes a plan; the Coder reads statement + plan and
// writes code. With one shared model, a role token in front tells it which role to play.
// The warm start (src/sft) trains on these formats and the rollouts and the evaluation
// sample with them, so RL continues what SFT taught.
import type { Role } from '../rl/config';
import type { CharTokenizer } from '../tokenizer';

export interface RoleExample {
  /** Tokens the model reads (no loss on them). */
  prompt: number[];
  /** Tokens the model must write, ending with <|endoftext|> (the loss is on these). */
  answer: number[];
}

export function plannerPrompt(tok: CharTokenizer, statement: string, shared = false): number[] {
  return [
    ...(shared ? [tok.special('<|planner|>')] : []),
    tok.special('<|statement|>'),
    ...tok.encode(statement),
    tok.special('<|plan|>'),
  ];
}

/** A solved training task shown to the Planner before its own statement (the Retriever's pick). */
export interface WorkedExample {
  statement: string;
  plan: string;
}

/**
 * The Planner's prompt with a worked example: the task's statement first (where the Planner
 * always reads it, so a small model with learned positions keeps its bearings), then the
 * example's statement and plan as text, then <|plan|>. Without an example it is
 * plannerPrompt's.
 */
export function plannerPromptWithExample(
  tok: CharTokenizer,
  statement: string,
  example: WorkedExample | null,
  shared = false,
): number[] {
  if (!example) return plannerPrompt(tok, statement, shared);
  return [
    ...(shared ? [tok.special('<|planner|>')] : []),
    tok.special('<|statement|>'),
    ...tok.encode(`${statement}\n\n${EXAMPLE_HEADER}${example.statement}\n${example.plan}`),
    tok.special('<|plan|>'),
  ];
}

/** What introduces the worked example inside the Planner's statement section. */
export const EXAMPLE_HEADER = 'A solved example: ';

export function coderPrompt(
  tok: CharTokenizer,
  statement: string,
  plan: string,
  shared = false,
): number[] {
  return [
    ...(shared ? [tok.special('<|coder|>')] : []),
    tok.special('<|statement|>'),
    ...tok.encode(statement),
    tok.special('<|plan|>'),
    ...tok.encode(plan),
    tok.special('<|code|>'),
  ];
}

/** The text a role wrote, without the end token (and anything after it). */
export function completionText(tok: CharTokenizer, tokens: number[]): string {
  const end = tokens.indexOf(tok.eosId);
  return tok.decode(end < 0 ? tokens : tokens.slice(0, end), { skipSpecial: true });
}

export function roleExample(
  tok: CharTokenizer,
  role: Role,
  task: { statement: string; plan: string; code: string },
  shared = false,
): RoleExample {
  if (role === 'planner') {
    return {
      prompt: plannerPrompt(tok, task.statement, shared),
      answer: [...tok.encode(task.plan), tok.eosId],
    };
  }
  return {
    prompt: coderPrompt(tok, task.statement, task.plan, shared),
    answer: [...tok.encode(task.code), tok.eosId],
  };
}

/** Role token, <|statement|>, <|plan|> and <|code|>: the most special tokens a prompt adds. */
export const PROMPT_SPECIAL_TOKENS = 4;

/**
 * The statement cut (from its end) to at most `maxTokens` tokens. The lab's tiny models have a
 * context of a few hundred tokens that must hold statement + plan + program, and the sampler
 * refuses a prompt longer than the context; the procedural statements are one or two lines,
 * but external ones (an MBXP problem with its examples) can run past it. Cut once, where the
 * task set is loaded, so every role, the evaluation and the inspector read the same text.
 */
export function fitStatement(
  tok: { encode(text: string): number[] },
  statement: string,
  maxTokens: number,
): string {
  if (tok.encode(statement).length <= maxTokens) return statement;
  // A token covers at least one character: the longest prefix that fits, by bisection.
  let fits = 0;
  let over = statement.length;
  while (over - fits > 1) {
    const mid = (fits + over) >> 1;
    if (tok.encode(statement.slice(0, mid)).length <= maxTokens) fits = mid;
    else over = mid;
  }
  return statement.slice(0, fits);
}
