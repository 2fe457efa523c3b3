// A character tokenizer shared by the Planner and the Coder. Characters, not BPE: the
// task world's statements, plans and code are short ASCII texts, the TESTING.md prototype
// learned well on characters, and a fixed vocabulary never has to be refit when the task
// families change. Special tokens come first so their ids are stable.

export const SPECIAL_TOKENS = [
  '<|pad|>',
  '<|endoftext|>',
  '<|unk|>',
  '<|statement|>',
  '<|plan|>',
  '<|code|>',
  '<|planner|>',
  '<|coder|>',
] as const;

export type SpecialToken = (typeof SPECIAL_TOKENS)[number];

/** Printable ASCII plus newline and tab: everything the task world writes. */
export const DEFAULT_CHARS: string[] = [
  '\n',
  '\t',
  ...Array.from({ length: 127 - 32 }, (_, i) => String.fromCharCode(32 + i)),
];

export class CharTokenizer {
  readonly vocab: string[];
  private readonly idOf: Map<string, number>;
  readonly padId: number;
  readonly eosId: number;
  readonly unkId: number;

  constructor(chars: string[] = DEFAULT_CHARS) {
    this.vocab = [...SPECIAL_TOKENS, ...chars];
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

  /** Plain text → ids. Special-token spellings inside text are encoded as special tokens. */
  encode(text: string): number[] {
    const ids: number[] = [];
    let i = 0;
    while (i < text.length) {
      const special = text.startsWith('<|', i) ? this.matchSpecial(text, i) : undefined;
      if (special !== undefined) {
        ids.push(this.idOf.get(special)!);
        i += special.length;
        continue;
      }
      const ch = String.fromCodePoint(text.codePointAt(i)!);
      ids.push(this.idOf.get(ch) ?? this.unkId);
      i += ch.length;
    }
    return ids;
  }

  /** Ids → text; pad is dropped, other special tokens are written out. */
  decode(ids: number[], options: { skipSpecial?: boolean } = {}): string {
    let out = '';
    for (const id of ids) {
      if (id === this.padId) continue;
      if (options.skipSpecial && id < SPECIAL_TOKENS.length) continue;
      out += this.vocab[id] ?? '';
    }
    return out;
  }

  private matchSpecial(text: string, at: number): string | undefined {
    return SPECIAL_TOKENS.find((token) => text.startsWith(token, at));
  }
}
