// L4 list families: the naive strategy compares pairs with nested loops (n² steps), the
// efficient one uses a Set or Map or a single pass (n steps). Naive loops are written as
// explicit JavaScript loops so the sandbox's work counter sees them.
import type { Rng } from '../random';
import type { JsonValue } from '../types';
import { asNumber, asNumbers, defineAlgorithmic } from './define';
import { numberList } from './inputs';

/** Small lists: empty, one, duplicates, negatives, then random. */
function smallLists(rng: Rng): number[][] {
  const x = rng.int(-9, 15);
  return [
    [],
    [x],
    [x, x],
    [3, 1, 4, 1, 5],
    numberList(rng, 4, -12, -1),
    ...Array.from({ length: 3 }, () => numberList(rng, rng.int(3, 9))),
  ];
}

/** n distinct numbers in a shuffled order: the worst case for pairwise search. */
function distinctNumbers(rng: Rng, n: number): number[] {
  return rng.shuffle(Array.from({ length: n }, (_, i) => i * 3 - n));
}

const single = (rng: Rng): JsonValue[][] => smallLists(rng).map((a) => [a]);

function mostFrequent(a: number[]): number | null {
  const counts = new Map<number, number>();
  for (const x of a) counts.set(x, (counts.get(x) ?? 0) + 1);
  let best: number | null = null;
  let bestCount = 0;
  for (const [x, c] of counts) {
    if (c > bestCount || (c === bestCount && best !== null && x < best)) {
      best = x;
      bestCount = c;
    }
  }
  return best;
}

function maxRunSum(a: number[]): number {
  if (a.length === 0) return 0;
  let best = a[0] ?? 0;
  for (let i = 0; i < a.length; i++) {
    let s = 0;
    for (let j = i; j < a.length; j++) {
      s += a[j] ?? 0;
      best = Math.max(best, s);
    }
  }
  return best;
}

