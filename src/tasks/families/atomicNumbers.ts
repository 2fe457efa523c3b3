// Hand-written number functions (L1–L3): factorial, reversed digits, Collatz, FizzBuzz.
import { asNumber, defineAtomic } from './define';

function factorial(n: number): number {
  let p = 1;
  for (let i = 2; i <= n; i++) p *= i;
  return p;
}

function collatzSteps(start: number): number {
  let n = start;
  let count = 0;
  while (n !== 1) {
    n = n % 2 === 0 ? n / 2 : 3 * n + 1;
    count++;
  }
  return count;
}

export const numberFamilies = [
  defineAtomic({
    name: 'number-factorial',
    tier: 'L1',
    arity: 1,
    statements: [
      'Return the factorial of n, the product of the whole numbers from 1 to n.',
      'Multiply all whole numbers from 1 up to n and return the product.',
      'Compute n factorial for a non-negative integer n (0 factorial is 1).',
    ],
    plan: ['multiply the numbers from 1 to n'],
    code: 'function solve(n){let p=1;for(let i=2;i<=n;i++)p*=i;return p}',
    oracle: ([n]) => factorial(asNumber(n)),
    inputs: (rng) => [
      [0],
      [1],
      [2],
      [rng.int(3, 6)],
      [rng.int(7, 10)],
      [rng.int(11, 14)],
      [rng.int(15, 18)],
    ],
  }),
  defineAtomic({
    name: 'number-reverse-digits',
    tier: 'L2',
    arity: 1,
    statements: [
      'Reverse the digits of a non-negative integer n and return the new number.',
      'Given a whole number, write its digits backwards and return that number.',
      'Return the number you get by reading the digits of n from right to left.',
    ],
    plan: ['write its digits in reverse order', 'turn them back into a number'],
    code: "function solve(n){const d=String(n).split('').reverse().join('');return Number(d)}",
    oracle: ([n]) => Number(String(n).split('').reverse().join('')),
    inputs: (rng) => [
      [0],
      [7],
      [10],
      [1200],
      [12321],
      [rng.int(11, 99)],
      [rng.int(100, 999)],
      [rng.int(1000, 99999)],
    ],
  }),
  defineAtomic({
    name: 'number-collatz',
    tier: 'L3',
    arity: 1,
    statements: [
      'Count the steps to reach 1 from n, halving even numbers and turning odd n into 3n+1.',
      'Starting at a positive n, repeatedly halve it if even or make it 3n+1 if odd; return how many steps reach 1.',
    ],
    plan: [
      'start a count at 0',
      'while n is not 1, halve n if even, else make it 3n+1',
      'add 1 to the count each time',
      'return the count',
    ],
    code: 'function solve(n){let c=0;while(n!==1){n=n%2===0?n/2:3*n+1;c++}return c}',
    oracle: ([n]) => collatzSteps(asNumber(n)),
    inputs: (rng) => [
      [1],
      [2],
      [3],
      [6],
      [27],
      [rng.int(4, 50)],
      [rng.int(51, 200)],
      [rng.int(201, 999)],
    ],
  }),
  defineAtomic({
    name: 'number-fizzbuzz',
    tier: 'L3',
    arity: 1,
    statements: [
      'Return "FizzBuzz" if n is divisible by 15, "Fizz" if by 3, "Buzz" if by 5, else n as text.',
      'Play FizzBuzz for one number n: Fizz for multiples of 3, Buzz for 5, FizzBuzz for both, otherwise the number as a string.',
    ],
    plan: [
      'if n is divisible by 15, return FizzBuzz',
      'if it is divisible by 3, return Fizz',
      'if it is divisible by 5, return Buzz',
      'otherwise return n as a string',
    ],
    code: "function solve(n){if(n%15===0)return 'FizzBuzz';if(n%3===0)return 'Fizz';if(n%5===0)return 'Buzz';return String(n)}",
    oracle: ([value]) => {
      const n = asNumber(value);
      return n % 15 === 0 ? 'FizzBuzz' : n % 3 === 0 ? 'Fizz' : n % 5 === 0 ? 'Buzz' : String(n);
    },
    inputs: (rng) => [[1], [3], [5], [15], [0], [-9], [rng.int(16, 99)], [rng.int(100, 300)]],
  }),
];
