// config.json → which family, and its config (hubConfig.ts: the Llama family's or GPT-2's).
// `model_type` picks the family; anything the lab does not implement (an unknown model_type, a
// rope_scaling type other than linear and llama3, a sliding window, biases beyond Qwen2's q/k/v,
// GPT-2's exact-erf GELU or per-layer attention scaling) is refused by name, never run wrongly.
import { type Gpt2Config, type HubConfig, hubWeightSpecs } from './hubConfig';
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

/** config.json's fields read with their checks; each refusal names the file and the field. */
function fieldReader<J extends object>(json: J, file: string) {
  const fail = (why: string): never => {
    throw new Error(`${file}: ${why}`);
  };
  const field = (key: keyof J, fallback: number | undefined, integer: boolean): number => {
    const v = json[key] ?? fallback;
    if (typeof v !== 'number' || !(integer ? Number.isInteger(v) : Number.isFinite(v)) || v <= 0)
      fail(
        `${String(key)} must be a positive ${integer ? 'integer' : 'number'}, got ${JSON.stringify(v ?? null)}`,
      );
    return v as number;
  };
  return {
    fail,
    int: (key: keyof J, fallback?: number) => field(key, fallback, true),
    num: (key: keyof J, fallback: number) => field(key, fallback, false),
  };
}

export function parseLlamaConfig(raw: unknown, file = 'config.json'): LlamaConfig {
  familyOf(raw, file);
  const json = raw as LlamaConfigJson;
  const { fail, int, num } = fieldReader(json, file);
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
  checkBudget(config, fail);
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
function checkBudget(c: HubConfig, fail: (why: string) => never): void {
  if (c.numLayers > MAX_CHECKPOINT_LAYERS)
    fail(
      `${c.family === 'gpt2' ? 'n_layer' : 'num_hidden_layers'} ${c.numLayers} is over the ${MAX_CHECKPOINT_LAYERS} the lab reads`,
    );
  // The checkpoint's tensors from the numbers (a list of names and shapes, nothing allocated).
  const sizes = hubWeightSpecs(c).map((spec) => spec.shape.reduce((a, b) => a * b, 1));
  const largest = Math.max(...sizes);
  if (largest > MAX_TENSOR_ELEMENTS)
    fail(
      `a weight of ${largest} elements (vocabulary ${c.vocabSize}, hidden ${c.hiddenSize}, MLP ${c.intermediateSize}) is over the ${MAX_TENSOR_ELEMENTS} one tensor can hold`,
    );
  const parameters = sizes.reduce((a, b) => a + b, 0);
  if (parameters > MAX_CHECKPOINT_PARAMETERS)
    fail(
      `${(parameters / 1e9).toFixed(1)}B parameters (${((parameters * 4) / 1024 ** 3).toFixed(1)} GiB as float32) is over the budget of ${MAX_CHECKPOINT_PARAMETERS / 1024 ** 3} Gi parameters`,
    );
}

/** Hugging Face's config.json fields GPT-2 (GPT2LMHeadModel) reads. */
interface Gpt2ConfigJson {
  vocab_size: number;
  n_embd: number;
  n_layer: number;
  n_head: number;
  n_positions?: number;
  n_ctx?: number;
  n_inner?: number | null;
  activation_function?: string;
  layer_norm_epsilon?: number;
  scale_attn_weights?: boolean;
  scale_attn_by_inverse_layer_idx?: boolean;
  add_cross_attention?: boolean;
  tie_word_embeddings?: boolean;
}

/** GPT-2's "gelu_new" and PyTorch's tanh GELU are the same function: the lab's (model/ops.ts). */
const GPT2_ACTIVATIONS = ['gelu_new', 'gelu_pytorch_tanh'];

export function parseGpt2Config(raw: unknown, file = 'config.json'): Gpt2Config {
  const json = raw as Gpt2ConfigJson;
  const { fail, int, num } = fieldReader(json, file);
  const hiddenSize = int('n_embd');
  const numHeads = int('n_head');
  if (hiddenSize % numHeads !== 0)
    fail(`n_embd ${hiddenSize} is not a multiple of n_head ${numHeads}`);
  const activation = json.activation_function ?? 'gelu_new';
  if (!GPT2_ACTIVATIONS.includes(activation))
    fail(
      `activation_function "${activation}" is not implemented (the lab's GELU is the tanh one: ${GPT2_ACTIVATIONS.join(', ')})`,
    );
  if (json.scale_attn_weights === false) fail('scale_attn_weights false is not implemented');
  if (json.scale_attn_by_inverse_layer_idx)
    fail('scale_attn_by_inverse_layer_idx true is not implemented');
  if (json.add_cross_attention) fail('add_cross_attention true is not implemented');
  const config: Gpt2Config = {
    family: 'gpt2',
    modelType: 'gpt2',
    vocabSize: int('vocab_size'),
    hiddenSize,
    intermediateSize: int('n_inner', 4 * hiddenSize),
    numLayers: int('n_layer'),
    numHeads,
    numKvHeads: numHeads,
    headDim: hiddenSize / numHeads,
    layerNormEps: num('layer_norm_epsilon', 1e-5),
    maxPositionEmbeddings: int('n_positions', json.n_ctx ?? 1024),
    tieWordEmbeddings: json.tie_word_embeddings ?? true,
  };
  checkBudget(config, fail);
  return config;
}

/** config.json of any family the lab runs, parsed and checked. */
export function parseHubConfig(raw: unknown, file = 'config.json'): HubConfig {
  return familyOf(raw, file) === 'gpt2' ? parseGpt2Config(raw, file) : parseLlamaConfig(raw, file);
}
