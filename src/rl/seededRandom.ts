// A small seeded PRNG (mulberry32) so rollouts and tests are reproducible from one seed.

export interface SeededRandom {
  /** Uniform in [0, 1). */
  next(): number;
  /** Standard normal (Box–Muller). */
  normal(): number;
  /** An index drawn with probability proportional to `weights` (need not sum to 1). */
  categorical(weights: ArrayLike<number>): number;
}

export function seededRandom(seed: number): SeededRandom {
  let state = seed >>> 0;
  const next = (): number => {
    state = (state + 0x6d2b79f5) >>> 0;
    let t = state;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
  const normal = (): number => {
    // 1 - next() is in (0, 1], so the log is finite.
    const u = 1 - next();
    const v = next();
    return Math.sqrt(-2 * Math.log(u)) * Math.cos(2 * Math.PI * v);
  };
  const categorical = (weights: ArrayLike<number>): number => {
    let total = 0;
    for (let i = 0; i < weights.length; i++) total += weights[i] ?? 0;
    let threshold = next() * total;
    for (let i = 0; i < weights.length; i++) {
      threshold -= weights[i] ?? 0;
      if (threshold < 0) return i;
    }
    return weights.length - 1;
  };
  return { next, normal, categorical };
}
