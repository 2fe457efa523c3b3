// Broken versions of a reference program for the Debugger's warm start, the kinds of slip
// a Coder makes: a swapped operator, a shifted bound, a changed constant, a missing step
// (one chained call such as `.map(x=>x*2)` or one `;`-statement dropped). The task world's
// references are compact one-liners (`function solve(a){return a.map(x=>x*3)}`), so each
// mutation is a text edit at one seeded site; a mutant that still passes every test is
// discarded by whoever judges it (debuggerExamples).
import type { Rng } from '../../tasks/random';

export type MutationKind = 'operator' | 'bound' | 'constant' | 'missing_step';
export const MUTATION_KINDS: readonly MutationKind[] = [
  'operator',
  'bound',
  'constant',
  'missing_step',
];

const OPERATOR_SWAPS: readonly [RegExp, string[]][] = [
  [/===/g, ['!==']],
  [/!==/g, ['===']],
  [/(?<![+=])\+(?![+=])/g, ['-', '*']],
  [/(?<![-=>])-(?![-=>])/g, ['+']],
  [/(?<!\*)\*(?![*=])/g, ['+']],
  [/%/g, ['/']],
  [/&&/g, ['||']],
  [/\|\|/g, ['&&']],
];
const BOUND_SWAPS: readonly [RegExp, string[]][] = [
  [/<=/g, ['<']],
  [/>=/g, ['>']],
  [/<(?!=)/g, ['<=', '>']],
  [/(?<!=)>(?!=)/g, ['>=', '<']],
];
const STEP_METHODS =
  /\.(map|filter|reduce|sort|reverse|slice|join|split|toUpperCase|toLowerCase|trim)\(/g;

function sites(code: string, pattern: RegExp): { index: number; length: number }[] {
  return [...code.matchAll(pattern)].map((m) => ({ index: m.index ?? 0, length: m[0].length }));
}

function swapOne(code: string, table: readonly [RegExp, string[]][], rng: Rng): string | null {
  const all = table.flatMap(([pattern, replacements]) =>
    sites(code, pattern).map((site) => ({ ...site, replacements })),
  );
  if (all.length === 0) return null;
  const site = all[rng.below(all.length)]!;
  const replacement = site.replacements[rng.below(site.replacements.length)]!;
  return code.slice(0, site.index) + replacement + code.slice(site.index + site.length);
}

/** Index just past the parenthesis that closes the one opened at `open`, or -1. */
function closing(code: string, open: number): number {
  let depth = 0;
  for (let i = open; i < code.length; i++) {
    if (code[i] === '(') depth++;
    else if (code[i] === ')' && --depth === 0) return i + 1;
  }
  return -1;
}

function dropStep(code: string, rng: Rng): string | null {
  const calls = sites(code, STEP_METHODS).flatMap((site) => {
    const end = closing(code, site.index + site.length - 1);
    return end < 0 ? [] : [{ start: site.index, end }];
  });
  if (calls.length > 0) {
    const call = calls[rng.below(calls.length)]!;
    return code.slice(0, call.start) + code.slice(call.end);
  }
  // Else drop one statement of the body (not the last, which returns).
  const body = code.indexOf('{');
  const parts = code.slice(body + 1).split(';');
  if (body < 0 || parts.length < 3) return null;
  const drop = 1 + rng.below(parts.length - 2);
  return code.slice(0, body + 1) + parts.filter((_, i) => i !== drop).join(';');
}

/** One mutant of `code` of the given kind, or null when the program has no site for it. */
export function mutate(code: string, kind: MutationKind, rng: Rng): string | null {
  switch (kind) {
    case 'operator':
      return swapOne(code, OPERATOR_SWAPS, rng);
    case 'bound':
      return swapOne(code, BOUND_SWAPS, rng);
    case 'constant': {
      const numbers = sites(code, /\b\d+\b/g);
      if (numbers.length === 0) return null;
      const site = numbers[rng.below(numbers.length)]!;
      const value = Number(code.slice(site.index, site.index + site.length));
      const next = value === 0 ? 1 : rng.chance(0.5) ? value + 1 : value - 1;
      return code.slice(0, site.index) + String(next) + code.slice(site.index + site.length);
    }
    case 'missing_step':
      return dropStep(code, rng);
  }
}
