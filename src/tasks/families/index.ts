// Every family, by tier.
import { algorithmicListFamilies } from './algorithmicLists';
import { algorithmicNumberFamilies } from './algorithmicNumbers';
import { listFamilies } from './atomicLists';
import { numberFamilies } from './atomicNumbers';
import { textFamilies } from './atomicText';
import { compositionFamilies } from './compositions';
import type { Family } from './familyTypes';

export const FAMILIES: readonly Family[] = [
  ...compositionFamilies,
  ...listFamilies,
  ...textFamilies,
  ...numberFamilies,
  ...algorithmicListFamilies,
  ...algorithmicNumberFamilies,
];

export { ENTRY_POINT, type Family, type FamilyKind, numberedPlan } from './familyTypes';
