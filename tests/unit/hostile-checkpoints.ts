// Hostile checkpoints for the loaders' suite (issue 34): each case is a loadable random Qwen2
// (hf-fixtures.ts) with one fault written into one file: a safetensors header that lies, a
// config.json too big or inconsistent, a tokenizer.json that is malformed or slow, a chat
// template that loops, recurses or explodes. `expected` is the one line the refusal must say;
// it names the file. Used by tests/unit/hostileCheckpoints.test.ts (in process and through the
// CLI) and tests/browser/hostileHub.test.ts (the page, over a local hub).
import { readFileSync, truncateSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { fixtureSpec, writeHfCheckpoint } from './hf-fixtures';

export interface HostileCase {
  name: string;
  /** Turns a good checkpoint folder into the hostile one. */
  spoil(dir: string): void;
  /** What the refusal says (one line). */
  expected: RegExp;
}

/** A good checkpoint: the random Qwen2 every case starts from. */
export function writeGoodCheckpoint(dir: string): void {
  writeHfCheckpoint(dir, fixtureSpec('qwen2'), 7);
}

const json = (dir: string, file: string) =>
  JSON.parse(readFileSync(join(dir, file), 'utf8')) as Record<string, unknown>;
const writeJson = (dir: string, file: string, value: unknown) =>
  writeFileSync(join(dir, file), JSON.stringify(value));

/** model.safetensors as its header's text and its data. */
function weights(dir: string): { header: string; data: Buffer } {
  const bytes = readFileSync(join(dir, 'model.safetensors'));
  const length = Number(bytes.readBigUInt64LE(0));
  return {
    header: bytes.subarray(8, 8 + length).toString('utf8'),
    data: bytes.subarray(8 + length),
  };
}

function writeWeights(dir: string, header: string, data: Buffer, claimedLength?: number): void {
  const text = Buffer.from(header, 'utf8');
  const length = Buffer.alloc(8);
  length.writeBigUInt64LE(BigInt(claimedLength ?? text.length));
  writeFileSync(join(dir, 'model.safetensors'), Buffer.concat([length, text, data]));
}

/** Rewrites the header's entries (the data stays). */
interface Entry {
  dtype: string;
  shape: number[];
  data_offsets: [number, number];
}

function editHeader(dir: string, edit: (h: Record<string, Entry>) => void): void {
  const { header, data } = weights(dir);
  const parsed = JSON.parse(header) as Record<string, Entry>;
  edit(parsed);
  writeWeights(dir, JSON.stringify(parsed), data);
}

const NORM = 'model.norm.weight';
const EMBED = 'model.embed_tokens.weight';

const editConfig = (changes: Record<string, unknown>) => (dir: string) =>
  writeJson(dir, 'config.json', { ...json(dir, 'config.json'), ...changes });

interface TokenizerFile {
  model: { vocab: Record<string, number>; merges: string[] };
  pre_tokenizer: unknown;
}

const editTokenizer = (edit: (t: TokenizerFile) => void) => (dir: string) => {
  const t = json(dir, 'tokenizer.json') as unknown as TokenizerFile;
  edit(t);
  writeJson(dir, 'tokenizer.json', t);
};

const template = (source: string) => (dir: string) =>
  writeJson(dir, 'tokenizer_config.json', {
    ...json(dir, 'tokenizer_config.json'),
    chat_template: source,
  });

export const HOSTILE_CASES: HostileCase[] = [
  {
    name: 'safetensors: header length beyond the file',
    spoil: (dir) => {
      const { header, data } = weights(dir);
      writeWeights(dir, header, data, 10 ** 12);
    },
    expected: /model\.safetensors is corrupt: header claims 1000000000000 bytes but the file has/,
  },
  {
    name: 'safetensors: a file over the size its config allows (a 101 MB header)',
    spoil: (dir) => {
      const { header, data } = weights(dir);
      writeWeights(dir, header, data, 101_000_000);
      // Extended sparse: the length is real, the disk holds nothing.
      truncateSync(join(dir, 'model.safetensors'), 8 + 101_000_000 + data.length);
    },
    expected:
      /model\.safetensors is [\d.]+ (bytes|MB), over the [\d.]+ (MB )?its checkpoint can need/,
  },
  {
    name: 'safetensors: a header that is not JSON',
    spoil: (dir) => writeWeights(dir, '{"a": [1, 2', weights(dir).data),
    expected: /model\.safetensors is corrupt: header is not valid JSON/,
  },
  {
    name: 'safetensors: offsets out of range',
    spoil: (dir) =>
      editHeader(dir, (h) => {
        const [b, e] = h[NORM]!.data_offsets;
        h[NORM]!.data_offsets = [b + 10 ** 9, e + 10 ** 9];
      }),
    expected:
      /model\.safetensors is corrupt: model\.norm\.weight: data ends at \d+ but only \d+ data bytes exist/,
  },
  {
    name: 'safetensors: overlapping tensors',
    spoil: (dir) =>
      editHeader(dir, (h) => {
        const [b, e] = h[NORM]!.data_offsets;
        const other = Object.keys(h).find(
          (k) => k.endsWith('input_layernorm.weight') && h[k]!.data_offsets[0] !== b,
        )!;
        h[other]!.data_offsets = [b, e];
      }),
    expected: /model\.safetensors is corrupt: .* overlaps /,
  },
  {
    name: 'safetensors: data no tensor covers',
    spoil: (dir) => {
      const { header, data } = weights(dir);
      writeWeights(dir, header, Buffer.concat([data, Buffer.alloc(64)]));
    },
    expected: /model\.safetensors is corrupt: 64 data bytes belong to no tensor/,
  },
  {
    name: 'safetensors: a dtype the lab does not read',
    spoil: (dir) =>
      editHeader(dir, (h) => {
        h[NORM]!.dtype = 'F8_E4M3';
      }),
    expected: /model\.safetensors is corrupt: model\.norm\.weight: dtype F8_E4M3/,
  },
  {
    name: 'safetensors: a shape whose element count overflows',
    spoil: (dir) =>
      editHeader(dir, (h) => {
        h[NORM]!.shape = [2 ** 40, 2 ** 40];
      }),
    expected:
      /model\.safetensors is corrupt: model\.norm\.weight: shape \[.*\] has more elements than any file holds/,
  },
  {
    name: 'safetensors: a shape that disagrees with its byte range',
    spoil: (dir) =>
      editHeader(dir, (h) => {
        h[NORM]!.shape = [3];
      }),
    expected:
      /model\.safetensors is corrupt: model\.norm\.weight: data_offsets .* do not fit BF16 shape \[3\]/,
  },
  {
    name: 'safetensors: a tensor the config needs is missing',
    spoil: (dir) =>
      editHeader(dir, (h) => {
        h['model.norm.weight_renamed'] = h[NORM]!;
        delete h[NORM];
      }),
    expected: /the weights have no model\.norm\.weight \(config\.json implies it\)/,
  },
  {
    name: 'safetensors: a name given twice',
    spoil: (dir) => {
      const { header, data } = weights(dir);
      const entry = JSON.stringify((JSON.parse(header) as Record<string, unknown>)[EMBED]);
      writeWeights(dir, `${header.trimEnd().slice(0, -1)},"${EMBED}":${entry}}`, data);
    },
    expected: /model\.safetensors is corrupt: the header names model\.embed_tokens\.weight twice/,
  },
  {
    name: 'config.json: a million layers',
    spoil: editConfig({ num_hidden_layers: 1_000_000 }),
    expected: /config\.json: num_hidden_layers 1000000 is over the 1024 the lab reads/,
  },
  {
    name: 'config.json: a vocabulary of 2^31',
    spoil: editConfig({ vocab_size: 2 ** 31 }),
    expected:
      /config\.json: a weight of \d+ elements .* is over the 2147483647 one tensor can hold/,
  },
  {
    name: 'config.json: more parameters than the budget',
    spoil: editConfig({
      vocab_size: 128256,
      hidden_size: 8192,
      intermediate_size: 28672,
      num_hidden_layers: 80,
      num_attention_heads: 64,
      num_key_value_heads: 8,
    }),
    expected:
      /config\.json: 69\.5B parameters \(258\.9 GiB as float32\) is over the budget of 16 Gi parameters/,
  },
  {
    name: 'config.json: heads × head size do not make the hidden size',
    spoil: editConfig({ num_attention_heads: 5, num_key_value_heads: 5 }),
    expected: /config\.json: hidden_size 32 is not a multiple of num_attention_heads 5/,
  },
  {
    name: 'config.json: key/value heads that do not divide the heads',
    spoil: editConfig({ num_key_value_heads: 3 }),
    expected: /config\.json: num_attention_heads 4 is not a multiple of num_key_value_heads 3/,
  },
  {
    name: 'tokenizer.json: a merge of tokens the vocabulary lacks',
    spoil: editTokenizer((t) => {
      t.model.merges.push('NOT_A_TOKEN ALSO_NOT');
    }),
    expected:
      /tokenizer\.json is refused: merge \d+ \(NOT_A_TOKEN ALSO_NOT\) names "NOT_A_TOKEN", which the vocabulary lacks/,
  },
  {
    name: 'tokenizer.json: ids offset by 10^9',
    spoil: editTokenizer((t) => {
      for (const [token, id] of Object.entries(t.model.vocab)) t.model.vocab[token] = id + 10 ** 9;
    }),
    expected:
      /tokenizer\.json is refused: token .* has id 100000\d+, outside config\.json's vocab_size 280/,
  },
  {
    name: "tokenizer.json: a vocabulary larger than the config's",
    spoil: editConfig({ vocab_size: 200 }),
    expected:
      /tokenizer\.json is refused: (\d+ tokens, more than|token .* has id \d+, outside) config\.json's vocab_size 200/,
  },
  {
    name: 'tokenizer.json: a pre-tokenizer regex that backtracks exponentially',
    spoil: editTokenizer((t) => {
      t.pre_tokenizer = {
        type: 'Sequence',
        pretokenizers: [
          { type: 'Split', pattern: { Regex: '(\\s+)+x' }, behavior: 'Isolated', invert: false },
          t.pre_tokenizer,
        ],
      };
    }),
    expected: /tokenizer\.json is refused: its regex .* repeats a group that holds a quantifier/,
  },
  {
    name: 'tokenizer.json: a pre-tokenizer regex that backtracks polynomially',
    spoil: editTokenizer((t) => {
      t.pre_tokenizer = {
        type: 'Sequence',
        pretokenizers: [
          {
            type: 'Split',
            pattern: { Regex: '\\s*\\s*\\s*\\s*\\s*\\s*\\s*x' },
            behavior: 'Isolated',
            invert: false,
          },
          t.pre_tokenizer,
        ],
      };
    }),
    // Either whitespace probe may cross the bound first (" " and "\n" are as slow, near it).
    expected:
      /tokenizer\.json is refused: its regex .* took \d+ ms on \d+ × "( |\\n)" \(it backtracks\)/,
  },
  {
    name: 'chat template: a string doubled until it is huge',
    spoil: template(
      "{% set ns = namespace(s='ab') %}{% for i in range(64) %}{% set ns.s = ns.s + ns.s %}{% endfor %}{{ ns.s }}",
    ),
    expected: /tokenizer_config\.json's chat_template stopped: it built a value of \d+ characters/,
  },
  {
    name: 'chat template: a loop of 10^10 steps',
    spoil: template(
      '{% for i in range(100000) %}{% for j in range(100000) %}x{% endfor %}{% endfor %}',
    ),
    expected: /tokenizer_config\.json's chat_template stopped: it ran over (2000 ms|\d+ steps)/,
  },
  {
    name: 'chat template: a range of 10^12',
    spoil: template('{% for i in range(1000000000000) %}{% endfor %}'),
    expected: /tokenizer_config\.json's chat_template stopped: range\(\) of 1000000000000 items/,
  },
  {
    name: 'chat template: nesting 20,000 deep',
    spoil: template(`{{ ${'('.repeat(20_000)}1${')'.repeat(20_000)} }}`),
    expected: /tokenizer_config\.json's chat_template (does not parse|stopped)/,
  },
];
