// LoRA over a frozen Llama-family base on tfjs, as a role trains it: the adapter (the same
// A/B variables and PEFT init as GPT-2's, model/gptLora.ts) is applied in the one transformer's forward (model/transformer.ts) on
// q/k/v/o and gate/up/down (nn.Linear, so PEFT's fan_in_fan_out is false), never merged. A role
// is a view of the base — its weights map shared, its own adapter — so every role's adapter and
// the KL reference (the view without adapter) sit over one copy of the base.

import { createLoraOver, type GptLora, loraFromValuesOver } from '../gptLora';
import { type AdapterFiles, adapterFiles } from '../gptLoraFiles';
import { LLAMA_LORA_TARGETS, type LoraSettings } from '../loraSettings';
import { type Projection, projections, projectionTarget } from '../transformerConfig';
import type { CheckpointSource } from './hfCheckpoint';
import type { LlamaModel } from './llama';
import type { LlamaConfig } from './llamaConfig';
import { llamaTransformerConfig } from './llamaConfig';
import { readLoraAdapter } from './lora';

/** The targeted projections of `config`, in layer order, with their in and out sizes. */
export function llamaLoraModules(config: LlamaConfig, targets: readonly string[]): Projection[] {
  const unknown = targets.filter((t) => !(LLAMA_LORA_TARGETS as readonly string[]).includes(t));
  if (unknown.length)
    throw new Error(
      `loraTargets: ${unknown[0]} is not a Llama-family projection (${LLAMA_LORA_TARGETS.join(', ')})`,
    );
  return projections(llamaTransformerConfig(config)).filter((p) =>
    targets.includes(projectionTarget(p.module)),
  );
}

/** A role over `base`: the base's weights (shared, frozen) with the role's adapter. */
export function llamaRole(base: LlamaModel, lora: GptLora | undefined): LlamaModel {
  return lora
    ? { config: base.config, weights: base.weights, lora }
    : { config: base.config, weights: base.weights };
}

/** A fresh adapter (A kaiming-uniform from `seed`, B zero: the role starts as the base). */
export function createLlamaLora(
  config: LlamaConfig,
  settings: LoraSettings,
  seed: number,
): GptLora {
  return createLoraOver(llamaLoraModules(config, settings.targets), settings, seed);
}

/** The adapter's PEFT files (adapter_config.json names `baseModel`). */
export function llamaAdapterFiles(lora: GptLora, baseModel: string): Promise<AdapterFiles> {
  return adapterFiles(lora, baseModel, false);
}

/** Reads a PEFT adapter saved for a base of `config` (refused in words where it does not fit). */
export async function readLlamaLora(
  source: CheckpointSource,
  config: LlamaConfig,
): Promise<GptLora> {
  const adapter = await readLoraAdapter(source);
  const values = new Map<string, { a: Float32Array; b: Float32Array }>();
  const targets = new Set<string>();
  let rank = 0;
  for (const [module, pair] of adapter.modules) {
    values.set(module, { a: pair.a, b: pair.b });
    targets.add(module.slice(module.lastIndexOf('.') + 1));
    rank = pair.rank;
  }
  const settings = { rank, alpha: adapter.scale * rank, targets: [...targets] };
  return loraFromValuesOver(
    llamaLoraModules(config, settings.targets),
    settings,
    values,
    source.label,
  );
}
