// The roles' prompts for a pretrained chat model, in one place: each role's request as a chat
// turn rendered by the model's own template (tokenizer_config.json's chat_template), encoded
// without the tokenizer's added specials (the template holds them, as apply_chat_template
// does). The Planner is asked for a short numbered plan and no code; the Coder for one
// JavaScript function named as the task's entry point, from the task and the plan. Its reply
// may wrap the code in a fence and prose: rl/extractFunction.ts takes the function out. A model
// without a template reads the same words as plain text. Generation stops at the tokenizer's
// end-of-turn / end-of-text ids (generation_config.json's eos_token_id).
import type { HfTokenizer } from '../tokenizer/hfTokenizer';
import type { PromptTask, RolePrompts } from './rolePrompts';

export const PLANNER_SYSTEM =
  'You plan JavaScript functions. Reply with a short numbered plan (at most 5 steps, one line each). Do not write any code.';

export const CODER_SYSTEM =
  'You write JavaScript. Reply with exactly one JavaScript function in a ```javascript code block, and nothing else.';

export function plannerRequest(task: PromptTask): string {
  return `Task:\n${task.statement.trim()}\n\nWrite a short numbered plan for a JavaScript function \`${task.entryPoint}\` that solves the task. No code.`;
}

export function coderRequest(task: PromptTask, plan: string): string {
  const planPart = plan.trim() ? `\n\nPlan:\n${plan.trim()}` : '';
  return `Task:\n${task.statement.trim()}${planPart}\n\nWrite one JavaScript function named \`${task.entryPoint}\` that solves the task${planPart ? ', following the plan' : ''}.`;
}

export function chatPrompts(tok: HfTokenizer): RolePrompts {
  const render = (system: string, user: string): number[] => {
    if (!tok.hasChatTemplate) return tok.encode(`${system}\n\n${user}\n\n`);
    const text = tok.applyChatTemplate([
      { role: 'system', content: system },
      { role: 'user', content: user },
    ]);
    return tok.encode(text, false);
  };
  const stops = tok.stopIds;
  if (stops.length === 0)
    throw new Error(
      'the base model names no end-of-text token (generation_config.json eos_token_id or tokenizer_config.json eos_token)',
    );
  return {
    planner: (task) => render(PLANNER_SYSTEM, plannerRequest(task)),
    coder: (task, plan) => render(CODER_SYSTEM, coderRequest(task, plan)),
    text: (tokens) => {
      const end = tokens.findIndex((id) => stops.includes(id));
      return tok.decode(end < 0 ? tokens : tokens.slice(0, end), true);
    },
    stopId: stops[0]!,
    stopIds: stops,
    rendered: (prompt) => tok.decode(prompt, false),
  };
}
