export { fitBpeTokenizer, fitMerges } from './bpe';
export {
  CharTokenizer,
  DEFAULT_CHARS,
  type Merge,
  SPECIAL_TOKENS,
  type SpecialToken,
} from './charTokenizer';
export { fromTokenizerJson, type TokenizerJson, toTokenizerJson } from './huggingface';
