// Composition families (tiers L1–L3): each slot draws a step from a pool; the number of
// slots is the tier (1 → L1, 2 → L2, 3–4 → L3).
import type { Rng } from '../random';
import type { TaskDraft, Tier } from '../types';
import { composeTask, drawSteps } from './compose';
import type { Family } from './familyTypes';

const FILTERS = [
  'list.even',
  'list.odd',
  'list.positive',
  'list.above',
  'list.below',
  'list.multiple',
];
const MAPS = ['list.square', 'list.double', 'list.add', 'list.sub', 'list.times', 'list.abs'];
const ORDERS = ['list.sortUp', 'list.sortDown', 'list.reverse', 'list.unique'];
const SLICES = ['list.take', 'list.drop'];
const REDUCES = ['list.sum', 'list.count', 'list.max', 'list.min'];
const TEXT_EDITS = [
  'text.lower',
  'text.upper',
  'text.reverse',
  'text.noVowels',
  'text.noSpaces',
  'text.replace',
  'text.take',
];
const TEXT_MEASURES = ['text.length', 'text.vowels'];
const SPLITS = ['text.words'];
const CHAR_STEPS = ['words.sort', 'words.reverse', 'words.unique', 'words.upper'];
const WORD_FILTERS = ['words.longer', 'words.shorter', 'words.startsWith', 'words.unique'];
const WORD_MAPS = ['words.reverseEach', 'words.upper', 'words.capitalize'];
const WORD_ORDERS = ['words.sort', 'words.reverse'];
const JOINS = ['words.joinSpace', 'words.joinDash', 'words.concat'];
const WORD_MEASURES = ['words.count', 'words.totalLength', 'words.longest'];
const NUMBER_LISTS = ['number.digits', 'number.range', 'number.divisors'];

const SPECS: [name: string, slots: string[][]][] = [
  ['list-filter', [FILTERS]],
  ['list-map', [MAPS]],
  ['list-order', [[...ORDERS, ...SLICES]]],
  ['list-reduce', [REDUCES]],
  ['text-edit', [TEXT_EDITS]],
  ['text-measure', [TEXT_MEASURES]],
  ['list-filter-reduce', [FILTERS, REDUCES]],
  ['list-map-reduce', [MAPS, REDUCES]],
  ['list-filter-map', [FILTERS, MAPS]],
  ['list-map-filter', [MAPS, FILTERS]],
  ['list-order-slice', [ORDERS, SLICES]],
  ['text-edit-twice', [TEXT_EDITS, TEXT_EDITS]],
  ['text-edit-measure', [TEXT_EDITS, TEXT_MEASURES]],
  ['words-measure', [SPLITS, WORD_MEASURES]],
  ['number-list-reduce', [NUMBER_LISTS, REDUCES]],
  ['list-filter-map-reduce', [FILTERS, MAPS, REDUCES]],
  ['list-map-filter-reduce', [MAPS, FILTERS, REDUCES]],
  ['list-filter-order-slice', [FILTERS, ORDERS, SLICES]],
  ['list-filter-map-order-slice', [FILTERS, MAPS, ORDERS, SLICES]],
  ['list-filter-map-filter-reduce', [FILTERS, MAPS, FILTERS, REDUCES]],
  ['words-filter-measure', [SPLITS, WORD_FILTERS, WORD_MEASURES]],
  ['words-map-join', [SPLITS, [...WORD_MAPS, ...WORD_ORDERS], JOINS]],
  ['words-filter-map-join', [SPLITS, WORD_FILTERS, WORD_MAPS, JOINS]],
  ['words-lengths-reduce', [['text.words'], ['words.lengths'], [...FILTERS, ...MAPS], REDUCES]],
  ['number-list-filter-reduce', [NUMBER_LISTS, FILTERS, REDUCES]],
  ['chars-edit-join', [['text.chars'], CHAR_STEPS, JOINS]],
];

/**
 * L5: shapes that no family above has — a step kind where the warm start never saw one, or a
 * longer chain. Every step is known (each occurs in L1–L4), so a policy can reach them by
 * composing what it knows; the warm start, which learns from L1–L4 only, solves about a fifth
 * of them when sampling (pass@8 about a third): room for GRPO to show it learns.
 */
const NOVEL_SPECS: [name: string, slots: string[][]][] = [
  ['list-map-map-reduce', [MAPS, MAPS, REDUCES]],
  ['list-filter-filter-reduce', [FILTERS, FILTERS, REDUCES]],
  ['list-map-order-slice', [MAPS, ORDERS, SLICES]],
  ['list-slice-map-reduce', [SLICES, MAPS, REDUCES]],
  ['list-filter-slice-reduce', [FILTERS, SLICES, REDUCES]],
  ['list-map-filter-map-reduce', [MAPS, FILTERS, MAPS, REDUCES]],
  ['list-filter-map-map-reduce', [FILTERS, MAPS, MAPS, REDUCES]],
  ['text-edit-thrice', [TEXT_EDITS, TEXT_EDITS, TEXT_EDITS]],
  ['text-edit-twice-measure', [TEXT_EDITS, TEXT_EDITS, TEXT_MEASURES]],
];

function tierOf(stepCount: number): Tier {
  return stepCount === 1 ? 'L1' : stepCount === 2 ? 'L2' : 'L3';
}

/** Redraws a few times when the tests cannot tell programs apart (e.g. every answer 0). */
function generateVaried(slots: readonly (readonly string[])[], rng: Rng): TaskDraft {
  let draft = composeTask(drawSteps(slots, rng), rng);
  for (let attempt = 0; attempt < 20; attempt++) {
    const distinct = new Set(draft.tests.map((t) => JSON.stringify(t.expected))).size;
    if (distinct >= 4) break;
    draft = composeTask(drawSteps(slots, rng), rng);
  }
  return draft;
}

const composition = (name: string, slots: string[][], tier: Tier): Family => ({
  name,
  tier,
  kind: 'composition',
  slots,
  generate: (rng) => generateVaried(slots, rng),
});

export const compositionFamilies: Family[] = [
  ...SPECS.map(([name, slots]) => composition(name, slots, tierOf(slots.length))),
  ...NOVEL_SPECS.map(([name, slots]) => composition(name, slots, 'L5')),
];
