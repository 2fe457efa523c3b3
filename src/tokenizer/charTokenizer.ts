// The tokenizer shared by the Planner and the Coder: characters, optionally joined by BPE
// merges (./bpe.ts fits them on the train split). With no merges every character is a token
// (the first shipped checkpoints); with merges a task's statement + plan + program is several
// times fewer tokens, so sampling takes fewer decode steps and attention's length² shrinks.
// Special tokens come first so their ids are stable; merged tokens come after the characters.
// Encoding and decoding go through @huggingface/tokenizers (the vocabulary as tokenizer.json,
// huggingface.ts), the library every checkpoint's text goes through; the lab fits the merges.
import { Tokenizer } from '@huggingface/tokenizers';
import { type TokenizerJson, toTokenizerJson } from './huggingface';
import { SPECIAL_TOKENS, type SpecialToken } from './specialTokens';

export { SPECIAL_TOKENS, type SpecialToken } from './specialTokens';

/** Printable ASCII plus newline and tab: everything the task world writes. */
export const DEFAULT_CHARS: string[] = [
  '\n',
  '\t',
  ...Array.from({ length: 127 - 32 }, (_, i) => String.fromCharCode(32 + i)),
];

/** A BPE merge: the two tokens joined, in the order they were learned (earlier = first applied). */
export type Merge = readonly [string, string];

export class CharTokenizer {
  readonly vocab: string[];
  private readonly idOf: Map<string, number>;
  /** The same vocabulary and merges in @huggingface/tokenizers, built on first use. */
  private library: Tokenizer | null = null;
  readonly merges: readonly Merge[];
  readonly padId: number;
  readonly eosId: number;
  readonly unkId: number;

  constructor(chars: string[] = DEFAULT_CHARS, merges: readonly Merge[] = []) {
    this.merges = merges;
    // Two merges can spell the same token ('a'+'bc', 'ab'+'c'): it gets one id.
    this.vocab = [...new Set([...SPECIAL_TOKENS, ...chars, ...merges.map(([a, b]) => a + b)])];
    this.idOf = new Map(this.vocab.map((token, id) => [token, id]));
    if (this.idOf.size !== this.vocab.length)
      throw new Error('tokenizer: duplicate vocabulary entry');
    this.padId = this.special('<|pad|>');
    this.eosId = this.special('<|endoftext|>');
    this.unkId = this.special('<|unk|>');
  }

  get vocabSize(): number {
    return this.vocab.length;
  }

  special(token: SpecialToken): number {
    const id = this.idOf.get(token);
    if (id === undefined) throw new Error(`tokenizer: no special token ${token}`);
    return id;
  }

  /** Character tokenizer: no merges. */
  get isCharacterLevel(): boolean {
    return this.merges.length === 0;
  }

  private get hf(): Tokenizer {
    this.library ??= new Tokenizer(toTokenizerJson(this), {});
    return this.library;
  }

  /**
   * Plain text → ids. Special-token spellings inside text are encoded as special tokens; the
   * text between them is split into characters and merged by BPE, lowest rank first; a
   * character outside the vocabulary is <|unk|>.
   */
  encode(text: string): number[] {
    return this.hf.encode(text, { add_special_tokens: false }).ids;
  }

  /** Ids → text; pad is dropped (as are ids outside the vocabulary), other special tokens are written out. */
  decode(ids: number[], options: { skipSpecial?: boolean } = {}): string {
    const kept = ids.filter((id) => id !== this.padId && id >= 0 && id < this.vocab.length);
    // The library refuses an empty list; an empty completion is empty text.
    if (kept.length === 0) return '';
    return this.hf.decode(kept, {
      skip_special_tokens: options.skipSpecial ?? false,
      clean_up_tokenization_spaces: false,
    });
  }
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
