// The lab's BPE tokenizer: fitted on the train split only, lossless on every suite text, and
// its tokenizer.json gives identical ids in @huggingface/tokenizers; a character tokenizer's
// file still loads as one.
import { readFileSync } from 'node:fs';
import { Tokenizer } from '@huggingface/tokenizers';
import { describe, expect, it } from 'vitest';
import { fitTaskTokenizer } from '../../src/sft/warmStart';
import { loadSuite, SUITES } from '../../src/tasks';
import { CharTokenizer, fitMerges, fromTokenizerJson, toTokenizerJson } from '../../src/tokenizer';

const suiteTexts = SUITES.flatMap((spec) =>
  loadSuite(readFileSync(`public/tasks/${spec.file}`, 'utf8')).tasks.flatMap((task) => [
    task.statement,
    ...task.strategies.flatMap((s) => [s.plan, s.code]),
    `<|statement|>${task.statement}<|plan|>${task.strategies[0]?.plan ?? ''}<|code|>`,
  ]),
);

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
