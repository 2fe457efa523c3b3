export { fitBpeTokenizer, fitMerges } from './bpe';
export {
  CharTokenizer,
  DEFAULT_CHARS,
  fromTokenizerJson,
  type Merge,
  SPECIAL_TOKENS,
  type SpecialToken,
} from './charTokenizer';
export { type TokenizerJson, toTokenizerJson } from './huggingface';
