// A BPE tokenizer.json as GGUF's tokenizer metadata, as llama.cpp reads it: tokenizer.ggml.model
// "gpt2" (byte-level BPE), the tokens by id (one per row of the embedding: ids the tokenizer
// does not use are `[PAD<id>]`, type unused), their types, the merges as "a b", bos/eos, the
// pre-tokenizer's name and the chat template. llama.cpp decodes a token through GPT-2's byte ↔
// character table, so a tokenizer whose tokens are plain characters (the lab's own: no
// ByteLevel step) has its tokens and merges spelled in that table on the way out.
import type { GgufValue } from './ggufFile';

/** llama.cpp's token types (llama_token_type). */
export const TOKEN_TYPE = { NORMAL: 1, CONTROL: 3, USER_DEFINED: 4, UNUSED: 5 } as const;

export interface GgufTokenizerInput {
  label: string;
  tokenizerJson: unknown;
  tokenizerConfig: Record<string, unknown> | null;
  /** Rows of the embedding: the token list is this long. */
  vocabSize: number;
  bosId: number | null;
  eosId: number | null;
  padId: number | null;
}

interface TokenizerJsonShape {
  added_tokens?: { id: number; content: string; special?: boolean }[];
  pre_tokenizer?: PreTokenizer | null;
  decoder?: { type?: string; decoders?: { type?: string }[] } | null;
  model?: { type?: string; vocab?: Record<string, number>; merges?: (string | string[])[] };
}

interface PreTokenizer {
  type?: string;
  use_regex?: boolean;
  pattern?: { Regex?: string; String?: string };
  pretokenizers?: PreTokenizer[];
}

/** GPT-2's byte → printable character table (bytes_to_unicode in its encoder.py). */
export function byteToUnicode(): string[] {
  const keep = new Set<number>();
  for (let b = 33; b <= 126; b++) keep.add(b);
  for (let b = 161; b <= 172; b++) keep.add(b);
  for (let b = 174; b <= 255; b++) keep.add(b);
  const table: string[] = [];
  let extra = 0;
  for (let b = 0; b < 256; b++) table[b] = String.fromCodePoint(keep.has(b) ? b : 256 + extra++);
  return table;
}

function hasType(node: { type?: string; decoders?: { type?: string }[] } | null | undefined) {
  return node?.type === 'ByteLevel' || !!node?.decoders?.some((d) => d.type === 'ByteLevel');
}

function preTokenizers(p: PreTokenizer | null | undefined): PreTokenizer[] {
  if (!p) return [];
  return p.type === 'Sequence' ? (p.pretokenizers ?? []) : [p];
}

/**
 * llama.cpp's name for the pre-tokenizer (tokenizer.ggml.pre), from the split the tokenizer
 * applies: Llama 3's regex (digits in threes), Qwen2's (one digit at a time), GPT-2's ByteLevel
 * regex, else "default".
 */
export function preTokenizerName(json: TokenizerJsonShape): string {
  const list = preTokenizers(json.pre_tokenizer);
  const regex = list.map((p) => p.pattern?.Regex ?? '').join(' ');
  if (regex.includes('\\p{N}{1,3}')) return 'llama-bpe';
  if (regex.includes("(?i:'s|'t|'re|'ve|'m|'ll|'d)") && regex.includes('\\p{N}|')) return 'qwen2';
  if (list.some((p) => p.type === 'ByteLevel' && p.use_regex !== false)) return 'gpt-2';
  return 'default';
}

export function ggufTokenizerMetadata(input: GgufTokenizerInput): Array<[string, GgufValue]> {
  const json = input.tokenizerJson as TokenizerJsonShape;
  const fail = (why: string): never => {
    throw new Error(`${input.label}: tokenizer.json: ${why}`);
  };
  if (json?.model?.type !== 'BPE')
    fail(
      `model type ${JSON.stringify(json?.model?.type ?? null)} is not BPE (GGUF export writes BPE)`,
    );
  const byteLevel = hasType(json.pre_tokenizer) || hasType(json.decoder);
  const table = byteToUnicode();
  const utf8 = new TextEncoder();
  const spell = (s: string) =>
    byteLevel ? s : Array.from(utf8.encode(s), (b) => table[b]!).join('');
  const tokens: string[] = Array.from({ length: input.vocabSize }, (_, id) => `[PAD${id}]`);
  const types: number[] = new Array(input.vocabSize).fill(TOKEN_TYPE.UNUSED);
  const place = (id: number, text: string, type: number) => {
    if (!Number.isInteger(id) || id < 0 || id >= input.vocabSize)
      fail(
        `token ${JSON.stringify(text)} has id ${id}, outside the model's ${input.vocabSize} rows`,
      );
    tokens[id] = text;
    types[id] = type;
  };
  for (const [text, id] of Object.entries(json.model!.vocab ?? {}))
    place(id, spell(text), TOKEN_TYPE.NORMAL);
  // Added tokens are matched as written, before BPE: llama.cpp keeps their text as is.
  for (const t of json.added_tokens ?? [])
    place(t.id, t.content, t.special ? TOKEN_TYPE.CONTROL : TOKEN_TYPE.USER_DEFINED);
  const merges = (json.model!.merges ?? []).map((m) => {
    const pair = typeof m === 'string' ? m.split(' ') : m;
    if (pair.length !== 2) fail(`merge ${JSON.stringify(m)} is not a pair`);
    return `${spell(pair[0]!)} ${spell(pair[1]!)}`;
  });
  const out: Array<[string, GgufValue]> = [
    ['tokenizer.ggml.model', { type: 'string', value: 'gpt2' }],
    ['tokenizer.ggml.pre', { type: 'string', value: preTokenizerName(json) }],
    ['tokenizer.ggml.tokens', { type: 'array-string', value: tokens }],
    ['tokenizer.ggml.token_type', { type: 'array-i32', value: types }],
    ['tokenizer.ggml.merges', { type: 'array-string', value: merges }],
  ];
  const id = (key: string, v: number | null) => {
    if (v !== null) out.push([`tokenizer.ggml.${key}`, { type: 'u32', value: v }]);
  };
  id('bos_token_id', input.bosId);
  id('eos_token_id', input.eosId);
  id('padding_token_id', input.padId);
  const cfg = input.tokenizerConfig ?? {};
  out.push(['tokenizer.ggml.add_bos_token', { type: 'bool', value: cfg.add_bos_token === true }]);
  out.push(['tokenizer.ggml.add_eos_token', { type: 'bool', value: cfg.add_eos_token === true }]);
  if (typeof cfg.chat_template === 'string')
    out.push(['tokenizer.chat_template', { type: 'string', value: cfg.chat_template }]);
  return out;
}
