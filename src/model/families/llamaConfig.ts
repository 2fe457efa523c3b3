// The Llama family (Llama, Qwen2, Qwen3) as Hugging Face's config.json describes it, in the
// lab's names. Plain data: the tfjs forward (model/families/llama.ts) and the WGSL engine
// (gpu/engine) both read it, so a checkpoint means the same thing on both paths.

export type LlamaModelType = 'llama' | 'qwen2' | 'qwen3';

/**
 * config.json's `rope_scaling`, for the types the lab implements exactly (transformers'
 * modeling_rope_utils.py): `linear` divides every inverse frequency by factor; `llama3`
 * (Llama 3.1/3.2) divides the low frequencies, keeps the high ones and blends in between.
 */
export type RopeScaling =
  | { type: 'linear'; factor: number }
  | {
      type: 'llama3';
      factor: number;
      lowFreqFactor: number;
      highFreqFactor: number;
      originalMaxPositionEmbeddings: number;
    };

export interface LlamaConfig {
  family: 'llama';
  /** config.json's `model_type`. */
  modelType: LlamaModelType;
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
  ropeTheta: number;
  /** Absent: the default rotary embedding (inverse frequencies θ^(−2i/headDim)). */
  ropeScaling?: RopeScaling;
  rmsNormEps: number;
  /** q/k/v projections carry a bias (Qwen2). */
  attentionBias: boolean;
  /** RMSNorm over each head's q and k before RoPE (Qwen3). */
  qkNorm: boolean;
  /** The head reuses the embedding (no lm_head.weight). */
  tieWordEmbeddings: boolean;
  maxPositionEmbeddings: number;
}
