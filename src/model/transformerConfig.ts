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

/** One layer's linear layers by role, each [module under the layer, in, out]. */
interface LayerProjections {
  /** q|k|v fused, or q, k and v. */
  attention: Triple[];
  o: Triple;
  /** fc (GELU), or gate and up (SwiGLU). */
  mlp: Triple[];
  down: Triple;
}

type Triple = readonly [module: string, inn: number, out: number];

function layerProjections(c: TransformerConfig): LayerProjections {
  const n = c.names;
  const [d, f] = [c.hidden, c.intermediate];
  const q = c.heads * c.headDim;
  const kv = c.kvHeads * c.headDim;
  const name = (module: string | undefined) => module as string;
  return {
    attention: c.fusedQkv
      ? [[name(n.qkv), d, q + 2 * kv]]
      : [
          [name(n.q), d, q],
          [name(n.k), d, kv],
          [name(n.v), d, kv],
        ],
    o: [n.o, q, d],
    mlp:
      c.mlp === 'gelu'
        ? [[name(n.fc), d, f]]
        : [
            [name(n.gate), d, f],
            [name(n.up), d, f],
          ],
    down: [n.down, f, d],
  };
}

/** Every layer's projections in the order the block runs them, with their in and out sizes. */
export function projections(c: TransformerConfig): Projection[] {
  const p = layerProjections(c);
  const perLayer = [...p.attention, p.o, ...p.mlp, p.down];
  return Array.from({ length: c.layers }, (_, i) =>
    perLayer.map(([module, inn, out]) => ({ module: `${c.names.layer(i)}.${module}`, inn, out })),
  ).flat();
}

/** A projection's last name (`c_proj`, `q_proj`): what a LoRA target names. */
export const projectionTarget = (module: string): string =>
  module.slice(module.lastIndexOf('.') + 1);

/** A checkpoint's tensor: its name and shape. */
export interface WeightSpec {
  name: string;
  shape: number[];
}

/**
 * Every tensor a checkpoint of this config holds, by its names, in the order a block runs them
 * (a projection's weight, then its bias; q, k and v's weights before their biases): the
 * embedding, learned positions, each layer, the final norm, an untied head.
 */
export function weightSpecs(c: TransformerConfig): WeightSpec[] {
  const n = c.names;
  const norm = (module: string, width = c.hidden): WeightSpec[] => [
    { name: `${module}.weight`, shape: [width] },
    ...(c.norm === 'layernorm' ? [{ name: `${module}.bias`, shape: [width] }] : []),
  ];
  const weight = ([module, inn, out]: Triple): WeightSpec => ({
    name: `${module}.weight`,
    shape: c.weightLayout === 'in-out' ? [inn, out] : [out, inn],
  });
  const bias = ([module, , out]: Triple): WeightSpec => ({ name: `${module}.bias`, shape: [out] });
  /** Each projection's weight, then its bias where the config gives it one. */
  const linear = (ps: Triple[], withBias: boolean) =>
    ps.flatMap((p) => (withBias ? [weight(p), bias(p)] : [weight(p)]));
  const p = layerProjections(c);
  const specs: WeightSpec[] = [{ name: n.embed, shape: [c.vocabSize, c.hidden] }];
  if (n.positions) specs.push({ name: n.positions, shape: [c.contextLength, c.hidden] });
  for (let i = 0; i < c.layers; i++) {
    const at = (module: string) => `${n.layer(i)}.${module}`;
    const here = (ps: Triple[]) => ps.map(([m, inn, out]) => [at(m), inn, out] as const);
    const attention = here(p.attention);
    specs.push(...norm(at(n.inNorm)));
    specs.push(...(c.fusedQkv ? linear(attention, c.qkvBias) : attention.map(weight)));
    if (!c.fusedQkv && c.qkvBias) specs.push(...attention.map(bias));
    if (c.qkNorm)
      specs.push(
        ...norm(at(n.qNorm as string), c.headDim),
        ...norm(at(n.kNorm as string), c.headDim),
      );
    specs.push(...linear(here([p.o]), c.projBias), ...norm(at(n.postNorm)));
    specs.push(...linear(here([...p.mlp, p.down]), c.projBias));
  }
  specs.push(...norm(n.finalNorm));
  if (!c.tiedHead) specs.push({ name: n.head as string, shape: [c.vocabSize, c.hidden] });
  return specs;
}

/** The parameters weightSpecs lists. */
export function parameterCount(c: TransformerConfig): number {
  return weightSpecs(c).reduce((sum, s) => sum + s.shape.reduce((a, b) => a * b, 1), 0);
}
