// The examples world's training mix: how often each chain of step families ('map-reduce')
// comes in the training stream, and the schedule that spreads them evenly over the stream.
// Like the procedural world's tier mix, it fixes what a run trains on instead of leaving it to
// chance: the uniqueness check makes the families' frequencies very uneven (a lone reduction
// is a quarter of the tasks and passes ~0.8 at step 0, a map then a reduction ~0.13), and eight
// tasks drawn freely swung a step's pass fraction by about ±0.1 with the mix alone, hiding
// the learning in the curve.

/**
 * Per mille of the training tasks, by family: the unrestricted generator's own shares
 * (generateExamplesTask without `family`), measured over 4,000 train-split tasks (seeds 1–4,
 * 1,000 each) and rounded; the families never drawn there are left out (fewer than 1 in
 * 4,000). tasks.examples.test.ts checks the shares against a fresh sample.
 */
export const TRAIN_FAMILY_MIX: Readonly<Record<string, number>> = {
  reduce: 238,
  'filter-reduce': 140,
  'map-reduce': 133,
  'slice-reduce': 87,
  map: 82,
  filter: 68,
  slice: 52,
  order: 48,
  'map-map': 42,
  'map-filter': 28,
  'filter-map': 24,
  'order-slice': 19,
  'slice-order': 19,
  'order-reduce': 13,
  'slice-slice': 6,
  'order-order': 5,
};

/**
 * The family of each stream position, by smooth weighted round-robin (each position every
 * family gains its weight, the one with the most takes the position and pays the total): in
 * any run of positions each family's count is within one of its share, so every step holds the
 * mix and every third of a run the same. Integer weights keep it exact and resumable.
 */
export class FamilySchedule {
  private readonly families: string[];
  private readonly weights: number[];
  private readonly total: number;
  private readonly credit: number[];
  private readonly drawn: number[];
  private position = 0;

  constructor(mix: Readonly<Record<string, number>>, start = 0) {
    this.families = Object.keys(mix).filter((f) => (mix[f] ?? 0) > 0);
    this.weights = this.families.map((f) => mix[f] as number);
    this.total = this.weights.reduce((a, b) => a + b, 0);
    if (this.families.length === 0 || !this.weights.every(Number.isInteger)) {
      throw new Error('a family mix needs positive integer weights');
    }
    this.credit = this.weights.map(() => 0);
    this.drawn = this.weights.map(() => 0);
    while (this.position < start) this.next();
  }

  /** The next position's family, and how many of that family came before it. */
  next(): { family: string; index: number } {
    let best = 0;
    for (let f = 0; f < this.families.length; f++) {
      this.credit[f] = (this.credit[f] as number) + (this.weights[f] as number);
      if ((this.credit[f] as number) > (this.credit[best] as number)) best = f;
    }
    this.credit[best] = (this.credit[best] as number) - this.total;
    const index = this.drawn[best] as number;
    this.drawn[best] = index + 1;
    this.position++;
    return { family: this.families[best] as string, index };
  }
}
