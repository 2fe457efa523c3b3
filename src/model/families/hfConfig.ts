// config.json → which family, and the Llama family's config (llamaConfig.ts). `model_type`
// picks the family; anything the lab does not implement (an unknown model_type, a rope_scaling
// type other than linear and llama3, a sliding window, biases beyond Qwen2's q/k/v) is refused
// by name, never run wrongly.
import type { LlamaConfig, LlamaModelType, RopeScaling } from './llamaConfig';

export const LLAMA_MODEL_TYPES: readonly LlamaModelType[] = ['llama', 'qwen2', 'qwen3'];
export const KNOWN_MODEL_TYPES = ['gpt2', ...LLAMA_MODEL_TYPES] as const;

export type FamilyName = 'gpt2' | 'llama';

/** The family config.json's model_type names; an unknown one is refused with the known ones. */
export function familyOf(json: unknown, file = 'config.json'): FamilyName {
  const type = (json as { model_type?: unknown })?.model_type;
  if (type === 'gpt2') return 'gpt2';
  if (LLAMA_MODEL_TYPES.includes(type as LlamaModelType)) return 'llama';
  throw new Error(
    `${file}: model_type ${JSON.stringify(type ?? null)} is not a family the lab runs (known: ${KNOWN_MODEL_TYPES.join(', ')})`,
  );
}

/** rope_scaling (or rope_parameters) as config.json writes it; `type` is the older key. */
interface RopeScalingJson {
  type?: string;
  rope_type?: string;
  factor?: number;
  low_freq_factor?: number;
  high_freq_factor?: number;
  original_max_position_embeddings?: number;
}

/** The rope types the lab implements exactly (model/families/rope.ts). */
const ROPE_TYPES = ['default', 'linear', 'llama3'];

/** The rope scaling config.json asks for; a type not implemented is refused by name. */
function parseRopeScaling(
  json: LlamaConfigJson,
  fail: (why: string) => never,
): RopeScaling | undefined {
  // The object that names a type: rope_scaling, else (newer transformers) rope_parameters.
  const named = (o: RopeScalingJson | null | undefined) => ((o?.rope_type ?? o?.type) ? o : null);
  const raw = named(json.rope_scaling) ?? named(json.rope_parameters);
  const type = raw?.rope_type ?? raw?.type ?? 'default';
  if (!raw || type === 'default') return undefined;
  if (!ROPE_TYPES.includes(type))
    fail(
      `rope_scaling type "${type}" is not implemented (the lab implements ${ROPE_TYPES.join(', ')})`,
    );
  const positive = (key: keyof RopeScalingJson): number => {
    const v = raw[key];
    if (typeof v !== 'number' || !Number.isFinite(v) || v <= 0)
      fail(`rope_scaling ${type} needs ${key} a positive number, got ${JSON.stringify(v ?? null)}`);
    return v as number;
  };
  const factor = positive('factor');
  if (type === 'linear') return { type, factor };
  const lowFreqFactor = positive('low_freq_factor');
  const highFreqFactor = positive('high_freq_factor');
  // The blend between the two wavelengths divides by their difference.
  if (highFreqFactor <= lowFreqFactor)
    fail(
      `rope_scaling llama3 needs high_freq_factor (${highFreqFactor}) above low_freq_factor (${lowFreqFactor})`,
    );
  return {
    type: 'llama3',
    factor,
    lowFreqFactor,
    highFreqFactor,
    originalMaxPositionEmbeddings: positive('original_max_position_embeddings'),
  };
}

/** Hugging Face's config.json fields the Llama family reads. */
interface LlamaConfigJson {
  model_type: string;
  vocab_size: number;
  hidden_size: number;
  intermediate_size: number;
  num_hidden_layers: number;
  num_attention_heads: number;
  num_key_value_heads?: number;
  head_dim?: number | null;
  hidden_act?: string;
  rope_theta?: number;
  rope_scaling?: RopeScalingJson | null;
  /** Newer transformers write rope_theta, the type and its parameters here. */
  rope_parameters?: (RopeScalingJson & { rope_theta?: number }) | null;
  rms_norm_eps?: number;
  attention_bias?: boolean;
  mlp_bias?: boolean;
  use_sliding_window?: boolean;
  tie_word_embeddings?: boolean;
  max_position_embeddings?: number;
}

