// Hand-written list functions (L1–L3): order checks, running totals, pairwise work,
// rotation, second largest.
import type { Rng } from '../random';
import type { JsonValue } from '../types';
import { asNumber, asNumbers, defineAtomic } from './define';
import { numberList } from './inputs';

/** Edge cases first (empty, one, duplicates, negatives), then random lists. */
function lists(rng: Rng): number[][] {
  const x = rng.int(-9, 15);
  return [
    [],
    [x],
    [x, x, 2, x],
    numberList(rng, 4, -12, -1),
    [1, 2, 2, 5],
    ...Array.from({ length: 3 }, () => numberList(rng, rng.int(3, 8))),
  ];
}

const single = (rng: Rng): JsonValue[][] => lists(rng).map((a) => [a]);

export const listFamilies = [
  defineAtomic({
    name: 'list-is-sorted',
    tier: 'L1',
    arity: 1,
    statements: [
      'Return true if the list of numbers is in non-decreasing order.',
      'Check whether every number is at least as big as the one before it.',
    ],
    plan: ['check each number is at least the one before it'],
    code: 'function solve(a){return a.every((x,i)=>i===0||a[i-1]<=x)}',
    oracle: ([a]) => asNumbers(a).every((x, i, all) => i === 0 || (all[i - 1] ?? x) <= x),
    inputs: single,
  }),
  defineAtomic({
    name: 'list-running-total',
    tier: 'L1',
    arity: 1,
    statements: [
      'Replace each number in a list by the sum of it and everything before it.',
      'Return the running totals of a list of numbers.',
    ],
    plan: ['replace each number by the sum up to it'],
    code: 'function solve(a){let s=0;return a.map(x=>s+=x)}',
    oracle: ([a]) => {
      let s = 0;
      return asNumbers(a).map((x) => {
        s += x;
        return s;
      });
    },
    inputs: single,
  }),
  defineAtomic({
    name: 'list-differences',
    tier: 'L1',
    arity: 1,
    statements: [
      'Return the differences between neighbouring numbers: each number minus the one before it.',
      'For a list of numbers, list how much each value changes from the previous one.',
    ],
    plan: ['subtract each number from the next'],
    code: 'function solve(a){return a.slice(1).map((x,i)=>x-a[i])}',
    oracle: ([value]) => {
      const a = asNumbers(value);
      return a.slice(1).map((x, i) => x - (a[i] ?? 0));
    },
    inputs: single,
  }),
  defineAtomic({
    name: 'list-zip-add',
    tier: 'L1',
    arity: 2,
    statements: [
      'Given two lists of the same length, add them position by position.',
      'Return a list whose i-th number is the sum of the i-th numbers of the two lists.',
    ],
    plan: ['add the two lists position by position'],
    code: 'function solve(a,b){return a.map((x,i)=>x+b[i])}',
    oracle: ([a, b]) => asNumbers(a).map((x, i) => x + (asNumbers(b)[i] ?? 0)),
    inputs: (rng) => lists(rng).map((a) => [a, numberList(rng, a.length)]),
  }),
  defineAtomic({
    name: 'list-rotate',
    tier: 'L2',
    arity: 2,
    statements: [
      'Rotate a list left by k places: the first k numbers move to the end.',
      'Given a list and a count k, move the first k items to the back, wrapping k around the length.',
    ],
    plan: ['take k modulo the length', 'move the first k numbers to the end'],
    code: 'function solve(a,k){const r=a.length?k%a.length:0;return a.slice(r).concat(a.slice(0,r))}',
    oracle: ([value, k]) => {
      const a = asNumbers(value);
      const r = a.length ? asNumber(k) % a.length : 0;
      return [...a.slice(r), ...a.slice(0, r)];
    },
    inputs: (rng) => lists(rng).map((a, i) => [a, i === 0 ? 3 : rng.int(0, 10)]),
  }),
  defineAtomic({
    name: 'list-second-largest',
    tier: 'L3',
    arity: 1,
    statements: [
      'Return the second largest distinct number in a list, or null if there is none.',
      'Find the biggest value that is smaller than the maximum; null when no such value exists.',
    ],
    plan: [
      'remove duplicates',
      'sort them from largest to smallest',
      'take the second one (null if none)',
    ],
    code: 'function solve(a){const b=[...new Set(a)];const c=b.sort((x,y)=>y-x);return c.length>1?c[1]:null}',
    oracle: ([a]) => {
      const sorted = [...new Set(asNumbers(a))].sort((x, y) => y - x);
      return sorted.length > 1 ? (sorted[1] ?? null) : null;
    },
    inputs: single,
  }),
];
