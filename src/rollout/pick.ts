// Choosing the next token from one row of logits, in JavaScript: temperature, top-k,
// a seeded draw, and the log-prob of the chosen token.
import { Rng } from '../tasks/random';

export interface Pick {
  id: number;
  /** log softmax(logits / temperature)[id] over the full vocabulary (temperature 1 when greedy). */
  logProb: number;
}

export function pickToken(
  logits: ArrayLike<number>,
  temperature: number,
  topK: number,
  prng: Rng,
): Pick {
  const V = logits.length;
  const t = temperature > 0 ? temperature : 1;
  let max = -Infinity;
  for (let i = 0; i < V; i++) max = Math.max(max, logits[i]! / t);
  let total = 0;
  for (let i = 0; i < V; i++) total += Math.exp(logits[i]! / t - max);
  const logZ = max + Math.log(total);
  const logProb = (id: number) => logits[id]! / t - logZ;

  if (temperature <= 0) {
    let best = 0;
    for (let i = 1; i < V; i++) if (logits[i]! > logits[best]!) best = i;
    return { id: best, logProb: logProb(best) };
  }
  let candidates = Array.from({ length: V }, (_, i) => i);
  if (topK > 0 && topK < V) {
    candidates.sort((a, b) => logits[b]! - logits[a]! || a - b);
    candidates = candidates.slice(0, topK);
  }
  const weights = candidates.map((i) => Math.exp(logits[i]! / t - max));
  let r = prng.next() * weights.reduce((a, b) => a + b, 0);
  for (let j = 0; j < candidates.length; j++) {
    r -= weights[j]!;
    if (r < 0) return { id: candidates[j]!, logProb: logProb(candidates[j]!) };
  }
  const last = candidates[candidates.length - 1]!;
  return { id: last, logProb: logProb(last) };
}

/** One independent stream per row, so a row's samples do not depend on the batch around it. */
export function rowPrng(seed: number, row: number): Rng {
  return new Rng((Math.imul(seed >>> 0, 0x9e3779b1) ^ Math.imul(row + 1, 0x85ebca77)) >>> 0);
}
