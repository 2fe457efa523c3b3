// tokenizer.json from a checkpoint, checked as untrusted input before the tokenizers library
// reads it: the model's vocabulary no larger than config.json's vocab_size and every id inside
// it (an id of 10^9 made the library build a table for a minute), every merge a pair of tokens the
// vocabulary holds (missing ones loaded silently), and every regex it carries (a pre-tokenizer's
// Split, a normalizer's Replace) free of the shapes that backtrack exponentially (a repeated
// group holding a variable quantifier or an alternation, or a backreference) and quick on runs of
// one character, the input that makes a polynomial pattern slow. Only the patterns are timed, not
// the whole encode: a long word's BPE is slow on its own in a busy tab, a pattern is not.

const MAX_PATTERN_LENGTH = 10_000;
/** The slowest one probe match may be; a linear pattern takes well under a millisecond. */
const PROBE_MILLISECONDS = 100;
/** Each 1.5× the last: a pattern of degree k grows 1.5^k a length, so it is stopped soon after crossing the bound. */
const PROBE_LENGTHS = [8, 12, 18, 27, 40, 60, 90, 135, 200, 300, 450];
const PROBE_CHARACTERS = ['a', ' ', '0', '!', '\n', "'", 'é'];

/** Refuses a tokenizer.json the lab should not hand to the library; `fail` says why. */
export function checkTokenizerJson(json: unknown, vocabSize: number, fail: (why: string) => never) {
  if (typeof json !== 'object' || json === null || Array.isArray(json)) fail('not an object');
  const model = (json as { model?: Record<string, unknown> }).model;
  if (typeof model !== 'object' || model === null) fail('it has no model');
  const inRange = (id: unknown, what: string) => {
    if (!Number.isInteger(id) || (id as number) < 0 || (id as number) >= vocabSize)
      fail(`${what} has id ${JSON.stringify(id)}, outside config.json's vocab_size ${vocabSize}`);
  };
  const type = model.type ?? 'BPE';
  if (type === 'BPE' || type === 'WordPiece' || type === 'WordLevel') {
    const vocab = model.vocab;
    if (typeof vocab !== 'object' || vocab === null || Array.isArray(vocab))
      fail('model.vocab is not an object of token → id');
    const entries = Object.entries(vocab as Record<string, unknown>);
    if (entries.length > vocabSize)
      fail(`${entries.length} tokens, more than config.json's vocab_size ${vocabSize}`);
    for (const [token, id] of entries) inRange(id, `token ${JSON.stringify(token)}`);
    if (type === 'BPE') checkMerges(model, vocab as Record<string, number>, vocabSize, fail);
  } else if (type === 'Unigram') {
    const vocab = model.vocab;
    if (!Array.isArray(vocab)) fail('model.vocab of a Unigram model is not a list');
    if (vocab.length > vocabSize)
      fail(`${vocab.length} tokens, more than config.json's vocab_size ${vocabSize}`);
  } else fail(`model type ${JSON.stringify(type)} is not one the lab reads`);
  const added = (json as { added_tokens?: unknown }).added_tokens ?? [];
  if (!Array.isArray(added)) fail('added_tokens is not a list');
  for (const token of added)
    inRange((token as { id?: unknown })?.id, `added token ${JSON.stringify(token?.content)}`);
  for (const pattern of regexPatterns(json)) {
    const why = backtrackingShape(pattern) ?? slowOnProbes(pattern);
    if (why) fail(`its regex ${JSON.stringify(pattern.slice(0, 80))} ${why}`);
  }
}

/** Why matching the pattern over runs of one character is too slow, or null. */
function slowOnProbes(pattern: string): string | null {
  let regex: RegExp;
  try {
    regex = new RegExp(pattern, 'gu');
  } catch {
    return null; // the library rewrites some classes first, or refuses the pattern itself
  }
  for (const length of PROBE_LENGTHS) {
    for (const c of PROBE_CHARACTERS) {
      const text = `${c.repeat(length)}\u0000`;
      const ms = fastestMatch(regex, text);
      if (ms > PROBE_MILLISECONDS)
        return `took ${Math.round(ms)} ms on ${length} × ${JSON.stringify(c)} (it backtracks)`;
    }
  }
  return null;
}

/**
 * The fastest of up to three matches over the text: a busy machine (a GC pause, a thread off
 * its core) can hold one match past the bound, a slow pattern is slow every time.
 */
function fastestMatch(regex: RegExp, text: string): number {
  let fastest = Number.POSITIVE_INFINITY;
  for (let attempt = 0; attempt < 3 && fastest > PROBE_MILLISECONDS; attempt++) {
    const started = performance.now();
    for (const _ of text.matchAll(regex));
    fastest = Math.min(fastest, performance.now() - started);
  }
  return fastest;
}

