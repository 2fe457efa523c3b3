// The Llama family (Llama, Qwen2, Qwen3) as Hugging Face's config.json describes it, in the
// lab's names, and as the one transformer's config (llamaTransformerConfig: its switches and
// Hugging Face's weight names). Plain data: the tfjs forward (model/families/hubModel.ts) and the
// WGSL engine (gpu/engine) both read it, so a checkpoint means the same thing on both paths.
import type { RopeScaling, TransformerConfig, TransformerNames } from '../transformerConfig';

export type { RopeScaling };

export type LlamaModelType = 'llama' | 'qwen2' | 'qwen3';

/** The sizes every Hugging Face config gives (hubConfig.ts' families), in the lab's names. */
export interface HubSizes {
  vocabSize: number;
  hiddenSize: number;
  intermediateSize: number;
  numLayers: number;
  /** Query heads. */
  numHeads: number;
  /** Key/value heads (grouped-query attention): numHeads is a multiple of it. */
  numKvHeads: number;
  /** Per-head width: config.json's `head_dim` when given, else hiddenSize / numHeads. */
  headDim: number;
  /** The longest sequence: RoPE's max_position_embeddings, GPT-2's n_positions. */
  maxPositionEmbeddings: number;
  /** The head reuses the embedding (no lm_head.weight). */
  tieWordEmbeddings: boolean;
}

export interface LlamaConfig extends HubSizes {
  family: 'llama';
  /** config.json's `model_type`. */
  modelType: LlamaModelType;
  ropeTheta: number;
  /** Absent: the default rotary embedding (inverse frequencies θ^(−2i/headDim)). */
  ropeScaling?: RopeScaling;
  rmsNormEps: number;
  /** q/k/v projections carry a bias (Qwen2). */
  attentionBias: boolean;
  /** RMSNorm over each head's q and k before RoPE (Qwen3). */
  qkNorm: boolean;
}

/** The config as the one transformer reads it. */
export function llamaTransformerConfig(c: LlamaConfig): TransformerConfig {
  return {
    vocabSize: c.vocabSize,
    hidden: c.hiddenSize,
    layers: c.numLayers,
    heads: c.numHeads,
    kvHeads: c.numKvHeads,
    headDim: c.headDim,
    intermediate: c.intermediateSize,
    contextLength: c.maxPositionEmbeddings,
    norm: 'rmsnorm',
    normEps: c.rmsNormEps,
    positions: 'rope',
    rope: { theta: c.ropeTheta, ...(c.ropeScaling ? { scaling: c.ropeScaling } : {}) },
    mlp: 'swiglu',
    fusedQkv: false,
    weightLayout: 'out-in',
    qkvBias: c.attentionBias,
    projBias: false,
    qkNorm: c.qkNorm,
    tiedHead: c.tieWordEmbeddings,
    names: LLAMA_NAMES,
  };
}

const LLAMA_NAMES: TransformerNames = {
  embed: 'model.embed_tokens.weight',
  finalNorm: 'model.norm',
  head: 'lm_head.weight',
  layer: (i) => `model.layers.${i}`,
  inNorm: 'input_layernorm',
  postNorm: 'post_attention_layernorm',
  q: 'self_attn.q_proj',
  k: 'self_attn.k_proj',
  v: 'self_attn.v_proj',
  qNorm: 'self_attn.q_norm',
  kNorm: 'self_attn.k_norm',
  o: 'self_attn.o_proj',
  gate: 'mlp.gate_proj',
  up: 'mlp.up_proj',
  down: 'mlp.down_proj',
};
