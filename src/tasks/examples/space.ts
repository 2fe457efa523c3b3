// The examples world's space of programs: a small set of the lab's list steps, each with
// fixed parameters (a step instance), grouped into step families. A task is a chain of
// instances, nums → … → nums, optionally ended by one reduction (nums → num). Small on
// purpose: a tiny model must be able to tell the chain from a handful of input/output pairs,
// and the uniqueness check enumerates every chain up to the held-out length.
import { type Param, stepByKind } from '../steps';
import type { StepDef } from '../steps/stepTypes';

export type StepFamily = 'filter' | 'map' | 'order' | 'slice' | 'reduce';

export interface StepInstance {
  step: StepDef;
  params: Param[];
  family: StepFamily;
  /** "list.above(3)": the instance's name in tests and error messages. */
  name: string;
}

const SPEC: [family: StepFamily, kind: string, params: Param[]][] = [
  ['filter', 'list.even', []],
  ['filter', 'list.odd', []],
  ['filter', 'list.positive', []],
  ['filter', 'list.above', [3]],
  ['filter', 'list.below', [4]],
  ['filter', 'list.multiple', [3]],
  ['map', 'list.square', []],
  ['map', 'list.double', []],
  ['map', 'list.add', [1]],
  ['map', 'list.add', [3]],
  ['map', 'list.sub', [2]],
  ['map', 'list.times', [3]],
  ['map', 'list.abs', []],
  ['order', 'list.sortUp', []],
  ['order', 'list.sortDown', []],
  ['order', 'list.reverse', []],
  ['order', 'list.unique', []],
  ['slice', 'list.take', [2]],
  ['slice', 'list.take', [3]],
  ['slice', 'list.drop', [1]],
  ['slice', 'list.drop', [2]],
  ['reduce', 'list.sum', []],
  ['reduce', 'list.count', []],
  ['reduce', 'list.max', []],
  ['reduce', 'list.min', []],
];

export const INSTANCES: readonly StepInstance[] = SPEC.map(([family, kind, params]) => ({
  step: stepByKind(kind),
  params,
  family,
  name: params.length ? `${kind}(${params.join(',')})` : kind,
}));

/** Instances that keep a list (may stand anywhere) and reductions (only last). */
export const LIST_STEPS = INSTANCES.filter((i) => i.step.to === 'nums');
export const REDUCE_STEPS = INSTANCES.filter((i) => i.step.to === 'num');

/** Training chains have 1 or 2 steps; examples-length has one more. */
export const TRAIN_LENGTHS = [1, 2] as const;
export const LENGTH_SPLIT_LENGTH = 3;

/**
 * Family pairs that training never combines (unordered): examples-compose holds chains that
 * combine one of them, in the style of ExeDec's compositional split.
 */
export const HELD_OUT_FAMILY_PAIRS: readonly string[] = ['filter+slice', 'map+order'];

export function familyPairs(chain: readonly Pick<StepInstance, 'family'>[]): string[] {
  const families = [...new Set(chain.map((i) => i.family))].sort();
  const pairs: string[] = [];
  for (let a = 0; a < families.length; a++) {
    for (let b = a + 1; b < families.length; b++) pairs.push(`${families[a]}+${families[b]}`);
  }
  return pairs;
}

export function combinesHeldOutPair(chain: readonly StepInstance[]): boolean {
  return familyPairs(chain).some((p) => HELD_OUT_FAMILY_PAIRS.includes(p));
}

export function applyChain(chain: readonly StepInstance[], input: unknown): unknown {
  return chain.reduce((value, { step, params }) => step.apply(value, params), input);
}
