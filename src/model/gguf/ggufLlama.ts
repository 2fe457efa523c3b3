// A Llama-family checkpoint (Llama, Qwen2, Qwen3), with a role's LoRA merged in, as GGUF in
// llama.cpp's conventions (its convert_hf_to_gguf.py and gguf-py's constants): the
// architecture is config.json's model_type, the keys are `<arch>.…`, the tensors are named
// token_embd / blk.N.attn_q … / output_norm / output. For `llama` the q and k rows are permuted
// within each head from Hugging Face's rotate-half order to the interleaved pairs llama.cpp's
// RoPE rotates; Qwen2 and Qwen3 run llama.cpp's NeoX RoPE, which is rotate-half: no permutation.
import { ropeInverseFrequencies } from '../families/rope';
import { checkLoraTargets, mergeLora } from '../peft';
import { toFloat32 } from '../safetensors';
import type { GgufContents, GgufTensor, GgufValue } from './ggufFile';
import { type CheckpointGgufInput, FILE_TYPE, ggufTensor } from './ggufTensors';
import { ggufTokenizerMetadata } from './ggufTokenizer';

/** Hugging Face's tensor name → llama.cpp's (the layer's prefix aside). */
const LAYER_NAMES: Record<string, string> = {
  'input_layernorm.weight': 'attn_norm.weight',
  'self_attn.q_proj.weight': 'attn_q.weight',
  'self_attn.k_proj.weight': 'attn_k.weight',
  'self_attn.v_proj.weight': 'attn_v.weight',
  'self_attn.q_proj.bias': 'attn_q.bias',
  'self_attn.k_proj.bias': 'attn_k.bias',
  'self_attn.v_proj.bias': 'attn_v.bias',
  'self_attn.q_norm.weight': 'attn_q_norm.weight',
  'self_attn.k_norm.weight': 'attn_k_norm.weight',
  'self_attn.o_proj.weight': 'attn_output.weight',
  'post_attention_layernorm.weight': 'ffn_norm.weight',
  'mlp.gate_proj.weight': 'ffn_gate.weight',
  'mlp.up_proj.weight': 'ffn_up.weight',
  'mlp.down_proj.weight': 'ffn_down.weight',
};

export function llamaCppTensorName(hfName: string): string {
  if (hfName === 'model.embed_tokens.weight') return 'token_embd.weight';
  if (hfName === 'model.norm.weight') return 'output_norm.weight';
  if (hfName === 'lm_head.weight') return 'output.weight';
  const m = /^model\.layers\.(\d+)\.(.+)$/.exec(hfName);
  const tail = m ? LAYER_NAMES[m[2]!] : undefined;
  if (!m || !tail) throw new Error(`gguf: no llama.cpp name for ${hfName}`);
  return `blk.${m[1]}.${tail}`;
}

/**
 * convert_hf_to_gguf.py's LlamaModel.permute: rows of each head [half, i] → [i, half], so the
 * head's dimension pairs (i, i + d/2) that rotate-half rotates together sit side by side.
 */
export function permuteForLlamaRope(
  rows: Float32Array,
  shape: readonly number[],
  heads: number,
): Float32Array {
  const [out, inn] = shape as [number, number];
  const headDim = out / heads;
  const half = headDim / 2;
  const result = new Float32Array(rows.length);
  for (let h = 0; h < heads; h++) {
    for (let j = 0; j < 2; j++) {
      for (let i = 0; i < half; i++) {
        const from = h * headDim + j * half + i;
        const to = h * headDim + 2 * i + j;
        result.set(rows.subarray(from * inn, (from + 1) * inn), to * inn);
      }
    }
  }
  return result;
}

function firstId(...values: unknown[]): number | null {
  for (const v of values) {
    const x = Array.isArray(v) ? v[0] : v;
    if (typeof x === 'number' && Number.isInteger(x) && x >= 0) return x;
  }
  return null;
}

