// A step is one operation of a composed task: its plan line in controlled English, a few
// statement clauses (phrasings), a JavaScript expression fragment, and a TypeScript oracle
// that computes the same value independently of the fragment.
import type { Rng } from '../random';

/** Values flowing between steps: a list of numbers, a number, a string, a list of strings. */
export type ValueType = 'nums' | 'num' | 'str' | 'strs' | 'bool';

export type Param = number | string;

export interface StepDef {
  /** Stable id without parameters, e.g. 'list.above'; the unit of step signatures. */
  kind: string;
  from: ValueType;
  to: ValueType;
  params: (rng: Rng) => Param[];
  plan: (p: Param[]) => string;
  clauses: ((p: Param[]) => string)[];
  /** Expression computing this step from the variable named `v`. */
  code: (v: string, p: Param[]) => string;
  apply: (value: unknown, p: Param[]) => unknown;
}

interface StepSpec<I, O> extends Omit<StepDef, 'apply' | 'params'> {
  params?: (rng: Rng) => Param[];
  apply: (value: I, p: Param[]) => O;
}

/** Types the oracle by its input; the registry stores it erased. */
export function defineStep<I, O>(spec: StepSpec<I, O>): StepDef {
  return {
    ...spec,
    params: spec.params ?? (() => []),
    apply: (value, p) => spec.apply(value as I, p),
  };
}

/** A parameter as a JavaScript literal: numbers as digits, strings single-quoted. */
export function lit(param: Param | undefined): string {
  return typeof param === 'string' ? `'${param}'` : String(param);
}

export const num = (p: Param[], i = 0): number => p[i] as number;
export const str = (p: Param[], i = 0): string => p[i] as string;
