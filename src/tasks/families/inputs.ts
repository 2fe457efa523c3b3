// Seeded test inputs per value type, always including the edge cases that catch
// careless code: empty input, one element, duplicates, negatives.
import type { Rng } from '../random';
import type { ValueType } from '../steps';

const WORDS = [
  'the',
  'cat',
  'sat',
  'on',
  'a',
  'mat',
  'big',
  'red',
  'dog',
  'ran',
  'to',
  'sea',
  'blue',
  'sky',
  'apple',
  'tree',
  'stone',
  'bird',
  'code',
  'data',
  'sun',
  'moon',
  'star',
  'tea',
  'cup',
  'book',
  'desk',
  'door',
  'lamp',
  'bread',
  'salt',
  'train',
  'cloud',
  'ice',
];

export function numberList(rng: Rng, length: number, lo = -9, hi = 15): number[] {
  return rng.ints(length, lo, hi);
}

function numberLists(rng: Rng): unknown[] {
  const x = rng.int(-9, 15);
  const y = rng.int(-9, 15);
  return [
    [],
    [x],
    [y, x, y, 4, y],
    numberList(rng, rng.int(2, 5), -12, -1),
    ...Array.from({ length: 4 }, () => numberList(rng, rng.int(3, 8))),
  ];
}

export function sentence(rng: Rng, words: number): string {
  return Array.from({ length: words }, () => rng.pick(WORDS)).join(' ');
}

function texts(rng: Rng): unknown[] {
  const word = rng.pick(WORDS);
  const capital = sentence(rng, 3).replace(/^./, (c) => c.toUpperCase());
  return [
    '',
    word,
    `${word} ${rng.pick(WORDS)} ${word}`,
    capital,
    ...Array.from({ length: 4 }, () => sentence(rng, rng.int(2, 6))),
  ];
}

function wholeNumbers(rng: Rng): unknown[] {
  return [
    0,
    1,
    -rng.int(2, 30),
    12,
    rng.int(2, 99),
    rng.int(2, 99),
    rng.int(100, 999),
    rng.int(100, 400),
  ];
}

/** One argument per test for a task whose input is of this type. */
export function inputsFor(type: ValueType, rng: Rng): unknown[] {
  switch (type) {
    case 'nums':
      return numberLists(rng);
    case 'str':
      return texts(rng);
    case 'num':
      return wholeNumbers(rng);
    default:
      throw new Error(`no input generator for ${type}`);
  }
}
