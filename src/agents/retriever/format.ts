// The Retriever's prompt: the task's statement, then its K candidates' statements numbered
// 1..K (BM25's order); it answers with one digit and the end token. The Planner then reads
// the chosen candidate's statement and plan before its own statement (plannerPromptWithExample).
// No new special tokens: the shipped tokenizer serves unchanged.

import { RETRIEVER_ANSWER_TOKENS } from '../../rl/config';
import type { CharTokenizer } from '../../tokenizer';
import type { RoleExample } from '../format';

export function retrieverPrompt(
  tok: CharTokenizer,
  statement: string,
  candidates: readonly { statement: string }[],
  contextTokens = Number.POSITIVE_INFINITY,
): number[] {
  const head = [tok.special('<|statement|>'), ...tok.encode(statement), tok.special('<|plan|>')];
  const lines = candidates.map((c, i) =>
    tok.encode(`${i > 0 ? '\n' : ''}${i + 1}: ${c.statement}`),
  );
  // Room for the answer (a digit and the end token): long candidate lines are cut evenly.
  const room = contextTokens - head.length - 1 - RETRIEVER_ANSWER_TOKENS;
  const total = lines.reduce((sum, line) => sum + line.length, 0);
  const cut =
    total <= room
      ? lines
      : lines.map((line) => line.slice(0, Math.max(3, Math.floor(room / lines.length))));
  return [...head, ...cut.flat(), tok.special('<|code|>')];
}

/** The chosen index (0-based) from the Retriever's text, or null when it is not 1..K. */
export function parseChoice(text: string, candidates: number): number | null {
  const match = /^\s*(\d)\s*$/.exec(text);
  if (!match) return null;
  const choice = Number(match[1]) - 1;
  return choice >= 0 && choice < candidates ? choice : null;
}

/** A warm-start example: the prompt → the index (1-based digit) of the best candidate. */
export function retrieverExample(
  tok: CharTokenizer,
  statement: string,
  candidates: readonly { statement: string }[],
  best: number,
): RoleExample {
  return {
    prompt: retrieverPrompt(tok, statement, candidates),
    answer: [...tok.encode(String(best + 1)), tok.eosId],
  };
}
