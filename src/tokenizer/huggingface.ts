// tokenizer.json in Hugging Face tokenizers format. A character vocabulary is a BPE model
// with no merges behind a Split pre-tokenizer that isolates every character; the special
// tokens are "added tokens" so they are matched before splitting. Checked against the
// @huggingface/tokenizers npm package in tests/unit/tokenizer.test.ts.
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
  pre_tokenizer: { type: 'Split'; pattern: { Regex: string }; behavior: 'Isolated'; invert: false };
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
    pre_tokenizer: {
      type: 'Split',
      pattern: { Regex: '[\\s\\S]' },
      behavior: 'Isolated',
      invert: false,
    },
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
      merges: [],
    },
  };
}

/** Rebuilds a CharTokenizer from a tokenizer.json this module wrote. */
export function fromTokenizerJson(json: TokenizerJson): CharTokenizer {
  if (json?.model?.type !== 'BPE' || (json.model.merges?.length ?? 0) !== 0) {
    throw new Error('tokenizer.json: expected a character vocabulary (BPE with no merges)');
  }
  const byId: string[] = [];
  for (const [token, id] of Object.entries(json.model.vocab)) byId[id] = token;
  SPECIAL_TOKENS.forEach((token, id) => {
    if (byId[id] !== token) throw new Error(`tokenizer.json: id ${id} should be ${token}`);
  });
  const chars = byId.slice(SPECIAL_TOKENS.length);
  if (chars.some((c) => c === undefined)) throw new Error('tokenizer.json: vocabulary has gaps');
  return new CharTokenizer(chars);
}
