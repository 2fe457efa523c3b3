// The `self-plan` baseline's format (issue 30): one model reads the statement and writes a
// plan, then <|code|>, then the program, in one sequence, so it has the Planner's and the
// Coder's token budget but one policy. The prompt is the Planner's; the model's own plan
// followed by <|code|> is exactly the Coder's prompt (format.ts coderPrompt), which is why
// the evaluation can intervene on a self-plan model's plan as it does on a Planner's.
import type { CharTokenizer } from '../tokenizer';
import { completionText, plannerPrompt, type RoleExample } from './format';

/** The self-plan prompt: the statement, then <|plan|> (the Planner's prompt). */
export function selfPlanPrompt(tok: CharTokenizer, statement: string): number[] {
  return plannerPrompt(tok, statement);
}

/** The longest self-plan completion: a whole plan, the <|code|> marker, a whole program. */
export function selfPlanTokens(maxPlanTokens: number, maxProgramTokens: number): number {
  return maxPlanTokens + 1 + maxProgramTokens;
}

/** A warm-start example: statement → plan <|code|> program <|endoftext|>. */
export function selfPlanExample(
  tok: CharTokenizer,
  task: { statement: string; plan: string; code: string },
): RoleExample {
  return {
    prompt: selfPlanPrompt(tok, task.statement),
    answer: [
      ...tok.encode(task.plan),
      tok.special('<|code|>'),
      ...tok.encode(task.code),
      tok.eosId,
    ],
  };
}

/**
 * A self-plan completion split at its first <|code|>: the plan before it and the program
 * after it. Without the marker the whole text is plan and the program is empty (it fails).
 */
export function splitSelfPlan(
  tok: CharTokenizer,
  tokens: readonly number[],
): { plan: string; program: string } {
  const marker = tokens.indexOf(tok.special('<|code|>'));
  if (marker < 0) return { plan: completionText(tok, [...tokens]), program: '' };
  return {
    plan: completionText(tok, tokens.slice(0, marker)),
    program: completionText(tok, tokens.slice(marker + 1)),
  };
}
