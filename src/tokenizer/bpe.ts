// Fitting BPE merges on a corpus: start from characters, repeatedly join the most frequent
// adjacent pair (ties broken by the pair's text, so a corpus gives one answer), never across
// the boundary of a text. The lab fits them on the train split's statements, plans and
// programs only (src/sft/warmStart.ts), so no evaluation text shapes the vocabulary.
import { CharTokenizer, DEFAULT_CHARS, type Merge } from './charTokenizer';

export function fitMerges(texts: readonly string[], count: number): Merge[] {
  const known = new Set(DEFAULT_CHARS);
  // Each text as a list of symbols; unknown characters split a text (they become <|unk|>).
  let words: string[][] = [];
  for (const text of texts) {
    let current: string[] = [];
    for (const ch of text) {
      if (known.has(ch)) current.push(ch);
      else {
        if (current.length > 1) words.push(current);
        current = [];
      }
    }
    if (current.length > 1) words.push(current);
  }
  const merges: Merge[] = [];
  while (merges.length < count) {
    const counts = new Map<string, number>();
    for (const word of words) {
      for (let i = 0; i + 1 < word.length; i++) {
        const key = `${word[i]}\u0000${word[i + 1]}`;
        counts.set(key, (counts.get(key) ?? 0) + 1);
      }
    }
    let bestKey = '';
    let bestCount = 1;
    for (const [key, n] of counts) {
      if (n > bestCount || (n === bestCount && bestKey !== '' && key < bestKey)) {
        bestKey = key;
        bestCount = n;
      }
    }
    if (bestKey === '') break; // nothing occurs twice any more
    const [left, right] = bestKey.split('\u0000') as [string, string];
    merges.push([left, right]);
    const joined = left + right;
    words = words.map((word) => {
      const out: string[] = [];
      for (let i = 0; i < word.length; i++) {
        if (i + 1 < word.length && word[i] === left && word[i + 1] === right) {
          out.push(joined);
          i++;
        } else out.push(word[i]!);
      }
      return out;
    });
  }
  return merges;
}

/** A BPE tokenizer over the default characters with `count` merges fitted on `texts`. */
export function fitBpeTokenizer(texts: readonly string[], count: number): CharTokenizer {
  return new CharTokenizer(DEFAULT_CHARS, fitMerges(texts, count));
}
