// How a role's prompt becomes tokens and a completion becomes text, whatever the model: the
// lab's own formats over its tokenizer (format.ts, what the warm start taught) or a pretrained
// model's chat template (chatPrompts.ts). The rollouts and the evaluation talk to this.
import type { CharTokenizer } from '../tokenizer';
import { coderPrompt, completionText, plannerPrompt } from './format';

/** What a prompt needs from a task. */
export interface PromptTask {
  statement: string;
  /** The function the Coder must write. */
  entryPoint: string;
}

export interface RolePrompts {
  planner(task: PromptTask): number[];
  /** The Coder's prompt from the task and a plan ('' in single mode: no plan). */
  coder(task: PromptTask, plan: string): number[];
  /** A completion's text, without its stop token and anything after it. */
  text(tokens: readonly number[]): string;
  /** Tokens that end a completion (included in it). */
  stopId: number;
  stopIds?: readonly number[];
  /** The prompt's text as the model reads it, for the inspector; absent: the lab's formats (not shown). */
  rendered?(prompt: readonly number[]): string;
}

/** The lab's formats (format.ts) over its tokenizer: exactly the prompts the warm start trained on. */
export function labPrompts(tok: CharTokenizer): RolePrompts {
  return {
    planner: (task) => plannerPrompt(tok, task.statement),
    coder: (task, plan) => coderPrompt(tok, task.statement, plan),
    text: (tokens) => completionText(tok, tokens as number[]),
    stopId: tok.eosId,
  };
}
