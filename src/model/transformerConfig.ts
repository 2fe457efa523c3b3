// The one transformer's configuration as plain data (model/transformer.ts runs it): what differs
// between the families the lab runs, and where each weight is in a checkpoint. The lab's GPT-2
// is gptTransformerConfig (model/config.ts), the Llama family llamaTransformerConfig
// (model/families/llamaConfig.ts). `projections` lists the linear layers, which LoRA may target.

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

export interface TransformerConfig {
  vocabSize: number;
  /** The residual stream's width. */
  hidden: number;
  layers: number;
  heads: number;
  /** Key/value heads (grouped-query attention): heads is a multiple of it. */
  kvHeads: number;
  headDim: number;
  /** The MLP's inner width. */
  intermediate: number;
  /** The longest sequence (learned positions' rows; RoPE's max_position_embeddings). */
  contextLength: number;
  norm: 'layernorm' | 'rmsnorm';
  normEps: number;
  /** Learned position embeddings added to the tokens', or RoPE on q and k. */
  positions: 'learned' | 'rope';
  rope?: { theta: number; scaling?: RopeScaling };
  mlp: 'gelu' | 'swiglu';
  /** q|k|v come from one projection (GPT-2's c_attn), else from three. */
  fusedQkv: boolean;
  /** A projection's weight is [in, out] (GPT-2's Conv1D) or [out, in] (nn.Linear). */
  weightLayout: 'in-out' | 'out-in';
  /** q/k/v projections carry a bias (GPT-2, Qwen2). */
  qkvBias: boolean;
  /** The output and MLP projections carry a bias (GPT-2). */
  projBias: boolean;
  /** RMSNorm over each head's q and k before RoPE (Qwen3). */
  qkNorm: boolean;
  /** The head reuses the token embedding. */
  tiedHead: boolean;
  names: TransformerNames;
}

/** Where each weight is in the checkpoint: full names, or a layer's prefix and its modules. */
export interface TransformerNames {
  embed: string;
  /** Learned positions' table. */
  positions?: string;
  /** The final norm (its `.weight`, and `.bias` for LayerNorm). */
  finalNorm: string;
  /** An untied head's weight. */
  head?: string;
  /** Layer i's prefix (`transformer.h.3`); the modules below are under it. */
  layer: (i: number) => string;
  inNorm: string;
  postNorm: string;
  /** The fused q|k|v projection (fusedQkv), else q, k and v. */
  qkv?: string;
  q?: string;
  k?: string;
  v?: string;
  qNorm?: string;
  kNorm?: string;
  o: string;
  /** GELU's first projection (fc), or SwiGLU's gate and up. */
  fc?: string;
  gate?: string;
  up?: string;
  down: string;
}

/** A linear layer of the model: its full name (`transformer.h.0.attn.c_attn`), in and out sizes. */
export interface Projection {
  module: string;
  inn: number;
  out: number;
}

/** Every layer's projections in the order the block runs them, with their in and out sizes. */
export function projections(c: TransformerConfig): Projection[] {
  const n = c.names;
  const [d, f] = [c.hidden, c.intermediate];
  const q = c.heads * c.headDim;
  const kv = c.kvHeads * c.headDim;
  const attention: [string | undefined, number, number][] = c.fusedQkv
    ? [[n.qkv, d, q + 2 * kv]]
    : [
        [n.q, d, q],
        [n.k, d, kv],
        [n.v, d, kv],
      ];
  const mlp: [string | undefined, number, number][] =
    c.mlp === 'gelu'
      ? [[n.fc, d, f]]
      : [
          [n.gate, d, f],
          [n.up, d, f],
        ];
  const perLayer = [...attention, [n.o, q, d], ...mlp, [n.down, f, d]] as const;
  return Array.from({ length: c.layers }, (_, i) =>
    perLayer.map(([module, inn, out]) => ({ module: `${n.layer(i)}.${module}`, inn, out })),
  ).flat();
}

/** A projection's last name (`c_proj`, `q_proj`): what a LoRA target names. */
export const projectionTarget = (module: string): string =>
  module.slice(module.lastIndexOf('.') + 1);
