// tokenizer.json in Hugging Face tokenizers format: a BPE model over characters. A character
// vocabulary has no merges and sits behind a Split pre-tokenizer that isolates every
// character; a fitted one has its merges and no pre-tokenizer (merges may join across spaces,
// as the lab's BPE does). The special tokens are "added tokens", matched before the model
// sees the text. Checked against the @huggingface/tokenizers npm package in
// tests/unit/tokenizer.test.ts.
import { CharTokenizer, SPECIAL_TOKENS } from './charTokenizer';

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

export function toTokenizerJson(tokenizer: CharTokenizer): TokenizerJson {
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

/** Rebuilds a tokenizer from a tokenizer.json this module wrote (character or BPE). */
export function fromTokenizerJson(json: TokenizerJson): CharTokenizer {
  if (json?.model?.type !== 'BPE' || typeof json.model.vocab !== 'object') {
    throw new Error('tokenizer.json: expected a BPE model over characters');
  }
  const byId: string[] = [];
  for (const [token, id] of Object.entries(json.model.vocab)) byId[id] = token;
  SPECIAL_TOKENS.forEach((token, id) => {
    if (byId[id] !== token) throw new Error(`tokenizer.json: id ${id} should be ${token}`);
  });
  const merges = (json.model.merges ?? []).map((merge) => {
    // Older tokenizers write a merge as one "left right" string.
    const pair = typeof merge === 'string' ? (merge as string).split(' ') : merge;
    if (pair.length !== 2 || pair.some((part) => typeof part !== 'string')) {
      throw new Error('tokenizer.json: a merge must be a pair of tokens');
    }
    return [pair[0] as string, pair[1] as string] as const;
  });
  const merged = new Set(merges.map(([a, b]) => a + b));
  // The characters: every token after the specials that no merge produces, in id order.
  const chars: string[] = [];
  for (let id = SPECIAL_TOKENS.length; id < byId.length; id++) {
    const token = byId[id];
    if (token === undefined) throw new Error('tokenizer.json: vocabulary has gaps');
    if (!merged.has(token) || [...token].length === 1) chars.push(token);
  }
  const tokenizer = new CharTokenizer(chars, merges);
  if (tokenizer.vocab.some((token, id) => byId[id] !== token)) {
    throw new Error('tokenizer.json: vocabulary order does not match its merges');
  }
  return tokenizer;
}
