// The step library: every step by kind.
import { listSteps } from './listSteps';
import { numberSteps } from './numberSteps';
import type { StepDef } from './stepTypes';
import { stringSteps } from './stringSteps';

export const STEPS: readonly StepDef[] = [...listSteps, ...stringSteps, ...numberSteps];

const byKind = new Map(STEPS.map((step) => [step.kind, step]));

export function isStepKind(kind: string): boolean {
  return byKind.has(kind);
}

export function stepByKind(kind: string): StepDef {
  const step = byKind.get(kind);
  if (!step) throw new Error(`unknown step kind "${kind}"`);
  return step;
}

export { lit, type Param, type StepDef, type ValueType } from './stepTypes';