export function parseLlamaConfig(raw: unknown, file = 'config.json'): LlamaConfig {
  familyOf(raw, file);
  const json = raw as LlamaConfigJson;
  const fail = (why: string): never => {
    throw new Error(`${file}: ${why}`);
  };
  const int = (key: keyof LlamaConfigJson, fallback?: number): number => {
    const v = json[key] ?? fallback;
    if (typeof v !== 'number' || !Number.isInteger(v) || v <= 0)
      fail(`${key} must be a positive integer, got ${JSON.stringify(v ?? null)}`);
    return v as number;
  };
  const num = (key: keyof LlamaConfigJson, fallback: number): number => {
    const v = json[key] ?? fallback;
    if (typeof v !== 'number' || !Number.isFinite(v) || v <= 0)
      fail(`${key} must be a positive number, got ${JSON.stringify(v)}`);
    return v as number;
  };
  const modelType = json.model_type as LlamaModelType;
  const hiddenSize = int('hidden_size');
  const numHeads = int('num_attention_heads');
  const numKvHeads = int('num_key_value_heads', numHeads);
  const headDim = int('head_dim', Math.floor(hiddenSize / numHeads));
  if (json.head_dim == null && hiddenSize % numHeads !== 0)
    fail(`hidden_size ${hiddenSize} is not a multiple of num_attention_heads ${numHeads}`);
  if (numHeads % numKvHeads !== 0)
    fail(`num_attention_heads ${numHeads} is not a multiple of num_key_value_heads ${numKvHeads}`);
  if (headDim % 2 !== 0) fail(`head_dim ${headDim} is odd (rotary embeddings pair dimensions)`);
  if ((json.hidden_act ?? 'silu') !== 'silu')
    fail(`hidden_act "${json.hidden_act}" is not implemented (the Llama family uses silu)`);
  const ropeScaling = parseRopeScaling(json, fail);
  if (json.use_sliding_window) fail('use_sliding_window true is not implemented');
  if (json.mlp_bias) fail('mlp_bias true is not implemented');
  // Qwen2 always has q/k/v biases; in Llama and Qwen3 attention_bias also puts one on o_proj.
  if (modelType !== 'qwen2' && json.attention_bias)
    fail(`attention_bias true is not implemented for ${modelType} (a bias on o_proj too)`);
  const config: LlamaConfig = {
    family: 'llama',
    modelType,
    vocabSize: int('vocab_size'),
    hiddenSize,
    intermediateSize: int('intermediate_size'),
    numLayers: int('num_hidden_layers'),
    numHeads,
    numKvHeads,
    headDim,
    ropeTheta: num('rope_theta', json.rope_parameters?.rope_theta ?? 10000),
    // Only when scaled: a default-rope config stays the same plain data it always was.
    ...(ropeScaling ? { ropeScaling } : {}),
    rmsNormEps: num('rms_norm_eps', 1e-6),
    attentionBias: modelType === 'qwen2',
    qkNorm: modelType === 'qwen3',
    tieWordEmbeddings: json.tie_word_embeddings ?? false,
    maxPositionEmbeddings: int('max_position_embeddings', 2048),
  };
  checkLlamaBudget(config, fail);
  return config;
}

/**
 * The most parameters a config may declare, refused from the numbers before anything is listed or
 * fetched: 16 Gi (64 GiB as float32), past any model the lab can run, so the page's own bound
 * (baseModel.ts' checkBaseFits) still names a real model that is too large with its size.
 */
export const MAX_CHECKPOINT_PARAMETERS = 16 * 1024 ** 3;
/** The most layers: the deepest published models have under 200; each layer is a dozen tensors to list and check. */
export const MAX_CHECKPOINT_LAYERS = 1024;
/** The most elements one tensor may hold: a typed array's and a tfjs tensor's bound. */
const MAX_TENSOR_ELEMENTS = 2 ** 31 - 1;

