// A Hugging Face checkpoint's config.json as the lab reads it: a family's fields in the lab's
// names (the Llama family's in llamaConfig.ts, GPT-2's here) and the one transformer's config
// they make (hubTransformerConfig: its switches and weight names), which the loader, the tfjs
// forward and the kernels read. A new family is one more member: its fields, parsed and refused
// by name in hfConfig.ts, and its config of the one transformer with its names.
import { gpt2TransformerConfig } from '../config';
import {
  parameterCount,
  type TransformerConfig,
  type WeightSpec,
  weightSpecs,
} from '../transformerConfig';
import { type HubSizes, type LlamaConfig, llamaTransformerConfig } from './llamaConfig';

/** A Hub GPT-2 (GPT2LMHeadModel): config.json's n_* fields in the lab's names (as many key/value heads as heads). */
export interface Gpt2Config extends HubSizes {
  family: 'gpt2';
  modelType: 'gpt2';
  layerNormEps: number;
}

export type HubConfig = LlamaConfig | Gpt2Config;

/** The config as the one transformer reads it. */
export function hubTransformerConfig(c: HubConfig): TransformerConfig {
  if (c.family === 'llama') return llamaTransformerConfig(c);
  const t = gpt2TransformerConfig({
    vocabSize: c.vocabSize,
    hidden: c.hiddenSize,
    layers: c.numLayers,
    heads: c.numHeads,
    intermediate: c.intermediateSize,
    contextLength: c.maxPositionEmbeddings,
    normEps: c.layerNormEps,
  });
  return c.tieWordEmbeddings
    ? t
    : { ...t, tiedHead: false, names: { ...t.names, head: 'lm_head.weight' } };
}

/** Every tensor the checkpoint holds, by Hugging Face's names. */
export const hubWeightSpecs = (c: HubConfig): WeightSpec[] => weightSpecs(hubTransformerConfig(c));

export const hubParameterCount = (c: HubConfig): number => parameterCount(hubTransformerConfig(c));
