// The Llama family (Llama, Qwen2, Qwen3) as Hugging Face's config.json describes it, in the
// lab's names. Plain data: the tfjs forward (model/families/llama.ts) and the WGSL engine
// (gpu/engine) both read it, so a checkpoint means the same thing on both paths.

export type LlamaModelType = 'llama' | 'qwen2' | 'qwen3';

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
  rmsNormEps: number;
  /** q/k/v projections carry a bias (Qwen2). */
  attentionBias: boolean;
  /** RMSNorm over each head's q and k before RoPE (Qwen3). */
  qkNorm: boolean;
  /** The head reuses the embedding (no lm_head.weight). */
  tieWordEmbeddings: boolean;
  maxPositionEmbeddings: number;
}
