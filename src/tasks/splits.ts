// Train / validation / held-out, fixed by a split seed independent of the generation seed
// (so tasks drawn with any seed agree on their split):
// - held-out: a composition whose steps include a held-out PAIR (two step kinds, unordered,
//   anywhere in the chain). Train and validation never contain such a pair, so every held-out
//   task combines steps that were never seen together in training.
// - validation: of the rest, a hashed VALIDATION_PERCENT. Compositions hash their statement
//   (phrasing + parameters), so a composed statement is never in both train and validation.
//   Hand-written families have only a few statements, so they hash statement + test inputs:
//   validation has the same functions on inputs never used in train.
import { FAMILIES } from './families';
import { hashString, Rng } from './random';
import { isStepKind } from './steps';
import type { Split, Task, Tier } from './types';

export const SPLIT_SEED = 20240611;
export const HELDOUT_PAIR_FRACTION = 0.12;
export const VALIDATION_PERCENT = 15;

/** Unordered pairs of distinct step kinds occurring together in one task, as "a+b" (sorted). */
export function stepPairs(steps: readonly string[]): string[] {
  const kinds = [...new Set(steps)].sort();
  const pairs: string[] = [];
  for (let i = 0; i < kinds.length; i++) {
    for (let j = i + 1; j < kinds.length; j++) pairs.push(`${kinds[i]}+${kinds[j]}`);
  }
  return pairs;
}

/**
 * Every pair some L1–L4 composition family can produce. L5's shapes add pairs (two maps in one
 * chain) but are left out: the held-out draw below must not move when L5 grows, or tasks the
 * shipped warm start trained on would become held-out.
 */
export function possiblePairs(): string[] {
  const pairs = new Set<string>();
  for (const family of FAMILIES) {
    if (family.tier === 'L5') continue;
    const slots = family.slots ?? [];
    for (let i = 0; i < slots.length; i++) {
      for (let j = i + 1; j < slots.length; j++) {
        for (const a of slots[i] ?? []) {
          for (const b of slots[j] ?? []) if (a !== b) pairs.add(stepPairs([a, b])[0] ?? '');
        }
      }
    }
  }
  return [...pairs].sort();
}

const heldOutCache = new Map<number, ReadonlySet<string>>();

export function heldOutPairs(splitSeed = SPLIT_SEED): ReadonlySet<string> {
  let pairs = heldOutCache.get(splitSeed);
  if (!pairs) {
    const all = possiblePairs();
    const chosen = new Rng(splitSeed)
      .shuffle(all)
      .slice(0, Math.round(all.length * HELDOUT_PAIR_FRACTION));
    pairs = new Set(chosen);
    heldOutCache.set(splitSeed, pairs);
  }
  return pairs;
}

export function splitOf(
  task: Pick<Task, 'steps' | 'statement' | 'tests'>,
  splitSeed = SPLIT_SEED,
): Split {
  const held = heldOutPairs(splitSeed);
  if (stepPairs(task.steps).some((pair) => held.has(pair))) return 'heldout';
  const composed = task.steps.length > 0 && task.steps.every(isStepKind);
  const inputs = composed ? '' : JSON.stringify(task.tests.map((t) => t.args));
  const bucket = hashString(`${splitSeed}|${task.statement}|${inputs}`) % 100;
  return bucket < VALIDATION_PERCENT ? 'validation' : 'train';
}

/** Tiers that have held-out tasks: those with multi-step compositions. */
export function heldOutTiers(): Tier[] {
  const tiers = FAMILIES.filter((f) => (f.slots?.length ?? 0) >= 2).map((f) => f.tier);
  return [...new Set(tiers)].sort();
}
