// Every family, by tier.
import type { Tier } from '../types';
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

export function familiesOfTier(tier: Tier): Family[] {
  return FAMILIES.filter((family) => family.tier === tier);
}

export function familyByName(name: string): Family {
  const family = FAMILIES.find((f) => f.name === name);
  if (!family) throw new Error(`unknown family "${name}"`);
  return family;
}

export { ENTRY_POINT, type Family, type FamilyKind, numberedPlan } from './familyTypes';
