// Steps that start from one whole number and produce a list of numbers (num → nums).
import { defineStep, type StepDef } from './stepTypes';

const oneTo = (n: number) => Array.from({ length: Math.max(0, n) }, (_, i) => i + 1);

export const numberSteps: StepDef[] = [
  defineStep<number, number[]>({
    kind: 'number.digits',
    from: 'num',
    to: 'nums',
    plan: () => 'take its digits',
    clauses: [() => 'take its digits', () => 'split it into its decimal digits'],
    code: (v) => `String(Math.abs(${v})).split('').map(Number)`,
    apply: (n) => String(Math.abs(n)).split('').map(Number),
  }),
  defineStep<number, number[]>({
    kind: 'number.range',
    from: 'num',
    to: 'nums',
    plan: () => 'list the numbers from 1 to n',
    clauses: [() => 'list the numbers from 1 up to n', () => 'count from 1 to n'],
    code: (v) => `Array.from({length:${v}},(_,i)=>i+1)`,
    apply: oneTo,
  }),
  defineStep<number, number[]>({
    kind: 'number.divisors',
    from: 'num',
    to: 'nums',
    plan: () => 'list the divisors of n',
    clauses: [() => 'list the divisors of n', () => 'find every number that divides n'],
    code: (v) => `Array.from({length:${v}},(_,i)=>i+1).filter(x=>${v}%x===0)`,
    apply: (n) => oneTo(n).filter((x) => n % x === 0),
  }),
];
