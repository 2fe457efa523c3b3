// L4 number families: the naive strategy walks every value up to n (or recurses
// exponentially), the efficient one stops at √n, uses a formula, halves, or sieves.
import { asNumber, defineAlgorithmic } from './define';

function isPrime(n: number): boolean {
  if (n < 2) return false;
  for (let d = 2; d * d <= n; d++) if (n % d === 0) return false;
  return true;
}

function nextPrime(n: number): number {
  let p = n;
  while (!isPrime(p)) p++;
  return p;
}

function fibonacci(n: number): number {
  let [a, b] = [0, 1];
  for (let i = 0; i < n; i++) [a, b] = [b, a + b];
  return a;
}

function gcd(x: number, y: number): number {
  let [a, b] = [x, y];
  while (b !== 0) [a, b] = [b, a % b];
  return a;
}

function powerMod(base: number, exponent: number, modulus: number): number {
  let r = 1 % modulus;
  for (let i = 0; i < exponent; i++) r = (r * base) % modulus;
  return r;
}

function countPrimesBelow(n: number): number {
  let count = 0;
  for (let k = 2; k < n; k++) if (isPrime(k)) count++;
  return count;
}

export const algorithmicNumberFamilies = [
  defineAlgorithmic({
    name: 'algo-fibonacci',
    arity: 1,
    statements: [
      'Return the n-th Fibonacci number, where fib(0) is 0 and fib(1) is 1.',
      'Compute fibonacci of n: each number is the sum of the two before it, starting 0, 1.',
    ],
    naive: {
      plan: ['if n is below 2, return n', 'otherwise return fib(n-1) plus fib(n-2)'],
      code: 'function solve(n){return n<2?n:solve(n-1)+solve(n-2)}',
    },
    efficient: {
      plan: ['start with a = 0 and b = 1', 'n times, move a, b to b, a + b', 'return a'],
      code: 'function solve(n){let a=0,b=1;for(let i=0;i<n;i++)[a,b]=[b,a+b];return a}',
    },
    oracle: ([n]) => fibonacci(asNumber(n)),
    inputs: (rng) => [[0], [1], [2], [rng.int(3, 8)], [rng.int(9, 12)], [rng.int(13, 16)]],
    largeInputs: (rng) => [[rng.int(24, 26)]],
  }),
  defineAlgorithmic({
    name: 'algo-is-prime',
    arity: 1,
    statements: [
      'Return true if n is a prime number.',
      'Check whether the integer n has no divisors other than 1 and itself (and is above 1).',
    ],
    naive: {
      plan: [
        'return false if n is below 2',
        'try every divisor from 2 to n - 1',
        'return true if none divides n',
      ],
      code: 'function solve(n){if(n<2)return false;for(let d=2;d<n;d++)if(n%d===0)return false;return true}',
    },
    efficient: {
      plan: [
        'return false if n is below 2',
        'try divisors d from 2 while d * d is at most n',
        'return true if none divides n',
      ],
      code: 'function solve(n){if(n<2)return false;for(let d=2;d*d<=n;d++)if(n%d===0)return false;return true}',
    },
    oracle: ([n]) => isPrime(asNumber(n)),
    inputs: (rng) => [
      [0],
      [1],
      [2],
      [-7],
      [9],
      [13],
      [rng.int(14, 200)],
      [nextPrime(rng.int(100, 1000))],
    ],
    largeInputs: (rng) => [[nextPrime(rng.int(150000, 250000))]],
  }),
  defineAlgorithmic({
    name: 'algo-sum-to-n',
    arity: 1,
    statements: [
      'Return the sum of the whole numbers from 1 to n, for n of 0 or more.',
      'Add up 1 + 2 + ... + n for a non-negative integer n.',
    ],
    naive: {
      plan: ['add every number from 1 to n'],
      code: 'function solve(n){let s=0;for(let i=1;i<=n;i++)s+=i;return s}',
    },
    efficient: {
      plan: ['return n times (n + 1) divided by 2'],
      code: 'function solve(n){return n*(n+1)/2}',
    },
    oracle: ([n]) => (asNumber(n) * (asNumber(n) + 1)) / 2,
    inputs: (rng) => [[0], [1], [2], [10], [rng.int(3, 50)], [rng.int(51, 1000)]],
    largeInputs: (rng) => [[rng.int(300000, 500000)]],
  }),
  defineAlgorithmic({
    name: 'algo-power-mod',
    arity: 3,
    statements: [
      'Return b raised to the power e, modulo m (e is 0 or more, m is at least 2).',
      'Compute (b to the e-th power) mod m without overflowing.',
    ],
    naive: {
      plan: [
        'start the result at 1 mod m',
        'e times, multiply it by b and take mod m',
        'return the result',
      ],
      code: 'function solve(b,e,m){let r=1%m;for(let i=0;i<e;i++)r=r*b%m;return r}',
    },
    efficient: {
      plan: [
        'start the result at 1 mod m and reduce b mod m',
        'while e is above 0, if e is odd multiply the result by b mod m',
        'square b mod m and halve e',
        'return the result',
      ],
      code: 'function solve(b,e,m){let r=1%m;b%=m;while(e>0){if(e%2===1)r=r*b%m;b=b*b%m;e=Math.floor(e/2)}return r}',
    },
    oracle: ([b, e, m]) => powerMod(asNumber(b), asNumber(e), asNumber(m)),
    inputs: (rng) => [
      [2, 0, 5],
      [2, 10, 1000],
      [3, 4, 7],
      [7, 1, 3],
      [rng.int(2, 20), rng.int(2, 30), rng.int(2, 100)],
      [rng.int(2, 999), rng.int(30, 300), rng.int(100, 9999)],
    ],
    largeInputs: (rng) => [[rng.int(2, 999), rng.int(200000, 300000), rng.int(1000, 9999)]],
  }),
  defineAlgorithmic({
    name: 'algo-gcd',
    arity: 2,
    statements: [
      'Return the greatest common divisor of two positive integers.',
      'Find the largest number that divides both a and b (both positive).',
    ],
    naive: {
      plan: ['while a and b differ, subtract the smaller from the larger', 'return a'],
      code: 'function solve(a,b){while(a!==b){if(a>b)a-=b;else b-=a}return a}',
    },
    efficient: {
      plan: ['while b is not 0, set a, b to b, a mod b', 'return a'],
      code: 'function solve(a,b){while(b!==0)[a,b]=[b,a%b];return a}',
    },
    oracle: ([a, b]) => gcd(asNumber(a), asNumber(b)),
    inputs: (rng) => [
      [1, 1],
      [12, 18],
      [7, 13],
      [100, 10],
      [rng.int(1, 60), rng.int(1, 60)],
      [rng.int(2, 30) * 6, rng.int(2, 30) * 4],
    ],
    largeInputs: (rng) => [[rng.int(300000, 400000), rng.pick([1, 2])]],
  }),
  defineAlgorithmic({
    name: 'algo-count-primes',
    arity: 1,
    statements: [
      'Return how many prime numbers are smaller than n.',
      'Count the primes below the integer n.',
    ],
    naive: {
      plan: [
        'for each k from 2 to n - 1, try every divisor below k',
        'count the k with no divisor',
        'return the count',
      ],
      code: 'function solve(n){let c=0;for(let k=2;k<n;k++){let p=true;for(let d=2;d<k;d++)if(k%d===0){p=false;break}if(p)c++}return c}',
    },
    efficient: {
      plan: [
        'mark every number below n as maybe prime',
        'for each unmarked k from 2, count it and cross out its multiples from k * k',
        'return the count',
      ],
      code: 'function solve(n){const s=new Array(Math.max(n,0)).fill(true);let c=0;for(let k=2;k<n;k++){if(!s[k])continue;c++;for(let j=k*k;j<n;j+=k)s[j]=false}return c}',
    },
    oracle: ([n]) => countPrimesBelow(asNumber(n)),
    inputs: (rng) => [[0], [1], [2], [3], [10], [30], [rng.int(4, 100)]],
    largeInputs: (rng) => [[rng.int(3000, 4000)]],
  }),
];
