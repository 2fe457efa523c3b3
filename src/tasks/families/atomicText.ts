// Hand-written string functions (L1–L2): palindromes, character counts, anagrams.
import type { Rng } from '../random';
import { asText, defineAtomic } from './define';
import { sentence } from './inputs';

const sortLetters = (s: string) => [...s].sort().join('');
const reverseText = (s: string) => [...s].reverse().join('');

function word(rng: Rng): string {
  return sentence(rng, 1);
}

export const textFamilies = [
  defineAtomic({
    name: 'text-palindrome',
    tier: 'L2',
    arity: 1,
    statements: [
      'Check whether a word reads the same forwards and backwards.',
      'Return true if the string is a palindrome, false otherwise.',
      'Does the text equal itself written backwards? Return true or false.',
    ],
    plan: ['reverse the string', 'check it equals the original'],
    code: "function solve(s){const r=[...s].reverse().join('');return r===s}",
    oracle: ([s]) => reverseText(asText(s)) === s,
    inputs: (rng) => {
      const w = word(rng);
      return [
        [''],
        ['a'],
        ['level'],
        ['abba'],
        ['ab'],
        [w],
        [w + reverseText(w)],
        [`${w}x${reverseText(w)}`],
      ];
    },
  }),
  defineAtomic({
    name: 'text-count-char',
    tier: 'L1',
    arity: 2,
    statements: [
      'Count how many times the character c appears in the string s.',
      'Given a text and one letter, return how often the letter occurs in the text.',
    ],
    plan: ['count how many times c appears in s'],
    code: 'function solve(s,c){return s.split(c).length-1}',
    oracle: ([s, c]) => asText(s).split(asText(c)).length - 1,
    inputs: (rng) => [
      ['', 'a'],
      ['a', 'a'],
      ['banana', 'a'],
      ['xyz', 'q'],
      [sentence(rng, 4), rng.pick(['a', 'e', 't', ' '])],
      [sentence(rng, 5), rng.pick(['o', 's', 'r'])],
      [sentence(rng, 3), rng.pick(['a', 'd', 'n'])],
    ],
  }),
  defineAtomic({
    name: 'text-anagram',
    tier: 'L2',
    arity: 2,
    statements: [
      'Return true if two words use exactly the same letters, each the same number of times.',
      'Check whether the second string is an anagram of the first.',
    ],
    plan: ['sort the letters of each word', 'check the two results are equal'],
    code: "function solve(a,b){const x=[...a].sort().join('');return x===[...b].sort().join('')}",
    oracle: ([a, b]) => sortLetters(asText(a)) === sortLetters(asText(b)),
    inputs: (rng) => {
      const w = word(rng);
      return [
        ['', ''],
        ['a', 'a'],
        ['listen', 'silent'],
        ['aab', 'abb'],
        [w, reverseText(w)],
        [w, `${w}s`],
        [w, word(rng)],
        [w, rng.shuffle([...w]).join('')],
      ];
    },
  }),
];
