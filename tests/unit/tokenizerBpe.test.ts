// The lab's BPE tokenizer: fitted on the train split only, lossless on every suite text, and
// its tokenizer.json gives identical ids in @huggingface/tokenizers; a character tokenizer's
// file still loads as one.
import { readFileSync } from 'node:fs';
import { Tokenizer } from '@huggingface/tokenizers';
import { describe, expect, it } from 'vitest';
import { fitTaskTokenizer } from '../../src/sft/warmStart';
import { loadSuite, SUITES } from '../../src/tasks';
import {
  CharTokenizer,
  DEFAULT_CHARS,
  fitMerges,
  fromTokenizerJson,
  toTokenizerJson,
} from '../../src/tokenizer';

const suiteTexts = SUITES.flatMap((spec) =>
  loadSuite(readFileSync(`public/tasks/${spec.file}`, 'utf8')).tasks.flatMap((task) => [
    task.statement,
    ...task.strategies.flatMap((s) => [s.plan, s.code]),
    `<|statement|>${task.statement}<|plan|>${task.strategies[0]?.plan ?? ''}<|code|>`,
  ]),
);

/**
 * Reference BPE fitting, written plainly: count every adjacent pair of the whole corpus again
 * for each merge, join the most frequent (at least twice; ties to the smaller text) left to
 * right in every text. The lab's fitMerges keeps counts up to date instead; same merges.
 */
function referenceMerges(texts: readonly string[], count: number): [string, string][] {
  const known = new Set(DEFAULT_CHARS);
  let words = texts.flatMap((text) =>
    text
      .split('')
      .map((ch) => (known.has(ch) ? ch : '\u0001'))
      .join('')
      .split('\u0001')
      .filter((run) => run.length > 1)
      .map((run) => run.split('')),
  );
  const merges: [string, string][] = [];
  while (merges.length < count) {
    const counts = new Map<string, number>();
    for (const word of words)
      for (let i = 0; i + 1 < word.length; i++) {
        const key = `${word[i]}\u0000${word[i + 1]}`;
        counts.set(key, (counts.get(key) ?? 0) + 1);
      }
    const best = [...counts]
      .filter(([, n]) => n >= 2)
      .sort(([a, n], [b, m]) => m - n || (a < b ? -1 : 1))[0];
    if (!best) break;
    const [left, right] = best[0].split('\u0000') as [string, string];
    merges.push([left, right]);
    words = words.map((word) => {
      const out: string[] = [];
      for (let i = 0; i < word.length; i++) {
        if (word[i] === left && word[i + 1] === right) {
          out.push(left + right);
          i++;
        } else out.push(word[i]!);
      }
      return out;
    });
  }
  return merges;
}

describe('BPE tokenizer', () => {
  const bpe = fitTaskTokenizer(512);

  it('fits deterministically, most frequent pair first, never across texts', () => {
    expect(fitMerges(['abab', 'abab', 'cd'], 2)).toEqual([
      ['a', 'b'],
      ['ab', 'ab'],
    ]);
    // 'c','d' occur once: no merge. 'x' + 'y' across two texts never merges.
    expect(fitMerges(['x', 'y'], 5)).toEqual([]);
    expect(fitTaskTokenizer(512).merges).toEqual(bpe.merges);
    expect(bpe.vocabSize).toBeGreaterThan(500);
  });

  it('fits the same merges as the plain reference on fresh random corpora', () => {
    let state = (Date.now() % 100_000) + 1;
    const random = () => {
      state = (state * 16_807) % 2_147_483_647;
      return state / 2_147_483_647;
    };
    const alphabet = ['a', 'b', 'c', ' ', '(', ')', 'é']; // é is not a default character
    for (let trial = 0; trial < 20; trial++) {
      const texts = Array.from({ length: 1 + Math.floor(random() * 30) }, () =>
        Array.from(
          { length: Math.floor(random() * 40) },
          () => alphabet[Math.floor(random() * alphabet.length)],
        ).join(''),
      );
      const count = Math.floor(random() * 40);
      expect(fitMerges(texts, count), `seed ${state}: ${JSON.stringify(texts)}`).toEqual(
        referenceMerges(texts, count),
      );
    }
  });

  it('round-trips every suite text and is several times shorter than characters', () => {
    const chars = new CharTokenizer();
    let charTokens = 0;
    let bpeTokens = 0;
    for (const text of suiteTexts) {
      const ids = bpe.encode(text);
      expect(bpe.decode(ids)).toBe(text);
      charTokens += chars.encode(text).length;
      bpeTokens += ids.length;
    }
    expect(charTokens / bpeTokens).toBeGreaterThan(3);
    expect(bpe.encode('é')).toEqual([bpe.unkId]);
  });

  it('tokenizer.json loads in @huggingface/tokenizers with identical ids, and back', () => {
    const json = toTokenizerJson(bpe);
    const hf = new Tokenizer(JSON.parse(JSON.stringify(json)), {});
    for (const text of [...suiteTexts, 'weird é ✓ chars  and  spaces ']) {
      expect(hf.encode(text, { add_special_tokens: false }).ids, text).toEqual(bpe.encode(text));
    }
    const back = fromTokenizerJson(JSON.parse(JSON.stringify(json)));
    expect(back.vocab).toEqual(bpe.vocab);
    expect(back.merges).toEqual(bpe.merges);
    const char = fromTokenizerJson(toTokenizerJson(new CharTokenizer()));
    expect(char.isCharacterLevel).toBe(true);
  });
});
