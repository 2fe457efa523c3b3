// Pulls the function code out of a model completion: every complete top-level
// `function name(...) { ... }` declaration, with braces balanced outside strings and comments.
// Prose, markdown fences and trailing tokens around them are dropped.
// Limitation: regex literals are not recognised, so a `{` or quote inside a regex can unbalance
// the scan (the lab's generated code rarely uses regexes; the sandbox still judges the result).

export type ExtractionStatus = 'ok' | 'no_function' | 'unbalanced' | 'missing_entry_point';

export interface ExtractedCode {
  /** True when at least one complete function was found (named `entryPoint`, when given). */
  formatOk: boolean;
  status: ExtractionStatus;
  /** The complete declarations, joined by newlines; empty when none was found. */
  code: string;
  functionNames: string[];
}

const DECLARATION = /\bfunction\s+([A-Za-z_$][\w$]*)\s*\(/g;

export function extractFunction(completion: string, entryPoint?: string): ExtractedCode {
  const declarations: string[] = [];
  const functionNames: string[] = [];
  let sawIncomplete = false;
  let searchFrom = 0;
  while (searchFrom < completion.length) {
    DECLARATION.lastIndex = searchFrom;
    const match = DECLARATION.exec(completion);
    if (!match) break;
    const start = match.index;
    const paramsOpen = start + match[0].length - 1;
    const paramsClose = matchingClose(completion, paramsOpen, '(', ')');
    const bodyOpen = paramsClose < 0 ? -1 : skipSpaceAndComments(completion, paramsClose + 1);
    if (bodyOpen < 0 || completion[bodyOpen] !== '{') {
      sawIncomplete = true;
      searchFrom = start + match[0].length;
      continue;
    }
    const bodyClose = matchingClose(completion, bodyOpen, '{', '}');
    if (bodyClose < 0) {
      sawIncomplete = true;
      break;
    }
    declarations.push(completion.slice(start, bodyClose + 1));
    functionNames.push(match[1] ?? '');
    searchFrom = bodyClose + 1;
  }
  let status: ExtractionStatus = 'ok';
  if (declarations.length === 0) status = sawIncomplete ? 'unbalanced' : 'no_function';
  else if (entryPoint !== undefined && !functionNames.includes(entryPoint)) {
    status = 'missing_entry_point';
  }
  return { formatOk: status === 'ok', status, code: declarations.join('\n'), functionNames };
}

/** Index of the bracket closing the one at `openIndex`, skipping strings and comments; −1 if none. */
function matchingClose(text: string, openIndex: number, open: string, close: string): number {
  let depth = 0;
  let i = openIndex;
  while (i < text.length) {
    const ch = text[i];
    if (ch === '"' || ch === "'" || ch === '`') {
      i = skipString(text, i);
      if (i < 0) return -1;
      continue;
    }
    if (ch === '/' && (text[i + 1] === '/' || text[i + 1] === '*')) {
      i = skipComment(text, i);
      if (i < 0) return -1;
      continue;
    }
    if (ch === open) depth++;
    else if (ch === close) {
      depth--;
      if (depth === 0) return i;
    }
    i++;
  }
  return -1;
}

/** Index just past the string literal starting at `start`; −1 if it never ends. */
function skipString(text: string, start: number): number {
  const quote = text[start];
  let i = start + 1;
  while (i < text.length) {
    const ch = text[i];
    if (ch === '\\') {
      i += 2;
      continue;
    }
    if (ch === quote) return i + 1;
    if (quote === '`' && ch === '$' && text[i + 1] === '{') {
      // A template substitution is code: skip to its matching brace.
      const close = matchingClose(text, i + 1, '{', '}');
      if (close < 0) return -1;
      i = close + 1;
      continue;
    }
    if (ch === '\n' && quote !== '`') return -1;
    i++;
  }
  return -1;
}

/** Index just past the comment starting at `start`; −1 if a block comment never ends. */
function skipComment(text: string, start: number): number {
  if (text[start + 1] === '/') {
    const end = text.indexOf('\n', start);
    return end < 0 ? text.length : end + 1;
  }
  const end = text.indexOf('*/', start + 2);
  return end < 0 ? -1 : end + 2;
}

function skipSpaceAndComments(text: string, from: number): number {
  let i = from;
  while (i < text.length) {
    const ch = text[i] ?? '';
    if (/\s/.test(ch)) i++;
    else if (ch === '/' && (text[i + 1] === '/' || text[i + 1] === '*')) {
      i = skipComment(text, i);
      if (i < 0) return -1;
    } else return i;
  }
  return -1;
}
