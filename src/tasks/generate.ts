// Seeded task generation. Task i of a request depends only on (seed, i, split, tiers/mix),
// so batches can be drawn lazily (`generateTask`) or all at once (`generateTasks`).
import { FAMILIES, type Family } from './families';
import { Rng } from './random';
import { heldOutTiers, SPLIT_SEED, splitOf } from './splits';
import type { Split, Task, Tier } from './types';
import { TIERS } from './types';

export interface GenerateOptions {
  /** Tiers to draw from, equally likely (default all). Ignored when `mix` is given. */
  tiers?: readonly Tier[];
  /** Relative weight per tier, e.g. { L1: 1, L2: 2, L3: 2, L4: 1 }. */
  mix?: Partial<Record<Tier, number>>;
  split?: Split;
  count: number;
  seed: number;
  /** Fixes which compositions are held out; keep the default unless studying splits. */
  splitSeed?: number;
}

const MAX_ATTEMPTS = 2000;

function tierWeights(options: Omit<GenerateOptions, 'count'>): [Tier, number][] {
  const split = options.split ?? 'train';
  const base: [Tier, number][] = options.mix
    ? TIERS.map((t): [Tier, number] => [t, options.mix?.[t] ?? 0])
    : TIERS.map((t): [Tier, number] => [t, (options.tiers ?? TIERS).includes(t) ? 1 : 0]);
  const allowed = split === 'heldout' ? heldOutTiers() : TIERS;
  const weights = base.filter(([t, w]) => w > 0 && allowed.includes(t));
  if (weights.length === 0) {
    const asked = base.filter(([, w]) => w > 0).map(([t]) => t);
    throw new Error(
      split === 'heldout'
        ? `no held-out tasks for tiers ${asked.join(', ')}: held-out compositions exist for ${allowed.join(', ')}`
        : 'no tiers selected',
    );
  }
  return weights;
}

function candidates(tier: Tier, split: Split): Family[] {
  return FAMILIES.filter(
    (f) => f.tier === tier && (split !== 'heldout' || (f.slots?.length ?? 0) >= 2),
  );
}

/** The index-th task of a seeded stream. */
export function generateTask(options: Omit<GenerateOptions, 'count'>, index: number): Task {
  const split = options.split ?? 'train';
  const splitSeed = options.splitSeed ?? SPLIT_SEED;
  const weights = tierWeights(options);
  for (let attempt = 0; attempt < MAX_ATTEMPTS; attempt++) {
    const rng = Rng.derive(options.seed, split, index, attempt);
    const tier = weights[rng.weighted(weights.map(([, w]) => w))]?.[0] ?? 'L1';
    const family = rng.pick(candidates(tier, split));
    const draft = family.generate(rng);
    if (splitOf(draft, splitSeed) !== split) continue;
    return {
      id: `${family.name}:${split}:${options.seed}:${index}`,
      family: family.name,
      tier,
      ...draft,
    };
  }
  throw new Error(
    `could not draw a ${split} task in ${MAX_ATTEMPTS} attempts (seed ${options.seed}, index ${index})`,
  );
}

export function generateTasks(options: GenerateOptions): Task[] {
  return Array.from({ length: options.count }, (_, i) => generateTask(options, i));
}

/** A lazy batch source for trainers: next(n) returns the next n tasks of the stream. */
export function createTaskSampler(options: Omit<GenerateOptions, 'count'>, start = 0) {
  let index = start;
  return {
    next(n: number): Task[] {
      const batch = Array.from({ length: n }, (_, i) => generateTask(options, index + i));
      index += n;
      return batch;
    },
    get position(): number {
      return index;
    },
  };
}
