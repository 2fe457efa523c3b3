// A small seeded PRNG (mulberry32) so that the same seed gives the same weights and the
// same samples on every backend. Math.random is never used for anything reproducible.

export class Prng {
  private state: number;

  constructor(seed: number) {
    this.state = seed >>> 0 || 0x9e3779b9;
  }

  /** Uniform in [0, 1). */
  next(): number {
    this.state = (this.state + 0x6d2b79f5) >>> 0;
    let t = this.state;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  }

  /** Standard normal (Box–Muller). */
  normal(): number {
    const u = 1 - this.next();
    const v = this.next();
    return Math.sqrt(-2 * Math.log(u)) * Math.cos(2 * Math.PI * v);
  }

  int(n: number): number {
    return Math.floor(this.next() * n);
  }

  /** A derived seed, for handing to another component. */
  fork(): number {
    return Math.floor(this.next() * 4294967296) >>> 0;
  }
}