export function llamaGguf({ checkpoint, adapter, dtype, name }: CheckpointGgufInput): GgufContents {
  const c = checkpoint.config;
  const arch = c.modelType;
  const label = checkpoint.label;
  if (c.family !== 'llama')
    throw new Error(`${label}: a ${arch} base has no GGUF export here (the Llama family's only)`);
  if (c.ropeScaling?.type === 'llama3' && arch !== 'llama')
    throw new Error(`${label}: llama3 rope scaling on ${arch} has no GGUF form in llama.cpp`);
  if (adapter)
    checkLoraTargets(new Map([...checkpoint.weights].map(([n, t]) => [n, t.shape])), adapter);
  const u32 = (value: number): GgufValue => ({ type: 'u32', value });
  const f32 = (value: number): GgufValue => ({ type: 'f32', value });
  const metadata: Array<[string, GgufValue]> = [
    ['general.architecture', { type: 'string', value: arch }],
    ['general.name', { type: 'string', value: name }],
    ['general.file_type', u32(FILE_TYPE[dtype])],
    ['general.quantization_version', u32(2)],
    [`${arch}.vocab_size`, u32(c.vocabSize)],
    [`${arch}.context_length`, u32(c.maxPositionEmbeddings)],
    [`${arch}.embedding_length`, u32(c.hiddenSize)],
    [`${arch}.block_count`, u32(c.numLayers)],
    [`${arch}.feed_forward_length`, u32(c.intermediateSize)],
    [`${arch}.attention.head_count`, u32(c.numHeads)],
    [`${arch}.attention.head_count_kv`, u32(c.numKvHeads)],
    [`${arch}.attention.layer_norm_rms_epsilon`, f32(c.rmsNormEps)],
    [`${arch}.rope.freq_base`, f32(c.ropeTheta)],
    [`${arch}.rope.dimension_count`, u32(c.headDim)],
  ];
  // llama.cpp takes a head's width as embedding_length / head_count unless told otherwise.
  if (c.headDim * c.numHeads !== c.hiddenSize) {
    metadata.push([`${arch}.attention.key_length`, u32(c.headDim)]);
    metadata.push([`${arch}.attention.value_length`, u32(c.headDim)]);
  }
  if (c.ropeScaling?.type === 'linear') {
    metadata.push([`${arch}.rope.scaling.type`, { type: 'string', value: 'linear' }]);
    metadata.push([`${arch}.rope.scaling.factor`, f32(c.ropeScaling.factor)]);
  }
  const cfg = checkpoint.configJson;
  const gen = checkpoint.generationConfig ?? {};
  metadata.push(
    ...ggufTokenizerMetadata({
      label,
      tokenizerJson: checkpoint.tokenizerJson,
      tokenizerConfig: checkpoint.tokenizerConfig,
      vocabSize: c.vocabSize,
      bosId: firstId(cfg.bos_token_id, gen.bos_token_id),
      eosId: firstId(cfg.eos_token_id, gen.eos_token_id),
      padId: firstId(cfg.pad_token_id, gen.pad_token_id),
    }),
  );

  const tensors: GgufTensor[] = [];
  if (c.ropeScaling?.type === 'llama3') {
    // llama.cpp divides each frequency by rope_freqs' factor: the unscaled over the scaled.
    const plain = ropeInverseFrequencies({ ...c, ropeScaling: undefined });
    const scaled = ropeInverseFrequencies(c);
    const factors = Float32Array.from(plain, (f, i) => f / scaled[i]!);
    tensors.push(ggufTensor('rope_freqs.weight', [factors.length], factors, 'f32'));
  }
  for (const [hfName, stored] of checkpoint.weights) {
    let values = toFloat32(stored);
    const pair = adapter?.modules.get(hfName.replace(/\.weight$/, ''));
    if (pair && adapter) {
      const [out, inn] = stored.shape as [number, number];
      mergeLora(values, inn, out, pair.a, pair.b, pair.rank, adapter.scale, 'out-in');
    }
    if (arch === 'llama' && hfName.endsWith('self_attn.q_proj.weight'))
      values = permuteForLlamaRope(values, stored.shape, c.numHeads);
    if (arch === 'llama' && hfName.endsWith('self_attn.k_proj.weight'))
      values = permuteForLlamaRope(values, stored.shape, c.numKvHeads);
    tensors.push(ggufTensor(llamaCppTensorName(hfName), stored.shape, values, dtype));
  }
  return { metadata, tensors };
}
