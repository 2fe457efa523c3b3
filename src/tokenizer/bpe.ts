// Fitting BPE merges on a corpus: start from characters, repeatedly join the most frequent
// adjacent pair (ties broken by the pair's text, so a corpus gives one answer), never across
// the boundary of a text. The lab fits them on the train split's statements, plans and
// programs only (src/sft/warmStart.ts), so no evaluation text shapes the vocabulary.
import { CharTokenizer, DEFAULT_CHARS, type Merge } from './charTokenizer';

export function fitMerges(texts: readonly string[], count: number): Merge[] {
  const known = new Set(DEFAULT_CHARS);
  // Each run of known characters is a word (unknown characters split a text: they become
  // <|unk|>); equal words are kept once with their count.
  const wordCount = new Map<string, number>();
  for (const text of texts) {
    let current = '';
    for (const ch of text) {
      if (known.has(ch)) current += ch;
      else {
        if (current.length > 1) wordCount.set(current, (wordCount.get(current) ?? 0) + 1);
        current = '';
      }
    }
    if (current.length > 1) wordCount.set(current, (wordCount.get(current) ?? 0) + 1);
  }
  const words = [...wordCount.keys()].map((word) => Array.from(word));
  const weights = [...wordCount.values()];
  // Pair counts kept up to date merge by merge: a merge only re-counts the words that hold
  // its pair (the corpus is counted once, not once per merge).
  const pairCounts = new Map<string, number>();
  const wordsWithPair = new Map<string, Set<number>>();
  const countPairs = (w: number, sign: 1 | -1) => {
    const word = words[w]!;
    for (let i = 0; i + 1 < word.length; i++) {
      const key = `${word[i]}\u0000${word[i + 1]}`;
      const n = (pairCounts.get(key) ?? 0) + sign * weights[w]!;
      if (n === 0) pairCounts.delete(key);
      else pairCounts.set(key, n);
      if (sign > 0) {
        const holders = wordsWithPair.get(key);
        if (holders) holders.add(w);
        else wordsWithPair.set(key, new Set([w]));
      }
    }
  };
  for (let w = 0; w < words.length; w++) countPairs(w, 1);
  const merges: Merge[] = [];
  while (merges.length < count) {
    // The most frequent pair that occurs at least twice; ties go to the smaller text.
    let bestKey = '';
    let bestCount = 1;
    for (const [key, n] of pairCounts) {
      if (n > bestCount || (n === bestCount && bestKey !== '' && key < bestKey)) {
        bestKey = key;
        bestCount = n;
      }
    }
    if (bestKey === '') break; // nothing occurs twice any more
    const [left, right] = bestKey.split('\u0000') as [string, string];
    merges.push([left, right]);
    const joined = left + right;
    for (const w of wordsWithPair.get(bestKey) ?? []) {
      const word = words[w]!;
      const out: string[] = [];
      for (let i = 0; i < word.length; i++) {
        if (i + 1 < word.length && word[i] === left && word[i + 1] === right) {
          out.push(joined);
          i++;
        } else out.push(word[i]!);
      }
      if (out.length === word.length) continue; // an earlier merge already took its pairs
      countPairs(w, -1);
      words[w] = out;
      countPairs(w, 1);
    }
    wordsWithPair.delete(bestKey);
  }
  return merges;
}

/** A BPE tokenizer over the default characters with `count` merges fitted on `texts`. */
export function fitBpeTokenizer(texts: readonly string[], count: number): CharTokenizer {
  return new CharTokenizer(DEFAULT_CHARS, fitMerges(texts, count));
}