export const algorithmicListFamilies = [
  defineAlgorithmic({
    name: 'algo-has-duplicates',
    arity: 1,
    statements: [
      'Return true if some number appears more than once in the list.',
      'Check whether a list of numbers contains a duplicate.',
      'Does any value occur twice in the array? Return true or false.',
    ],
    naive: {
      plan: [
        'compare every pair of numbers',
        'return true if two are equal',
        'otherwise return false',
      ],
      code: 'function solve(a){for(let i=0;i<a.length;i++)for(let j=i+1;j<a.length;j++)if(a[i]===a[j])return true;return false}',
    },
    efficient: {
      plan: ['put the numbers in a set', 'return whether the set is smaller than the list'],
      code: 'function solve(a){return new Set(a).size<a.length}',
    },
    oracle: ([a]) => new Set(asNumbers(a)).size < asNumbers(a).length,
    inputs: single,
    largeInputs: (rng) => [[distinctNumbers(rng, 1200)]],
  }),
  defineAlgorithmic({
    name: 'algo-two-sum',
    arity: 2,
    statements: [
      'Return true if two numbers at different positions in the list add up to the target.',
      'Given a list and a target, check whether any pair of entries sums to the target.',
    ],
    naive: {
      plan: [
        'try every pair of positions',
        'return true if the pair adds up to the target',
        'otherwise return false',
      ],
      code: 'function solve(a,t){for(let i=0;i<a.length;i++)for(let j=i+1;j<a.length;j++)if(a[i]+a[j]===t)return true;return false}',
    },
    efficient: {
      plan: [
        'keep a set of numbers seen so far',
        'for each number, return true if target minus it is in the set',
        'add the number to the set',
        'return false at the end',
      ],
      code: 'function solve(a,t){const s=new Set();for(const x of a){if(s.has(t-x))return true;s.add(x)}return false}',
    },
    oracle: ([value, target]) => {
      const a = asNumbers(value);
      const seen = new Set<number>();
      for (const x of a) {
        if (seen.has(asNumber(target) - x)) return true;
        seen.add(x);
      }
      return false;
    },
    inputs: (rng) => [
      [[], 5],
      [[5], 10],
      [[5, 5], 10],
      [[1, 2, 3], 7],
      [[-3, 8, 1], 5],
      ...smallLists(rng)
        .slice(5)
        .map((a) => [a, rng.int(-5, 20)]),
    ],
    // All even, odd target: no pair exists, so the naive search tries every pair.
    largeInputs: (rng) => [[distinctNumbers(rng, 1200).map((x) => x * 2), 2 * rng.int(0, 500) + 1]],
  }),
  defineAlgorithmic({
    name: 'algo-count-distinct',
    arity: 1,
    statements: [
      'Return how many different values the list contains.',
      'Count the distinct numbers in a list.',
    ],
    naive: {
      plan: [
        'for each number, look back for an earlier equal number',
        'count the numbers with none',
        'return the count',
      ],
      code: 'function solve(a){let c=0;for(let i=0;i<a.length;i++){let j=0;while(j<i&&a[j]!==a[i])j++;if(j===i)c++}return c}',
    },
    efficient: {
      plan: ['put the numbers in a set', 'return the size of the set'],
      code: 'function solve(a){return new Set(a).size}',
    },
    oracle: ([a]) => new Set(asNumbers(a)).size,
    inputs: single,
    largeInputs: (rng) => [[distinctNumbers(rng, 1200)]],
  }),
  defineAlgorithmic({
    name: 'algo-max-run-sum',
    arity: 1,
    statements: [
      'Return the largest sum of a run of consecutive numbers in the list (0 for an empty list).',
      'Find the maximum total of any non-empty contiguous stretch of the array; return 0 if it is empty.',
    ],
    naive: {
      plan: [
        'for each start, add up the numbers from there to every end',
        'keep the largest sum seen',
        'return it (0 if empty)',
      ],
      code: 'function solve(a){if(!a.length)return 0;let b=a[0];for(let i=0;i<a.length;i++){let s=0;for(let j=i;j<a.length;j++){s+=a[j];if(s>b)b=s}}return b}',
    },
    efficient: {
      plan: [
        'walk once, keeping the best sum ending here',
        'extend it or restart at the current number',
        'keep the largest sum seen',
        'return it (0 if empty)',
      ],
      code: 'function solve(a){if(!a.length)return 0;let b=a[0],c=0;for(const x of a){c=Math.max(x,c+x);b=Math.max(b,c)}return b}',
    },
    oracle: ([a]) => maxRunSum(asNumbers(a)),
    inputs: single,
    largeInputs: (rng) => [[numberList(rng, 1000, -50, 50)]],
  }),
  defineAlgorithmic({
    name: 'algo-most-frequent',
    arity: 1,
    statements: [
      'Return the number that occurs most often; on a tie the smaller one; null for an empty list.',
      'Find the most common value in a list (smallest on ties, null when empty).',
    ],
    naive: {
      plan: [
        'for each number, count its copies by scanning the whole list',
        'keep the number with the most copies, smaller on ties',
        'return it (null if empty)',
      ],
      code: 'function solve(a){let b=null,m=0;for(let i=0;i<a.length;i++){let c=0;for(let j=0;j<a.length;j++)if(a[j]===a[i])c++;if(c>m||(c===m&&a[i]<b)){b=a[i];m=c}}return b}',
    },
    efficient: {
      plan: [
        'count each number in a map',
        'keep the number with the most copies, smaller on ties',
        'return it (null if empty)',
      ],
      code: 'function solve(a){const m=new Map();for(const x of a)m.set(x,(m.get(x)||0)+1);let b=null,n=0;for(const [x,c] of m)if(c>n||(c===n&&x<b)){b=x;n=c}return b}',
    },
    oracle: ([a]) => mostFrequent(asNumbers(a)),
    inputs: single,
    largeInputs: (rng) => [[numberList(rng, 1000, 0, 5000)]],
  }),
];
