// Model configuration as plain data, with the presets the lab ships, and the lab's GPT-2 as a
// configuration of the one transformer.
import {
  type TransformerConfig,
  type TransformerNames,
  parameterCount as transformerParameterCount,
} from './transformerConfig';

export type PresetName = 'tiny' | 'tiny-2x' | 'small' | 'base';
/** A model's role: one agent's weights, or one model shared by both (a role token in each prompt). */
export type ModelRole = 'planner' | 'coder' | 'shared';

export interface ModelConfig {
  preset: PresetName;
  /** Which role the weights serve; 'shared' = one model for both, prompted with a role token. */
  role: ModelRole;
  vocabSize: number;
  /** Context length (GPT-2's n_positions). */
  nCtx: number;
  nEmbd: number;
  nLayer: number;
  nHead: number;
  /** MLP width (GPT-2's n_inner), 4 × nEmbd. */
  nInner: number;
  layerNormEps: number;
}

type Shape = Pick<ModelConfig, 'nCtx' | 'nEmbd' | 'nLayer' | 'nHead'>;

// Context: the longest Coder sequence of the task world (statement + plan + code) is ~410
// characters. tiny learns in minutes on wasm on 2 CPU cores; small and base are for real GPUs.
export const PRESETS: Record<PresetName, Shape> = {
  tiny: { nEmbd: 64, nLayer: 2, nHead: 4, nCtx: 448 }, // ≈0.14M parameters
  // The pair's two tiny models in one (≈0.30M at the examples world's vocabulary): the
  // `single-2x` baseline of issue 30, one model with the Planner's and Coder's parameters.
  'tiny-2x': { nEmbd: 64, nLayer: 5, nHead: 4, nCtx: 448 },
  small: { nEmbd: 128, nLayer: 4, nHead: 4, nCtx: 512 }, // ≈0.87M
  base: { nEmbd: 256, nLayer: 6, nHead: 8, nCtx: 512 }, // ≈4.9M
};

export function isPresetName(name: string): name is PresetName {
  return Object.hasOwn(PRESETS, name);
}

export function makeConfig(
  preset: string,
  vocabSize: number,
  role: ModelRole = 'shared',
  overrides: Partial<Shape> = {},
): ModelConfig {
  if (!isPresetName(preset)) {
    throw new Error(`unknown preset "${preset}" (known: ${Object.keys(PRESETS).join(', ')})`);
  }
  const shape = { ...PRESETS[preset], ...overrides };
  if (shape.nEmbd % shape.nHead !== 0) throw new Error('nEmbd must be divisible by nHead');
  return { preset, role, vocabSize, ...shape, nInner: 4 * shape.nEmbd, layerNormEps: 1e-5 };
}

export function parameterCount(config: ModelConfig): number {
  return transformerParameterCount(gptTransformerConfig(config));
}

/** The lab's GPT-2 as a configuration of the one transformer (transformer.ts). */
export function gptTransformerConfig(config: ModelConfig): TransformerConfig {
  return gpt2TransformerConfig({
    vocabSize: config.vocabSize,
    hidden: config.nEmbd,
    layers: config.nLayer,
    heads: config.nHead,
    intermediate: config.nInner,
    contextLength: config.nCtx,
    normEps: config.layerNormEps,
  });
}

/** GPT-2's sizes: what its config.json (the lab's or the Hub's) gives. */
export type Gpt2Shape = Pick<
  TransformerConfig,
  'vocabSize' | 'hidden' | 'layers' | 'heads' | 'intermediate' | 'contextLength' | 'normEps'
>;

/** GPT-2 (Hugging Face's GPT2LMHeadModel, tied head) as a configuration of the one transformer. */
export function gpt2TransformerConfig(shape: Gpt2Shape): TransformerConfig {
  return {
    ...shape,
    kvHeads: shape.heads,
    headDim: shape.hidden / shape.heads,
    norm: 'layernorm',
    positions: 'learned',
    mlp: 'gelu',
    fusedQkv: true,
    weightLayout: 'in-out',
    qkvBias: true,
    projBias: true,
    qkNorm: false,
    tiedHead: true,
    names: GPT2_NAMES,
  };
}

/** Hugging Face's GPT-2 names (the lab's checkpoints are HF GPT-2 checkpoints; a Hub checkpoint
 * without the `transformer.` prefix is read with it, as transformers does). */
const GPT2_NAMES: TransformerNames = {
  embed: 'transformer.wte.weight',
  positions: 'transformer.wpe.weight',
  finalNorm: 'transformer.ln_f',
  layer: (i) => `transformer.h.${i}`,
  inNorm: 'ln_1',
  postNorm: 'ln_2',
  qkv: 'attn.c_attn',
  o: 'attn.c_proj',
  fc: 'mlp.c_fc',
  down: 'mlp.c_proj',
};
