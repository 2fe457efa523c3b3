// The Debugger's prompt: the Coder's prompt (statement, plan), then the failing program with
// the sandbox's report as a comment line, then a second <|code|> after which it writes the
// repaired program. No new special tokens, so the shipped tokenizer and checkpoints serve
// unchanged; the Debugger's warm start begins from the Coder's weights, which already read
// the first half.
import type { CharTokenizer } from '../../tokenizer';
import type { RoleExample } from '../format';

export function debuggerPrompt(
  tok: CharTokenizer,
  statement: string,
  plan: string,
  program: string,
  report: string,
): number[] {
  return [
    tok.special('<|statement|>'),
    ...tok.encode(statement),
    tok.special('<|plan|>'),
    ...tok.encode(plan),
    tok.special('<|code|>'),
    ...tok.encode(`${program}\n// ${report}`),
    tok.special('<|code|>'),
  ];
}

/** A warm-start example: the broken program with its report → the reference program. */
export function debuggerExample(
  tok: CharTokenizer,
  item: { statement: string; plan: string; program: string; report: string; repair: string },
): RoleExample {
  return {
    prompt: debuggerPrompt(tok, item.statement, item.plan, item.program, item.report),
    answer: [...tok.encode(item.repair), tok.eosId],
  };
}