function checkMerges(
  model: Record<string, unknown>,
  vocab: Record<string, number>,
  vocabSize: number,
  fail: (why: string) => never,
) {
  const merges = model.merges ?? [];
  if (!Array.isArray(merges)) fail('model.merges is not a list');
  if (merges.length > vocabSize)
    fail(`${merges.length} merges, more than config.json's vocab_size ${vocabSize}`);
  const prefix =
    typeof model.continuing_subword_prefix === 'string' ? model.continuing_subword_prefix : '';
  merges.forEach((merge: unknown, i: number) => {
    // Older files write a merge as one "left right" string, newer ones as a pair.
    const pair = typeof merge === 'string' ? merge.split(' ') : merge;
    if (!Array.isArray(pair) || pair.length !== 2 || pair.some((p) => typeof p !== 'string'))
      fail(`merge ${i} (${JSON.stringify(merge)}) is not a pair of tokens`);
    const [left, right] = pair as [string, string];
    const joined = left + (prefix && right.startsWith(prefix) ? right.slice(prefix.length) : right);
    for (const token of [left, right, joined])
      if (!Object.hasOwn(vocab, token))
        fail(
          `merge ${i} (${left} ${right}) names ${JSON.stringify(token)}, which the vocabulary lacks`,
        );
  });
}

/** Every `{Regex: "..."}` pattern anywhere in the file. */
function regexPatterns(json: unknown, out: string[] = []): string[] {
  if (Array.isArray(json)) for (const item of json) regexPatterns(item, out);
  else if (typeof json === 'object' && json !== null) {
    for (const [key, value] of Object.entries(json)) {
      if (key === 'Regex' && typeof value === 'string') out.push(value);
      else if (key !== 'vocab' && key !== 'merges') regexPatterns(value, out);
    }
  }
  return out;
}

interface Group {
  /** A quantifier inside that matches a variable number of times (?, *, +, {n,m}). */
  variable: boolean;
  alternation: boolean;
}

/**
 * Why a pattern may backtrack exponentially, or null: a group repeated by *, + or {n,m} (m > 1)
 * that holds a variable quantifier or an alternation, like (a+)+ or (a|a)*; or a backreference.
 * Real pre-tokenizers (GPT-2's, Llama 3's, Qwen2's) repeat only single characters and classes.
 */
export function backtrackingShape(pattern: string): string | null {
  if (pattern.length > MAX_PATTERN_LENGTH)
    return `is ${pattern.length} characters, over ${MAX_PATTERN_LENGTH}`;
  const stack: Group[] = [{ variable: false, alternation: false }];
  let i = 0;
  /** The quantifier at i, if any: its length, and whether it repeats and varies. */
  const quantifierAt = (
    at: number,
  ): { length: number; repeats: boolean; varies: boolean } | null => {
    const c = pattern[at];
    let length = 0;
    let repeats = false;
    let varies = false;
    if (c === '*' || c === '+') [length, repeats, varies] = [1, true, true];
    else if (c === '?') [length, repeats, varies] = [1, false, true];
    else if (c === '{') {
      const m = /^\{(\d+)(,(\d*))?\}/.exec(pattern.slice(at));
      if (!m) return null;
      const low = Number(m[1]);
      const high = m[2] === undefined ? low : m[3] === '' ? Number.POSITIVE_INFINITY : Number(m[3]);
      [length, repeats, varies] = [m[0].length, high > 1, high !== low];
    } else return null;
    if (pattern[at + length] === '?' || pattern[at + length] === '+') length++; // lazy, possessive
    return { length, repeats, varies };
  };
  while (i < pattern.length) {
    const c = pattern[i]!;
    const top = stack.at(-1)!;
    if (c === '\\') {
      const next = pattern[i + 1] ?? '';
      if (/[1-9]/.test(next) || next === 'k') return 'has a backreference';
      // \p{..}, \u{..}, \x{..}: skip the braces whole.
      const braced = /^\\[pPux]\{[^}]*\}/.exec(pattern.slice(i));
      i += braced ? braced[0].length : 2;
    } else if (c === '[') {
      for (i++; i < pattern.length && pattern[i] !== ']'; i++) if (pattern[i] === '\\') i++;
      i++;
    } else if (c === '(') {
      stack.push({ variable: false, alternation: false });
      i++;
      continue;
    } else if (c === ')') {
      const group = stack.length > 1 ? stack.pop()! : { variable: false, alternation: false };
      i++;
      const q = quantifierAt(i);
      if (q?.repeats && (group.variable || group.alternation))
        return `repeats a group that ${group.alternation ? 'holds an alternation' : 'holds a quantifier'} (exponential backtracking)`;
      const parent = stack.at(-1)!;
      parent.variable ||= group.variable || (q?.varies ?? false);
      parent.alternation ||= group.alternation;
      if (q) i += q.length;
      continue;
    } else if (c === '|') {
      top.alternation = true;
      i++;
      continue;
    } else i++;
    // A quantifier after an atom (escape, class, character).
    const q = quantifierAt(i);
    if (q) {
      top.variable ||= q.varies;
      i += q.length;
    }
  }
  return null;
}
