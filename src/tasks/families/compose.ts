// Turns a chain of steps into a task: statement from step clauses, numbered plan from step
// plan lines, and code that follows the plan one statement per step:
//   function solve(a){const b=a.filter(x=>x%2===0);const c=b.map(x=>x*x);return c.reduce((s,x)=>s+x,0)}
import type { Rng } from '../random';
import { type Param, type StepDef, stepByKind, type ValueType } from '../steps';
import type { JsonValue, TaskDraft } from '../types';
import { ENTRY_POINT, numberedPlan } from './familyTypes';
import { inputsFor } from './inputs';

export interface StepUse {
  step: StepDef;
  params: Param[];
}

const FRAMES: Partial<Record<ValueType, string[]>> = {
  nums: [
    'Given a list of numbers, {c}.',
    'Take a list of integers; {c}.',
    'You get an array of numbers: {c}.',
    'For a list of numbers, {c}, and return the result.',
  ],
  str: [
    'Given a string, {c}.',
    'Take a piece of text; {c}.',
    'You get a sentence: {c}.',
    'For a string, {c}, and return the result.',
  ],
  num: [
    'Given a whole number n, {c}.',
    'Take an integer n; {c}.',
    'For a number n, {c}, and return the result.',
  ],
};

/** Variable names for the input and each intermediate value. */
const VARS = ['a', 'b', 'c', 'd', 'e'];

function joinClauses(clauses: string[], rng: Rng): string {
  if (clauses.length === 1) return clauses[0] ?? '';
  const last = clauses[clauses.length - 1];
  const head = clauses.slice(0, -1).join(', ');
  return rng.chance(0.5) ? `${head}, then ${last}` : `${head} and ${last}`;
}

export function composeCode(uses: readonly StepUse[]): string {
  const body = uses.map(({ step, params }, i) => {
    const expr = step.code(VARS[i] ?? 'a', params);
    return i === uses.length - 1 ? `return ${expr}` : `const ${VARS[i + 1]}=${expr};`;
  });
  return `function ${ENTRY_POINT}(a){${body.join('')}}`;
}

export function composePlan(uses: readonly StepUse[]): string {
  return numberedPlan(uses.map(({ step, params }) => step.plan(params)));
}

export function applySteps(uses: readonly StepUse[], input: unknown): JsonValue {
  return uses.reduce((value, { step, params }) => step.apply(value, params), input) as JsonValue;
}

/** A task from a chain of steps; tests come from the first step's input type. */
export function composeTask(uses: readonly StepUse[], rng: Rng): TaskDraft {
  const first = uses[0];
  if (!first) throw new Error('composeTask: no steps');
  // Long chains skip the wordier frames to keep statements near 25 words.
  const frames = (FRAMES[first.step.from] ?? []).filter(
    (f) => uses.length < 3 || !f.includes('result'),
  );
  const frame = rng.pick(frames);
  const clauses = uses.map(({ step, params }) => rng.pick(step.clauses)(params));
  const code = composeCode(uses);
  return {
    statement: frame.replace('{c}', joinClauses(clauses, rng)),
    entryPoint: ENTRY_POINT,
    arity: 1,
    tests: inputsFor(first.step.from, rng).map((input) => ({
      args: [input as JsonValue],
      expected: applySteps(uses, input),
    })),
    strategies: [{ name: 'direct', plan: composePlan(uses), code }],
    efficiencyTests: [],
    steps: uses.map(({ step }) => step.kind),
  };
}

/** Draws one distinct step kind per slot, with its parameters. */
export function drawSteps(slots: readonly (readonly string[])[], rng: Rng): StepUse[] {
  const used = new Set<string>();
  return slots.map((pool) => {
    const choices = pool.filter((kind) => !used.has(kind));
    const kind = rng.pick(choices.length ? choices : pool);
    used.add(kind);
    const step = stepByKind(kind);
    return { step, params: step.params(rng) };
  });
}
