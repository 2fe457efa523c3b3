// tokenizer.json in Hugging Face tokenizers format: a BPE model over characters. A character
// vocabulary has no merges and sits behind a Split pre-tokenizer that isolates every
// character; a fitted one has its merges and no pre-tokenizer (merges may join across spaces,
// as the lab's BPE does). The special tokens are "added tokens", matched before the model
// sees the text. Reading one back is `fromTokenizerJson` in charTokenizer.ts (it builds the
// class; this file imports nothing of it, so the two do not import each other). Checked against the @huggingface/tokenizers npm package in
// tests/unit/tokenizer.test.ts.
import { SPECIAL_TOKENS } from './specialTokens';

/** What tokenizer.json is written from: the vocabulary in id order and the merges. */
export interface CharBpeVocabulary {
  readonly vocab: readonly string[];
  readonly merges: readonly (readonly [string, string])[];
  readonly isCharacterLevel: boolean;
}

export interface TokenizerJson {
  version: string;
  added_tokens: {
    id: number;
    content: string;
    single_word: boolean;
    lstrip: boolean;
    rstrip: boolean;
    normalized: boolean;
    special: boolean;
  }[];
  normalizer: null;
  pre_tokenizer: {
    type: 'Split';
    pattern: { Regex: string };
    behavior: 'Isolated';
    invert: false;
  } | null;
  post_processor: null;
  decoder: { type: 'Fuse' };
  model: {
    type: 'BPE';
    dropout: null;
    unk_token: string;
    continuing_subword_prefix: null;
    end_of_word_suffix: null;
    fuse_unk: boolean;
    byte_fallback: boolean;
    ignore_merges: boolean;
    vocab: Record<string, number>;
    merges: string[][];
  };
}

export function toTokenizerJson(tokenizer: CharBpeVocabulary): TokenizerJson {
  const specials = new Set<string>(SPECIAL_TOKENS);
  return {
    version: '1.0',
    added_tokens: tokenizer.vocab
      .map((content, id) => ({ content, id }))
      .filter(({ content }) => specials.has(content))
      .map(({ content, id }) => ({
        id,
        content,
        single_word: false,
        lstrip: false,
        rstrip: false,
        normalized: false,
        special: true,
      })),
    normalizer: null,
    pre_tokenizer: tokenizer.isCharacterLevel
      ? { type: 'Split', pattern: { Regex: '[\\s\\S]' }, behavior: 'Isolated', invert: false }
      : null,
    post_processor: null,
    decoder: { type: 'Fuse' },
    model: {
      type: 'BPE',
      dropout: null,
      unk_token: '<|unk|>',
      continuing_subword_prefix: null,
      end_of_word_suffix: null,
      fuse_unk: false,
      byte_fallback: false,
      ignore_merges: false,
      vocab: Object.fromEntries(tokenizer.vocab.map((token, id) => [token, id])),
      merges: tokenizer.merges.map(([a, b]) => [a, b]),
    },
  };
}
