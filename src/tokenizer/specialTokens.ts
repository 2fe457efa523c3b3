// The lab's special tokens, first in every vocabulary so their ids are stable.
export const SPECIAL_TOKENS = [
  '<|pad|>',
  '<|endoftext|>',
  '<|unk|>',
  '<|statement|>',
  '<|plan|>',
  '<|code|>',
  '<|planner|>',
  '<|coder|>',
] as const;

export type SpecialToken = (typeof SPECIAL_TOKENS)[number];
