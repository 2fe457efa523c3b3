// Okapi BM25 over short texts (the Retriever's lexical first stage): words are lowercased
// runs of letters and digits; k1 = 1.2, b = 0.75; idf = ln(1 + (N − df + 0.5) / (df + 0.5)).
// Ties keep the library's order, so a search is deterministic.

export const BM25_K1 = 1.2;
export const BM25_B = 0.75;

export function words(text: string): string[] {
  return text.toLowerCase().match(/[a-z0-9]+/g) ?? [];
}

export class Bm25Index {
  private readonly termFreqs: Map<string, number>[];
  private readonly lengths: number[];
  private readonly docFreq = new Map<string, number>();
  private readonly avgLength: number;

  constructor(documents: readonly string[]) {
    this.termFreqs = documents.map((doc) => {
      const freqs = new Map<string, number>();
      for (const word of words(doc)) freqs.set(word, (freqs.get(word) ?? 0) + 1);
      return freqs;
    });
    this.lengths = documents.map((doc) => words(doc).length);
    for (const freqs of this.termFreqs) {
      for (const word of freqs.keys()) this.docFreq.set(word, (this.docFreq.get(word) ?? 0) + 1);
    }
    this.avgLength =
      this.lengths.reduce((a, b) => a + b, 0) / Math.max(1, this.lengths.length) || 1;
  }

  get size(): number {
    return this.lengths.length;
  }

  idf(word: string): number {
    const n = this.docFreq.get(word) ?? 0;
    return Math.log(1 + (this.size - n + 0.5) / (n + 0.5));
  }

  score(query: string, doc: number): number {
    const freqs = this.termFreqs[doc];
    if (!freqs) throw new Error(`bm25: no document ${doc}`);
    const norm = BM25_K1 * (1 - BM25_B + (BM25_B * (this.lengths[doc] ?? 0)) / this.avgLength);
    let total = 0;
    for (const word of new Set(words(query))) {
      const f = freqs.get(word) ?? 0;
      if (f > 0) total += (this.idf(word) * f * (BM25_K1 + 1)) / (f + norm);
    }
    return total;
  }

  /** The `k` best documents for `query`, best first; `skip` leaves documents out. */
  search(query: string, k: number, skip: (doc: number) => boolean = () => false): number[] {
    const scored: { doc: number; score: number }[] = [];
    for (let doc = 0; doc < this.size; doc++) {
      if (!skip(doc)) scored.push({ doc, score: this.score(query, doc) });
    }
    scored.sort((a, b) => b.score - a.score || a.doc - b.doc);
    return scored.slice(0, k).map((s) => s.doc);
  }
}
