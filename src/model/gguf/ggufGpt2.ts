// GPT-2 (the lab's own or the Hub's, read by the one Hugging Face loader), with a role's LoRA
// merged in, as GGUF for llama.cpp's `gpt2` architecture. GPT-2's Conv1D weights
// are [in, out]; llama.cpp's are [out, in] rows like every other linear layer, so each is
// transposed (as convert_hf_to_gguf.py's GPT2Model does). A tied head: the embedding is
// written again as `output`, as that converter does; an untied one writes its lm_head.
import { mergeLora } from '../peft';
import { type NamedTensor, toFloat32 } from '../safetensors';
import type { GgufContents, GgufTensor, GgufValue } from './ggufFile';
import { type CheckpointGgufInput, FILE_TYPE, ggufTensor } from './ggufTensors';
import { ggufTokenizerMetadata } from './ggufTokenizer';

/** [rows, cols] → [cols, rows]. */
function transpose(values: Float32Array, rows: number, cols: number): Float32Array {
  const out = new Float32Array(values.length);
  for (let r = 0; r < rows; r++)
    for (let c = 0; c < cols; c++) out[c * rows + r] = values[r * cols + c]!;
  return out;
}

const LAYER: Array<[string, string, boolean]> = [
  // [GPT-2's name, llama.cpp's, a Conv1D weight to transpose]
  ['ln_1.weight', 'attn_norm.weight', false],
  ['ln_1.bias', 'attn_norm.bias', false],
  ['attn.c_attn.weight', 'attn_qkv.weight', true],
  ['attn.c_attn.bias', 'attn_qkv.bias', false],
  ['attn.c_proj.weight', 'attn_output.weight', true],
  ['attn.c_proj.bias', 'attn_output.bias', false],
  ['ln_2.weight', 'ffn_norm.weight', false],
  ['ln_2.bias', 'ffn_norm.bias', false],
  ['mlp.c_fc.weight', 'ffn_up.weight', true],
  ['mlp.c_fc.bias', 'ffn_up.bias', false],
  ['mlp.c_proj.weight', 'ffn_down.weight', true],
  ['mlp.c_proj.bias', 'ffn_down.bias', false],
];

export function gpt2Gguf({ checkpoint, adapter, dtype, name }: CheckpointGgufInput): GgufContents {
  const { config, label } = checkpoint;
  if (config.family !== 'gpt2') throw new Error(`${label}: not a GPT-2 checkpoint`);
  const json = checkpoint.configJson;
  // Float32 copies: an adapter is merged into them.
  const weights = new Map(
    [...checkpoint.weights].map(([n, t]) => [n, { shape: t.shape, data: toFloat32(t) }] as const),
  );
  const get = (name: string): NamedTensor => {
    const t = weights.get(name);
    if (!t) throw new Error(`${label}: the weights have no ${name}`);
    return t;
  };
  if (adapter) {
    for (const [module, pair] of adapter.modules) {
      const w = weights.get(`${module}.weight`);
      const [inn, out] = (w?.shape ?? []) as [number, number];
      if (!w || pair.a.length !== pair.rank * inn || pair.b.length !== out * pair.rank)
        throw new Error(`${adapter.label}: the adapter's ${module} does not fit ${label}`);
      mergeLora(w.data, inn, out, pair.a, pair.b, pair.rank, adapter.scale, 'in-out');
    }
  }
  const u32 = (value: number): GgufValue => ({ type: 'u32', value });
  const metadata: Array<[string, GgufValue]> = [
    ['general.architecture', { type: 'string', value: 'gpt2' }],
    ['general.name', { type: 'string', value: name }],
    ['general.file_type', u32(FILE_TYPE[dtype])],
    ['general.quantization_version', u32(2)],
    ['gpt2.vocab_size', u32(config.vocabSize)],
    ['gpt2.context_length', u32(config.maxPositionEmbeddings)],
    ['gpt2.embedding_length', u32(config.hiddenSize)],
    ['gpt2.feed_forward_length', u32(config.intermediateSize)],
    ['gpt2.block_count', u32(config.numLayers)],
    ['gpt2.attention.head_count', u32(config.numHeads)],
    ['gpt2.attention.layer_norm_epsilon', { type: 'f32', value: config.layerNormEps }],
    ...ggufTokenizerMetadata({
      label,
      tokenizerJson: checkpoint.tokenizerJson,
      tokenizerConfig: checkpoint.tokenizerConfig,
      vocabSize: config.vocabSize,
      bosId: typeof json.bos_token_id === 'number' ? json.bos_token_id : null,
      eosId: typeof json.eos_token_id === 'number' ? json.eos_token_id : null,
      padId: typeof json.pad_token_id === 'number' ? json.pad_token_id : null,
    }),
  ];
  const tensor = (name: string, t: NamedTensor, conv1d = false): GgufTensor => {
    if (!conv1d) return ggufTensor(name, t.shape, t.data, dtype);
    const [inn, out] = t.shape as [number, number];
    return ggufTensor(name, [out, inn], transpose(t.data, inn, out), dtype);
  };
  const wte = get('transformer.wte.weight');
  const tensors: GgufTensor[] = [
    tensor('token_embd.weight', wte),
    tensor('position_embd.weight', get('transformer.wpe.weight')),
  ];
  for (let i = 0; i < config.numLayers; i++)
    for (const [from, to, conv1d] of LAYER)
      tensors.push(tensor(`blk.${i}.${to}`, get(`transformer.h.${i}.${from}`), conv1d));
  tensors.push(
    tensor('output_norm.weight', get('transformer.ln_f.weight')),
    tensor('output_norm.bias', get('transformer.ln_f.bias')),
    tensor('output.weight', config.tieWordEmbeddings ? wte : get('lm_head.weight')),
  );
  return { metadata, tensors };
}
