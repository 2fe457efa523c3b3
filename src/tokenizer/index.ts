export { CharTokenizer, DEFAULT_CHARS, SPECIAL_TOKENS, type SpecialToken } from './charTokenizer';
export { fromTokenizerJson, type TokenizerJson, toTokenizerJson } from './huggingface';
