// A family is a template that a seeded generator turns into tasks of one tier.
import type { Rng } from '../random';
import type { TaskDraft, Tier } from '../types';

export type FamilyKind = 'composition' | 'atomic' | 'algorithmic';

export interface Family {
  name: string;
  tier: Tier;
  kind: FamilyKind;
  /** Composition families: the step kinds each slot may draw from, in order. */
  slots?: readonly (readonly string[])[];
  generate(rng: Rng): TaskDraft;
}

/** Every generated task is called by this name; the Coder always writes `solve`. */
export const ENTRY_POINT = 'solve';

/** "1. first\n2. second" from plan lines. */
export function numberedPlan(lines: readonly string[]): string {
  return lines.map((line, i) => `${i + 1}. ${line}`).join('\n');
}
