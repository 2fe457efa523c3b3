// Small random checkpoints in the Hugging Face Hub's exact layout, for the Llama-family tests:
// config.json, generation_config.json, tokenizer.json (a byte-level BPE with a few merges and
// added special tokens), tokenizer_config.json (a Qwen-like chat template), and the weights —
// model.safetensors, or shards with model.safetensors.index.json — in F32, F16 or BF16. Also
// PEFT LoRA adapters. Tensors are written one at a time to the file, so a checkpoint of real
// size (Qwen2.5-Coder-0.5B's shape) never sits whole in memory.
import { closeSync, mkdirSync, mkdtempSync, openSync, writeFileSync, writeSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { parseLlamaConfig } from '../../src/model/families/hfConfig';
import { hubWeightSpecs } from '../../src/model/families/hubConfig';
import type { LlamaConfig } from '../../src/model/families/llamaConfig';
import {
  encodeSafetensors,
  f32ToBf16,
  f32ToF16,
  type SafetensorsDtype,
} from '../../src/model/safetensors';
import type { WeightSpec } from '../../src/model/transformerConfig';
import { Rng } from '../../src/tasks/random';

/** GPT-2's byte → printable character table (bytes_to_unicode). */
export function byteToUnicode(): string[] {
  const keep: number[] = [];
  for (let b = 33; b <= 126; b++) keep.push(b);
  for (let b = 161; b <= 172; b++) keep.push(b);
  for (let b = 174; b <= 255; b++) keep.push(b);
  const table: string[] = [];
  let extra = 0;
  for (let b = 0; b < 256; b++)
    table[b] = String.fromCodePoint(keep.includes(b) ? b : 256 + extra++);
  return table;
}

export const SPECIAL_TOKENS = ['<|endoftext|>', '<|im_start|>', '<|im_end|>'] as const;

const MERGES: [string, string][] = [
  ['Ġ', 't'],
  ['h', 'e'],
  ['Ġt', 'he'],
  ['i', 'n'],
  ['e', 'r'],
  ['Ġ', 'a'],
  ['o', 'n'],
  ['r', 'e'],
  ['Ġ', 's'],
  ['e', 's'],
  ['Ġ', 'f'],
  ['u', 'n'],
  ['Ġf', 'un'],
];

/** A byte-level BPE in tokenizer.json's format: 256 byte tokens, the merges, then the specials. */
export function byteLevelTokenizerJson(specials: readonly string[] = SPECIAL_TOKENS): {
  json: object;
  size: number;
} {
  const vocab: Record<string, number> = {};
  for (const ch of byteToUnicode()) vocab[ch] = Object.keys(vocab).length;
  for (const [a, b] of MERGES) vocab[a + b] = Object.keys(vocab).length;
  const base = Object.keys(vocab).length;
  const json = {
    version: '1.0',
    truncation: null,
    padding: null,
    added_tokens: specials.map((content, i) => ({
      id: base + i,
      content,
      single_word: false,
      lstrip: false,
      rstrip: false,
      normalized: false,
      special: true,
    })),
    normalizer: null,
    pre_tokenizer: {
      type: 'ByteLevel',
      add_prefix_space: false,
      trim_offsets: true,
      use_regex: true,
    },
    post_processor: {
      type: 'ByteLevel',
      add_prefix_space: false,
      trim_offsets: true,
      use_regex: true,
    },
    decoder: { type: 'ByteLevel', add_prefix_space: false, trim_offsets: true, use_regex: true },
    model: {
      type: 'BPE',
      dropout: null,
      unk_token: null,
      continuing_subword_prefix: '',
      end_of_word_suffix: '',
      fuse_unk: false,
      byte_fallback: false,
      ignore_merges: false,
      vocab,
      merges: MERGES.map(([a, b]) => `${a} ${b}`),
    },
  };
  return { json, size: base + specials.length };
}

/** Qwen2.5's chat template, shortened (no tools): a default system turn, then ChatML. */
export const CHAT_TEMPLATE =
  "{%- if messages[0]['role'] == 'system' %}{{- '<|im_start|>system\\n' + messages[0]['content'] + '<|im_end|>\\n' }}" +
  "{%- else %}{{- '<|im_start|>system\\nYou are a helpful assistant.<|im_end|>\\n' }}{%- endif %}" +
  "{%- for message in messages %}{%- if not (message.role == 'system' and loop.first) %}" +
  "{{- '<|im_start|>' + message.role + '\\n' + message.content + '<|im_end|>' + '\\n' }}{%- endif %}{%- endfor %}" +
  "{%- if add_generation_prompt %}{{- '<|im_start|>assistant\\n' }}{%- endif %}";

export type FixtureName = 'qwen2' | 'llama' | 'qwen3';

export interface FixtureSpec {
  config: Record<string, unknown>;
  dtype: SafetensorsDtype;
  /** 1: model.safetensors; more: that many shards and an index. */
  shards: number;
}

/** The three small checkpoints the issue names. vocab_size above the tokenizer's, as Qwen's is. */
export function fixtureSpec(name: FixtureName, vocabSize = 280): FixtureSpec {
  const common = { vocab_size: vocabSize, hidden_act: 'silu', max_position_embeddings: 256 };
  if (name === 'qwen2') {
    return {
      dtype: 'BF16',
      shards: 1,
      config: {
        ...common,
        architectures: ['Qwen2ForCausalLM'],
        model_type: 'qwen2',
        hidden_size: 32,
        intermediate_size: 64,
        num_hidden_layers: 2,
        num_attention_heads: 4,
        num_key_value_heads: 2,
        rope_theta: 1000000.0,
        rms_norm_eps: 1e-6,
        tie_word_embeddings: true,
        use_sliding_window: false,
        sliding_window: 32768,
        torch_dtype: 'bfloat16',
      },
    };
  }
  if (name === 'llama') {
    return {
      dtype: 'F16',
      shards: 1,
      config: {
        ...common,
        architectures: ['LlamaForCausalLM'],
        model_type: 'llama',
        hidden_size: 32,
        intermediate_size: 48,
        num_hidden_layers: 2,
        num_attention_heads: 8,
        num_key_value_heads: 2,
        rope_theta: 10000.0,
        rope_scaling: null,
        rms_norm_eps: 1e-5,
        attention_bias: false,
        mlp_bias: false,
        tie_word_embeddings: false,
        torch_dtype: 'float16',
      },
    };
  }
  return {
    dtype: 'F32',
    shards: 2,
    config: {
      ...common,
      architectures: ['Qwen3ForCausalLM'],
      model_type: 'qwen3',
      hidden_size: 32,
      intermediate_size: 64,
      num_hidden_layers: 3,
      num_attention_heads: 4,
      num_key_value_heads: 2,
      head_dim: 16,
      rope_theta: 1000000.0,
      rms_norm_eps: 1e-6,
      attention_bias: false,
      tie_word_embeddings: true,
      torch_dtype: 'float32',
    },
  };
}

/**
 * The Qwen2 fixture with room for chat prompts: a task's rendered chat-template prompt (the
 * system turn, the Planner's or Coder's request, an MBXP statement) runs to a few hundred
 * byte-level tokens, past fixtureSpec's 256 positions; 4096 holds it with room to sample.
 */
export function chatFixtureSpec(): FixtureSpec {
  const spec = fixtureSpec('qwen2');
  return { ...spec, config: { ...spec.config, max_position_embeddings: 4096 } };
}

/**
 * Llama 3.2's rope_scaling (factor 32, low_freq_factor 1, high_freq_factor 4), with
 * original_max_position_embeddings 64 in place of 8192 so that a short text reaches all three
 * bands of a 16-wide head: wavelengths 2π·500000^(i/8) = 6.3 (kept, under 64/4), 33 (blended),
 * 168 and up (divided by 32, over 64/1).
 */
export const LLAMA3_ROPE_SCALING = {
  rope_type: 'llama3',
  factor: 32.0,
  low_freq_factor: 1.0,
  high_freq_factor: 4.0,
  original_max_position_embeddings: 64,
};

/** A Llama 3.2-like checkpoint (rope_theta 500000, head_dim 16, tied, BF16) with the given rope_scaling. */
export function ropeScaledLlamaSpec(ropeScaling: Record<string, unknown> | null): FixtureSpec {
  const llama = fixtureSpec('llama');
  return {
    dtype: 'BF16',
    shards: 1,
    config: {
      ...llama.config,
      hidden_size: 64,
      num_attention_heads: 4,
      num_key_value_heads: 2,
      rope_theta: 500000.0,
      rope_scaling: ropeScaling,
      max_position_embeddings: 2048,
      tie_word_embeddings: true,
      torch_dtype: 'bfloat16',
    },
  };
}

/** Qwen2.5-Coder-0.5B-Instruct's published shape. */
export function qwen05bSpec(): FixtureSpec {
  return {
    dtype: 'BF16',
    shards: 1,
    config: {
      architectures: ['Qwen2ForCausalLM'],
      model_type: 'qwen2',
      vocab_size: 151936,
      hidden_size: 896,
      intermediate_size: 4864,
      num_hidden_layers: 24,
      num_attention_heads: 14,
      num_key_value_heads: 2,
      hidden_act: 'silu',
      max_position_embeddings: 32768,
      rope_theta: 1000000.0,
      rms_norm_eps: 1e-6,
      tie_word_embeddings: true,
      use_sliding_window: false,
      sliding_window: 32768,
      torch_dtype: 'bfloat16',
    },
  };
}

/** Fills a tensor's values: norms near 1, everything else small and centred. */
function filler(spec: WeightSpec, rng: Rng): (i: number) => number {
  const isNorm = /(norm|ln_[12f])\.weight$/.test(spec.name);
  const isBias = spec.name.endsWith('.bias');
  const std =
    isNorm || isBias ? 0.1 : spec.shape.length === 2 ? 1 / Math.sqrt(spec.shape[1]!) : 0.1;
  // Uniform with the given std (fast enough for half a billion values).
  const half = std * Math.sqrt(3);
  return () => (isNorm ? 1 : 0) + (rng.next() * 2 - 1) * half;
}

const WIDTH: Record<SafetensorsDtype, number> = { F32: 4, F16: 2, BF16: 2 };

/** Streams one safetensors file: the header, then each tensor as it is generated. */
function writeShard(path: string, specs: WeightSpec[], dtype: SafetensorsDtype, rng: Rng): void {
  const header: Record<string, unknown> = { __metadata__: { format: 'pt' } };
  let offset = 0;
  for (const s of specs) {
    const bytes = s.shape.reduce((a, b) => a * b, 1) * WIDTH[dtype];
    header[s.name] = { dtype, shape: s.shape, data_offsets: [offset, offset + bytes] };
    offset += bytes;
  }
  let json = JSON.stringify(header);
  json += ' '.repeat((8 - ((8 + json.length) % 8)) % 8);
  const headerBytes = new TextEncoder().encode(json);
  const fd = openSync(path, 'w');
  try {
    const length = new Uint8Array(8);
    new DataView(length.buffer).setBigUint64(0, BigInt(headerBytes.length), true);
    writeSync(fd, length);
    writeSync(fd, headerBytes);
    const chunk = 1 << 20;
    for (const s of specs) {
      const count = s.shape.reduce((a, b) => a * b, 1);
      const value = filler(s, rng);
      for (let at = 0; at < count; at += chunk) {
        const n = Math.min(chunk, count - at);
        // Typed arrays in the host's order: little-endian, as safetensors is, on every machine the lab runs on.
        const words = dtype === 'F32' ? new Float32Array(n) : new Uint16Array(n);
        const narrow = dtype === 'BF16' ? f32ToBf16 : f32ToF16;
        for (let i = 0; i < n; i++) {
          const v = value(at + i);
          words[i] = dtype === 'F32' ? v : narrow(v);
        }
        writeSync(fd, new Uint8Array(words.buffer));
      }
    }
  } finally {
    closeSync(fd);
  }
}

/** Writes a whole checkpoint folder; returns its parsed config. */
export function writeHfCheckpoint(dir: string, spec: FixtureSpec, seed: number): LlamaConfig {
  mkdirSync(dir, { recursive: true });
  const config = parseLlamaConfig(spec.config);
  const specs = hubWeightSpecs(config);
  const rng = new Rng(seed);
  const { json: tokenizer } = byteLevelTokenizerJson();
  const endOfText = 256 + MERGES.length;
  const imEnd = endOfText + 2;
  const write = (file: string, value: unknown) =>
    writeFileSync(join(dir, file), `${JSON.stringify(value, null, 2)}\n`);
  write('config.json', {
    ...spec.config,
    bos_token_id: endOfText,
    eos_token_id: imEnd,
    transformers_version: '4.43.1',
  });
  write('generation_config.json', {
    bos_token_id: endOfText,
    eos_token_id: [imEnd, endOfText],
    pad_token_id: endOfText,
    do_sample: true,
    temperature: 0.7,
  });
  write('tokenizer.json', tokenizer);
  write('tokenizer_config.json', {
    add_prefix_space: false,
    bos_token: null,
    eos_token: '<|im_end|>',
    pad_token: '<|endoftext|>',
    unk_token: null,
    chat_template: CHAT_TEMPLATE,
    clean_up_tokenization_spaces: false,
    model_max_length: 32768,
    tokenizer_class: 'Qwen2Tokenizer',
  });
  if (spec.shards === 1) {
    writeShard(join(dir, 'model.safetensors'), specs, spec.dtype, rng);
  } else {
    const weightMap: Record<string, string> = {};
    const per = Math.ceil(specs.length / spec.shards);
    let total = 0;
    for (let s = 0; s < spec.shards; s++) {
      const file = `model-${String(s + 1).padStart(5, '0')}-of-${String(spec.shards).padStart(5, '0')}.safetensors`;
      const part = specs.slice(s * per, (s + 1) * per);
      for (const t of part) {
        weightMap[t.name] = file;
        total += t.shape.reduce((a, b) => a * b, 1) * WIDTH[spec.dtype];
      }
      writeShard(join(dir, file), part, spec.dtype, rng);
    }
    write('model.safetensors.index.json', {
      metadata: { total_size: total },
      weight_map: weightMap,
    });
  }
  return config;
}

export interface AdapterOptions {
  r: number;
  alpha: number;
  rslora?: boolean;
  targets?: string[];
}

/** A PEFT LoRA adapter for `config` (A and B both random, so it changes the logits). */
export function writeLoraAdapter(
  dir: string,
  config: LlamaConfig,
  options: AdapterOptions,
  seed: number,
): void {
  const targets = options.targets ?? [
    'q_proj',
    'k_proj',
    'v_proj',
    'o_proj',
    'gate_proj',
    'up_proj',
    'down_proj',
  ];
  const modules = hubWeightSpecs(config)
    .map((spec) => [spec.name.replace(/\.weight$/, ''), spec.shape] as const)
    .filter(([module]) => targets.some((t) => module.endsWith(`.${t}`)))
    .map(([module, [out, inn]]) => [module, inn as number, out as number] as const);
  writePeftAdapter(dir, modules, { ...options, targets }, false, seed);
}

/** PEFT's two files: random A [r, in] and B [out, r] for each [module, in, out], then its config. */
function writePeftAdapter(
  dir: string,
  modules: readonly (readonly [string, number, number])[],
  options: AdapterOptions & { targets: string[] },
  fanInFanOut: boolean,
  seed: number,
): void {
  mkdirSync(dir, { recursive: true });
  const rng = new Rng(seed);
  const random = (n: number) => Float32Array.from({ length: n }, () => (rng.next() * 2 - 1) * 0.2);
  const tensors = new Map<string, { shape: number[]; data: Float32Array }>();
  for (const [module, inn, out] of modules) {
    const name = `base_model.model.${module}`;
    tensors.set(`${name}.lora_A.weight`, {
      shape: [options.r, inn],
      data: random(options.r * inn),
    });
    tensors.set(`${name}.lora_B.weight`, {
      shape: [out, options.r],
      data: random(out * options.r),
    });
  }
  writeFileSync(
    join(dir, 'adapter_model.safetensors'),
    encodeSafetensors(tensors, { format: 'pt' }),
  );
  writeFileSync(
    join(dir, 'adapter_config.json'),
    JSON.stringify(
      {
        peft_type: 'LORA',
        task_type: 'CAUSAL_LM',
        base_model_name_or_path: 'fixture',
        r: options.r,
        lora_alpha: options.alpha,
        lora_dropout: 0.0,
        use_rslora: options.rslora ?? false,
        use_dora: false,
        fan_in_fan_out: fanInFanOut,
        bias: 'none',
        target_modules: options.targets,
        rank_pattern: {},
        alpha_pattern: {},
      },
      null,
      2,
    ),
  );
}

/** max |a − b| / max |b|: logits against a reference, relative to the largest logit (issue 22's measure). */
export function relativeError(a: readonly number[], b: readonly number[]): number {
  if (a.length !== b.length) throw new Error(`${a.length} values against ${b.length}`);
  let diff = 0;
  let scale = 0;
  for (let i = 0; i < a.length; i++) {
    diff = Math.max(diff, Math.abs(a[i]! - b[i]!));
    scale = Math.max(scale, Math.abs(b[i]!));
  }
  return diff / scale;
}

/**
 * The tests' random Qwen2 chat base (chatFixtureSpec, seed 23) written under a fresh temporary
 * folder: `base` is the checkpoint, `root` the folder to remove afterwards.
 */
export function writeChatFixture(prefix: string): { root: string; base: string } {
  const root = mkdtempSync(join(tmpdir(), prefix));
  const base = join(root, 'qwen2');
  writeHfCheckpoint(base, chatFixtureSpec(), 23);
  return { root, base };
}

/** A GPT-2 as the Hub holds it (openai-community/gpt2's layout, at a small size). */
export interface Gpt2HubOptions {
  nEmbd: number;
  nLayer: number;
  nHead: number;
  nPositions: number;
  /** The original checkpoints' names, without `transformer.`, and their attention-mask buffers. */
  original: boolean;
  /** A tied head's copy stored as lm_head.weight too. */
  headCopy?: boolean;
  /** tie_word_embeddings false: a head of its own, lm_head.weight. */
  untied?: boolean;
  dtype?: SafetensorsDtype;
}

/**
 * A random GPT-2 in the Hub's layout: config.json with GPT-2's n_* fields (n_inner unset),
 * generation_config.json, a byte-level BPE with `<|endoftext|>` only and no chat template,
 * model.safetensors. Returns the folder's config.json.
 */
export function writeGpt2HubCheckpoint(
  dir: string,
  o: Gpt2HubOptions,
  seed: number,
): Record<string, unknown> {
  mkdirSync(dir, { recursive: true });
  const { json: tokenizer, size } = byteLevelTokenizerJson(['<|endoftext|>']);
  const endOfText = size - 1;
  const config = {
    activation_function: 'gelu_new',
    architectures: ['GPT2LMHeadModel'],
    attn_pdrop: 0.1,
    bos_token_id: endOfText,
    embd_pdrop: 0.1,
    eos_token_id: endOfText,
    initializer_range: 0.02,
    layer_norm_epsilon: 1e-5,
    model_type: 'gpt2',
    n_ctx: o.nPositions,
    n_embd: o.nEmbd,
    n_head: o.nHead,
    n_layer: o.nLayer,
    n_positions: o.nPositions,
    resid_pdrop: 0.1,
    vocab_size: size,
    ...(o.untied ? { tie_word_embeddings: false } : {}),
  };
  const write = (file: string, value: unknown) =>
    writeFileSync(join(dir, file), `${JSON.stringify(value, null, 2)}\n`);
  write('config.json', config);
  write('generation_config.json', { bos_token_id: endOfText, eos_token_id: endOfText });
  write('tokenizer.json', tokenizer);
  write('tokenizer_config.json', {
    model_max_length: o.nPositions,
    tokenizer_class: 'GPT2Tokenizer',
  });
  // Written from GPT-2's own list, not the lab's: ln, attn.c_attn / c_proj, mlp.c_fc / c_proj, Conv1D [in, out].
  const d = o.nEmbd;
  const prefix = o.original ? '' : 'transformer.';
  const specs: WeightSpec[] = [
    { name: `${prefix}wte.weight`, shape: [size, d] },
    { name: `${prefix}wpe.weight`, shape: [o.nPositions, d] },
  ];
  for (let i = 0; i < o.nLayer; i++) {
    const h = `${prefix}h.${i}`;
    specs.push(
      { name: `${h}.ln_1.weight`, shape: [d] },
      { name: `${h}.ln_1.bias`, shape: [d] },
      ...(o.original
        ? [{ name: `${h}.attn.bias`, shape: [1, 1, o.nPositions, o.nPositions] }]
        : []),
      { name: `${h}.attn.c_attn.weight`, shape: [d, 3 * d] },
      { name: `${h}.attn.c_attn.bias`, shape: [3 * d] },
      { name: `${h}.attn.c_proj.weight`, shape: [d, d] },
      { name: `${h}.attn.c_proj.bias`, shape: [d] },
      { name: `${h}.ln_2.weight`, shape: [d] },
      { name: `${h}.ln_2.bias`, shape: [d] },
      { name: `${h}.mlp.c_fc.weight`, shape: [d, 4 * d] },
      { name: `${h}.mlp.c_fc.bias`, shape: [4 * d] },
      { name: `${h}.mlp.c_proj.weight`, shape: [4 * d, d] },
      { name: `${h}.mlp.c_proj.bias`, shape: [d] },
    );
  }
  specs.push(
    { name: `${prefix}ln_f.weight`, shape: [d] },
    { name: `${prefix}ln_f.bias`, shape: [d] },
  );
  if (o.headCopy || o.untied) specs.push({ name: 'lm_head.weight', shape: [size, d] });
  writeShard(join(dir, 'model.safetensors'), specs, o.dtype ?? 'F32', new Rng(seed));
  return config;
}

/** A PEFT adapter for a Hub GPT-2 (fan_in_fan_out: Conv1D), on c_attn, c_proj and c_fc. */
export function writeGpt2LoraAdapter(
  dir: string,
  o: Pick<Gpt2HubOptions, 'nEmbd' | 'nLayer'>,
  options: { r: number; alpha: number },
  seed: number,
): void {
  const d = o.nEmbd;
  const modules = Array.from({ length: o.nLayer }, (_, i) =>
    (
      [
        ['attn.c_attn', d, 3 * d],
        ['attn.c_proj', d, d],
        ['mlp.c_fc', d, 4 * d],
        ['mlp.c_proj', 4 * d, d],
      ] as const
    ).map(([module, inn, out]) => [`transformer.h.${i}.${module}`, inn, out] as const),
  ).flat();
  writePeftAdapter(dir, modules, { ...options, targets: ['c_attn', 'c_proj', 'c_fc'] }, true, seed);
}
