// Builders for hand-written families: one fixed algorithm, several statement phrasings,
// a TypeScript oracle for expected values, and a seeded input generator.
import type { Rng } from '../random';
import type { JsonValue, Strategy, Tier } from '../types';
import { ENTRY_POINT, type Family, numberedPlan } from './familyTypes';

type Args = JsonValue[];

interface Approach {
  plan: string[];
  code: string;
}

interface AtomicSpec extends Approach {
  name: string;
  tier: Exclude<Tier, 'L4'>;
  arity: number;
  statements: string[];
  oracle: (args: Args) => JsonValue;
  /** Argument lists, edge cases first. */
  inputs: (rng: Rng) => Args[];
}

export function defineAtomic(spec: AtomicSpec): Family {
  return {
    name: spec.name,
    tier: spec.tier,
    kind: 'atomic',
    generate: (rng) => ({
      statement: rng.pick(spec.statements),
      entryPoint: ENTRY_POINT,
      arity: spec.arity,
      tests: spec.inputs(rng).map((args) => ({ args, expected: spec.oracle(args) })),
      strategies: [{ name: 'direct', plan: numberedPlan(spec.plan), code: spec.code }],
      efficiencyTests: [],
      steps: [spec.name],
    }),
  };
}

interface AlgorithmicSpec {
  name: string;
  arity: number;
  statements: string[];
  naive: Approach;
  efficient: Approach;
  oracle: (args: Args) => JsonValue;
  /** Small argument lists, edge cases first. */
  inputs: (rng: Rng) => Args[];
  /** Large argument lists where the naive algorithm costs ≥ 10× the efficient one. */
  largeInputs: (rng: Rng) => Args[];
}

/** L4: two reference strategies for the same statement; the cost differs, the answers don't. */
export function defineAlgorithmic(spec: AlgorithmicSpec): Family {
  const strategy = (name: Strategy['name'], a: Approach): Strategy => ({
    name,
    plan: numberedPlan(a.plan),
    code: a.code,
  });
  return {
    name: spec.name,
    tier: 'L4',
    kind: 'algorithmic',
    generate: (rng) => {
      const small = spec.inputs(rng);
      const large = spec.largeInputs(rng);
      return {
        statement: rng.pick(spec.statements),
        entryPoint: ENTRY_POINT,
        arity: spec.arity,
        tests: [...small, ...large].map((args) => ({ args, expected: spec.oracle(args) })),
        strategies: [strategy('naive', spec.naive), strategy('efficient', spec.efficient)],
        efficiencyTests: large.map((_, i) => small.length + i),
        steps: [spec.name],
      };
    },
  };
}

export const asNumber = (value: JsonValue | undefined): number => value as number;
export const asNumbers = (value: JsonValue | undefined): number[] => value as number[];
export const asText = (value: JsonValue | undefined): string => value as string;
