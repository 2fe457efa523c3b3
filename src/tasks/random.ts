// The lab's one seeded PRNG (mulberry32). Task generation, weight initialisation,
// sampling, warm-start batches and tests all draw from here, never from Math.random, so
// one seed reproduces the same tasks, weights and samples on every backend. It lives in
// src/tasks, the lowest layer, so that every other layer may import it.

/** FNV-1a over a string: turns labels into 32-bit seeds. */
export function hashString(text: string): number {
  let h = 0x811c9dc5;
  for (let i = 0; i < text.length; i++) {
    h ^= text.charCodeAt(i);
    h = Math.imul(h, 0x01000193);
  }
  return h >>> 0;
}

export class Rng {
  /** mulberry32's state: one 32-bit word. */
  private state: number;

  /** Seed 0 is replaced by a fixed non-zero word (as the model's generator always did). */
  constructor(seed: number) {
    this.state = seed >>> 0 || 0x9e3779b9;
  }

  /** A child generator named by a label: independent of how much the parent has drawn. */
  static derive(seed: number, ...labels: (string | number)[]): Rng {
    return new Rng(hashString(`${seed >>> 0}/${labels.join('/')}`));
  }

  /** Uniform in [0, 1). */
  next(): number {
    this.state = (this.state + 0x6d2b79f5) >>> 0;
    let t = this.state;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  }

  /** Standard normal (Box–Muller; 1 − next() is in (0, 1], so the log is finite). */
  normal(): number {
    const u = 1 - this.next();
    const v = this.next();
    return Math.sqrt(-2 * Math.log(u)) * Math.cos(2 * Math.PI * v);
  }

  /** Uniform integer in [0, n). */
  below(n: number): number {
    return Math.floor(this.next() * n);
  }

  /** Uniform integer in [lo, hi], both ends included. */
  int(lo: number, hi: number): number {
    return lo + Math.floor(this.next() * (hi - lo + 1));
  }

  ints(length: number, lo: number, hi: number): number[] {
    return Array.from({ length }, () => this.int(lo, hi));
  }

  chance(p: number): boolean {
    return this.next() < p;
  }

  pick<T>(items: readonly T[]): T {
    if (items.length === 0) throw new Error('Rng.pick: empty list');
    return items[Math.floor(this.next() * items.length)] as T;
  }

  /** An index drawn in proportion to non-negative weights (they need not sum to 1). */
  weighted(weights: ArrayLike<number>): number {
    let total = 0;
    for (let i = 0; i < weights.length; i++) total += weights[i] ?? 0;
    let r = this.next() * total;
    for (let i = 0; i < weights.length; i++) {
      r -= weights[i] ?? 0;
      if (r < 0) return i;
    }
    return weights.length - 1;
  }

  /** A shuffled copy (Fisher–Yates). */
  shuffle<T>(items: readonly T[]): T[] {
    const out = [...items];
    for (let i = out.length - 1; i > 0; i--) {
      const j = Math.floor(this.next() * (i + 1));
      [out[i], out[j]] = [out[j] as T, out[i] as T];
    }
    return out;
  }

  /** A derived seed, for handing to another component. */
  fork(): number {
    return Math.floor(this.next() * 4294967296) >>> 0;
  }
}