/** Refuses, from the numbers alone and before anything is allocated, a config too big to hold. */
function checkLlamaBudget(c: LlamaConfig, fail: (why: string) => never): void {
  if (c.numLayers > MAX_CHECKPOINT_LAYERS)
    fail(`num_hidden_layers ${c.numLayers} is over the ${MAX_CHECKPOINT_LAYERS} the lab reads`);
  const largest = Math.max(
    c.vocabSize * c.hiddenSize,
    c.intermediateSize * c.hiddenSize,
    c.numHeads * c.headDim * c.hiddenSize,
  );
  if (largest > MAX_TENSOR_ELEMENTS)
    fail(
      `a weight of ${largest} elements (vocab_size ${c.vocabSize}, hidden_size ${c.hiddenSize}, intermediate_size ${c.intermediateSize}) is over the ${MAX_TENSOR_ELEMENTS} one tensor can hold`,
    );
  const parameters = llamaParameterCount(c);
  if (parameters > MAX_CHECKPOINT_PARAMETERS)
    fail(
      `${(parameters / 1e9).toFixed(1)}B parameters (${((parameters * 4) / 1024 ** 3).toFixed(1)} GiB as float32) is over the budget of ${MAX_CHECKPOINT_PARAMETERS / 1024 ** 3} Gi parameters`,
    );
}

export interface WeightSpec {
  name: string;
  shape: number[];
}

/** Every tensor a Llama-family checkpoint holds, under Hugging Face's names ([out, in] weights). */
export function llamaWeightSpecs(c: LlamaConfig): WeightSpec[] {
  const d = c.hiddenSize;
  const q = c.numHeads * c.headDim;
  const kv = c.numKvHeads * c.headDim;
  const specs: WeightSpec[] = [{ name: 'model.embed_tokens.weight', shape: [c.vocabSize, d] }];
  for (let i = 0; i < c.numLayers; i++) {
    const p = `model.layers.${i}`;
    specs.push(
      { name: `${p}.input_layernorm.weight`, shape: [d] },
      { name: `${p}.self_attn.q_proj.weight`, shape: [q, d] },
      { name: `${p}.self_attn.k_proj.weight`, shape: [kv, d] },
      { name: `${p}.self_attn.v_proj.weight`, shape: [kv, d] },
    );
    if (c.attentionBias) {
      specs.push(
        { name: `${p}.self_attn.q_proj.bias`, shape: [q] },
        { name: `${p}.self_attn.k_proj.bias`, shape: [kv] },
        { name: `${p}.self_attn.v_proj.bias`, shape: [kv] },
      );
    }
    if (c.qkNorm) {
      specs.push(
        { name: `${p}.self_attn.q_norm.weight`, shape: [c.headDim] },
        { name: `${p}.self_attn.k_norm.weight`, shape: [c.headDim] },
      );
    }
    specs.push(
      { name: `${p}.self_attn.o_proj.weight`, shape: [d, q] },
      { name: `${p}.post_attention_layernorm.weight`, shape: [d] },
      { name: `${p}.mlp.gate_proj.weight`, shape: [c.intermediateSize, d] },
      { name: `${p}.mlp.up_proj.weight`, shape: [c.intermediateSize, d] },
      { name: `${p}.mlp.down_proj.weight`, shape: [d, c.intermediateSize] },
    );
  }
  specs.push({ name: 'model.norm.weight', shape: [d] });
  if (!c.tieWordEmbeddings) specs.push({ name: 'lm_head.weight', shape: [c.vocabSize, d] });
  return specs;
}

/** The parameters llamaWeightSpecs lists, counted from the numbers (nothing listed, nothing allocated). */
export function llamaParameterCount(c: LlamaConfig): number {
  const d = c.hiddenSize;
  const q = c.numHeads * c.headDim;
  const kv = c.numKvHeads * c.headDim;
  const layer =
    2 * d +
    (q + 2 * kv) * d +
    (c.attentionBias ? q + 2 * kv : 0) +
    (c.qkNorm ? 2 * c.headDim : 0) +
    d * q +
    3 * c.intermediateSize * d;
  return c.vocabSize * d * (c.tieWordEmbeddings ? 1 : 2) + c.numLayers * layer + d;
}
