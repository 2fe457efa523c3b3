import { Tokenizer } from '@huggingface/tokenizers';
import { describe, expect, it } from 'vitest';
import { CharTokenizer, fromTokenizerJson, toTokenizerJson } from '../../src/tokenizer';

const samples = [
  'Keep the even numbers, then square each one.',
  '1. keep the even numbers\n2. square each one',
  'function f(xs) {\n\treturn xs.filter((x) => x % 2 === 0).map((x) => x * x);\n}',
  '<|statement|>Reverse the string.<|plan|>1. reverse it<|code|>const f = (s) => [...s].reverse().join("");<|endoftext|>',
  'weird é ✓ chars  and  spaces ',
];

describe('character tokenizer', () => {
  const tokenizer = new CharTokenizer();

  it('round-trips text and keeps special ids stable', () => {
    expect(tokenizer.padId).toBe(0);
    expect(tokenizer.eosId).toBe(1);
    for (const text of samples.slice(0, 4))
      expect(tokenizer.decode(tokenizer.encode(text))).toBe(text);
    expect(tokenizer.encode('é')).toEqual([tokenizer.unkId]);
  });

  it('decodes an empty completion (or only padding) to empty text', () => {
    expect(tokenizer.decode([])).toBe('');
    expect(tokenizer.decode([tokenizer.padId, tokenizer.padId])).toBe('');
  });

  it('tokenizer.json loads in @huggingface/tokenizers with identical ids', () => {
    const json = toTokenizerJson(tokenizer);
    const hf = new Tokenizer(JSON.parse(JSON.stringify(json)), {});
    for (const text of samples) {
      expect(hf.encode(text, { add_special_tokens: false }).ids).toEqual(tokenizer.encode(text));
    }
    const back = fromTokenizerJson(json);
    expect(back.vocab).toEqual(tokenizer.vocab);
  });
});
