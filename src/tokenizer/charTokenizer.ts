// The tokenizer shared by the Planner and the Coder: characters, optionally joined by BPE
// merges (./bpe.ts fits them on the train split). With no merges every character is a token
// (the first shipped checkpoints); with merges a task's statement + plan + program is several
// times fewer tokens, so sampling takes fewer decode steps and attention's length² shrinks.
// Special tokens come first so their ids are stable; merged tokens come after the characters.

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

/** A BPE merge: the two tokens joined, in the order they were learned (earlier = first applied). */
export type Merge = readonly [string, string];

export class CharTokenizer {
  readonly vocab: string[];
  private readonly idOf: Map<string, number>;
  /** Rank of each merge by its pair "left\u0000right". */
  private readonly mergeRank: Map<string, number>;
  readonly merges: readonly Merge[];
  readonly padId: number;
  readonly eosId: number;
  readonly unkId: number;

  constructor(chars: string[] = DEFAULT_CHARS, merges: readonly Merge[] = []) {
    this.merges = merges;
    // Two merges can spell the same token ('a'+'bc', 'ab'+'c'): it gets one id.
    this.vocab = [...new Set([...SPECIAL_TOKENS, ...chars, ...merges.map(([a, b]) => a + b)])];
    this.mergeRank = new Map(merges.map(([a, b], rank) => [`${a}\u0000${b}`, rank]));
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

  /**
   * Plain text → ids. Special-token spellings inside text are encoded as special tokens; the
   * text between them is split into characters and merged by BPE, lowest rank first (as
   * Hugging Face tokenizers does, so both give the same ids).
   */
  encode(text: string): number[] {
    const ids: number[] = [];
    let segment: string[] = [];
    const flush = () => {
      for (const piece of this.applyMerges(segment)) ids.push(this.idOf.get(piece) ?? this.unkId);
      segment = [];
    };
    let i = 0;
    while (i < text.length) {
      const special = text.startsWith('<|', i) ? this.matchSpecial(text, i) : undefined;
      if (special !== undefined) {
        flush();
        ids.push(this.idOf.get(special)!);
        i += special.length;
        continue;
      }
      const ch = String.fromCodePoint(text.codePointAt(i)!);
      segment.push(ch);
      i += ch.length;
    }
    flush();
    return ids;
  }

  /** BPE on one segment: repeatedly join the adjacent pair of lowest rank (leftmost first). */
  private applyMerges(pieces: string[]): string[] {
    if (this.merges.length === 0 || pieces.length < 2) return pieces;
    const parts = pieces.slice();
    for (;;) {
      let best = -1;
      let bestRank = Number.POSITIVE_INFINITY;
      for (let j = 0; j + 1 < parts.length; j++) {
        const rank = this.mergeRank.get(`${parts[j]}\u0000${parts[j + 1]}`);
        if (rank !== undefined && rank < bestRank) {
          bestRank = rank;
          best = j;
        }
      }
      if (best < 0) return parts;
      parts.splice(best, 2, parts[best]! + parts[best + 1]!);
    }
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
