// What every evaluation record of a run must carry: the Collaboration Gain by intervention.
import { expect } from 'vitest';

/**
 * The four pass@1 values of the same Coder (own, swapped, reference, no plan) and their three
 * differences, for each suffix ('' for all tasks, '/<suite>' per suite).
 */
export function expectInterventions(r: Record<string, number>, suffixes: string[]): void {
  for (const x of suffixes) {
    const own = r[`eval/pass@1${x}`]!;
    for (const v of ['swapped_plan', 'reference_plan', 'no_plan']) {
      expect(r[`eval/pass@1_${v}${x}`], `eval/pass@1_${v}${x}`).toBeGreaterThanOrEqual(0);
    }
    expect(r[`eval/collaboration_gain${x}`]).toBeCloseTo(
      own - r[`eval/pass@1_swapped_plan${x}`]!,
      12,
    );
    expect(r[`eval/planner_gap${x}`]).toBeCloseTo(r[`eval/pass@1_reference_plan${x}`]! - own, 12);
    expect(r[`eval/plan_vs_none${x}`]).toBeCloseTo(own - r[`eval/pass@1_no_plan${x}`]!, 12);
  }
  // The old figure (from the plan − from the statement alone) is retired.
  expect(r['eval/pass@1_alone']).toBeUndefined();
}
