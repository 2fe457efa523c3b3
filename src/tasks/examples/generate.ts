// The examples world's tasks: a hidden chain of steps (space.ts), stated only as the function's
// signature and 3–5 input/output examples that no other chain of the same or shorter length
// fits (fits.ts). The hidden tests (the procedural world's list inputs, with their edge cases)
// and the examples judge a program; the reference plan and code are the chain's.
//
// Splits (ExeDec's style), fixed by the task's seed and index:
// - train: 1–2 steps, never a held-out family pair;
// - validation: the same distribution, drawn from another stream (the `examples` suite);
// - length: one step longer than any training chain (no held-out pair);
// - compose: 2 steps combining a family pair training never combines.
import { composeCode, composePlan, type StepUse } from '../families/compose';
import { ENTRY_POINT } from '../families/familyTypes';
import { inputsFor } from '../families/inputs';
import { Rng } from '../random';
import { taskSignature } from '../signature';
import type { JsonValue, Task, TaskTest, Tier } from '../types';
import { countFittingChains, type ExamplePair } from './fits';
import {
  applyChain,
  combinesHeldOutPair,
  INSTANCES,
  LENGTH_SPLIT_LENGTH,
  LIST_STEPS,
  REDUCE_STEPS,
  type StepInstance,
  TRAIN_LENGTHS,
} from './space';

export const EXAMPLES_SPLITS = ['train', 'validation', 'length', 'compose'] as const;
export type ExamplesSplit = (typeof EXAMPLES_SPLITS)[number];

export const MIN_EXAMPLES = 3;
export const MAX_EXAMPLES = 5;
const MAX_ATTEMPTS = 500;

/** Drawn chain length per split: training favours two steps (one step is quickly learned). */
function drawLength(split: ExamplesSplit, rng: Rng): number {
  if (split === 'length') return LENGTH_SPLIT_LENGTH;
  if (split === 'compose') return 2;
  return rng.chance(0.3) ? TRAIN_LENGTHS[0] : TRAIN_LENGTHS[1];
}

function drawChain(length: number, rng: Rng): StepInstance[] {
  const chain = Array.from({ length: length - 1 }, () => rng.pick(LIST_STEPS));
  // The last step reduces the list to a number about half of the time.
  chain.push(rng.chance(0.5) ? rng.pick(REDUCE_STEPS) : rng.pick(LIST_STEPS));
  return chain;
}

/** A chain of the given step families ('map-reduce'), each step drawn within its family. */
function drawChainOf(family: string, rng: Rng): StepInstance[] {
  return family.split('-').map((name) => {
    const within = INSTANCES.filter((i) => i.family === name);
    if (within.length === 0) throw new Error(`no step family '${name}' (in '${family}')`);
    return rng.pick(within);
  });
}

function fitsSplit(chain: readonly StepInstance[], split: ExamplesSplit): boolean {
  return split === 'compose' ? combinesHeldOutPair(chain) : !combinesHeldOutPair(chain);
}

/** Example inputs: short lists of small integers, different from one another. */
function exampleInput(rng: Rng): number[] {
  return rng.ints(rng.int(3, 6), -4, 12);
}

export function formatExample(pair: TaskTest): string {
  return `${ENTRY_POINT}(${JSON.stringify(pair.args[0])}) = ${JSON.stringify(pair.expected)}`;
}

/** The statement: the signature and the examples, one per line; nothing names the steps. */
export function examplesStatement(examples: readonly TaskTest[]): string {
  return [
    taskSignature({ entryPoint: ENTRY_POINT, arity: 1, tests: [...examples] }),
    ...examples.map(formatExample),
  ].join('\n');
}

const tierOf = (length: number): Tier => (length === 1 ? 'L1' : length === 2 ? 'L2' : 'L3');

/**
 * The fewest examples (3–5) of these inputs after which only `chain` fits among the chains of
 * its length or shorter; null when five do not single it out.
 */
function uniqueExamples(chain: readonly StepInstance[], inputs: number[][]): ExamplePair[] | null {
  const pairs = inputs.map((input) => ({
    input,
    output: applyChain(chain, input) as number[] | number,
  }));
  // Examples whose outputs are all alike show nothing.
  if (new Set(pairs.map((p) => JSON.stringify(p.output))).size < 2) return null;
  for (let k = MIN_EXAMPLES; k <= MAX_EXAMPLES; k++) {
    if (countFittingChains(pairs.slice(0, k), chain.length).count === 1) return pairs.slice(0, k);
  }
  return null;
}

export interface ExamplesTaskOptions {
  split: ExamplesSplit;
  seed: number;
  /**
   * Only chains of these step families, joined by '-' ('map-reduce'): a stream of its own
   * (the training stream draws each family by the family mix, mix.ts). Absent: any chain.
   */
  family?: string | undefined;
}

/** Task `index` of a seeded stream of one split (of one family of it, with `family`). */
export function generateExamplesTask(options: ExamplesTaskOptions, index: number): Task {
  const { split, seed, family } = options;
  for (let attempt = 0; attempt < MAX_ATTEMPTS; attempt++) {
    const rng =
      family === undefined
        ? Rng.derive(seed, 'examples', split, index, attempt)
        : Rng.derive(seed, 'examples', split, family, index, attempt);
    const chain =
      family === undefined ? drawChain(drawLength(split, rng), rng) : drawChainOf(family, rng);
    if (!fitsSplit(chain, split)) continue;
    const pairs = uniqueExamples(
      chain,
      Array.from({ length: MAX_EXAMPLES }, () => exampleInput(rng)),
    );
    if (!pairs) continue;
    const examples: TaskTest[] = pairs.map((p) => ({
      args: [p.input],
      expected: p.output as JsonValue,
    }));
    const hidden: TaskTest[] = inputsFor('nums', rng).map((input) => ({
      args: [input as JsonValue],
      expected: applyChain(chain, input) as JsonValue,
    }));
    const uses: StepUse[] = chain.map(({ step, params }) => ({ step, params }));
    return {
      id:
        family === undefined
          ? `examples-${split}:${seed}:${index}`
          : `examples-${split}:${seed}:${family}:${index}`,
      family: `examples-${chain.map((i) => i.family).join('-')}`,
      tier: tierOf(chain.length),
      statement: examplesStatement(examples),
      entryPoint: ENTRY_POINT,
      arity: 1,
      examples,
      tests: [...examples, ...hidden],
      strategies: [{ name: 'direct', plan: composePlan(uses), code: composeCode(uses) }],
      efficiencyTests: [],
      steps: chain.map((i) => i.step.kind),
    };
  }
  const of = family === undefined ? '' : ` of family ${family}`;
  throw new Error(`could not draw an examples-${split} task${of} (seed ${seed}, index ${index})`);
}

export function generateExamplesTasks(options: ExamplesTaskOptions, count: number): Task[] {
  return Array.from({ length: count }, (_, i) => generateExamplesTask(options, i));
}
