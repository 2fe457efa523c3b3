// A GPT-2 LoRA adapter as PEFT saves it: adapter_config.json (peft_type LORA, r, lora_alpha,
// target_modules, fan_in_fan_out true for GPT-2's Conv1D, task_type CAUSAL_LM) and
// adapter_model.safetensors (`base_model.model.<module>.lora_A.weight` [r, in], `.lora_B.weight`
// [out, r], float32), so PeftModel.from_pretrained loads it over the base. Reading goes through
// the one PEFT reader of the lab (families/lora.ts).
import type { ModelConfig } from './config';
import type { CheckpointSource } from './families/hfCheckpoint';
import { readLoraAdapter } from './families/lora';
import { type GptLora, loraFromValues, PEFT_PREFIX } from './gptLora';
import { encodeSafetensors, type NamedTensor } from './safetensors';

export const ADAPTER_FILES = ['adapter_config.json', 'adapter_model.safetensors'] as const;

export interface AdapterFiles {
  'adapter_config.json': string;
  'adapter_model.safetensors': Uint8Array;
}

/**
 * The adapter's two files; `baseModel` is what PEFT records as base_model_name_or_path.
 * `fanInFanOut`: GPT-2's Conv1D (the default); false for nn.Linear (the Llama family).
 */
export async function adapterFiles(
  lora: GptLora,
  baseModel: string,
  fanInFanOut = true,
): Promise<AdapterFiles> {
  const tensors = new Map<string, NamedTensor>();
  for (const [module, { a, b }] of lora.modules) {
    tensors.set(`${PEFT_PREFIX}${module}.lora_A.weight`, {
      shape: [...a.shape],
      data: (await a.data()) as Float32Array,
    });
    tensors.set(`${PEFT_PREFIX}${module}.lora_B.weight`, {
      shape: [...b.shape],
      data: (await b.data()) as Float32Array,
    });
  }
  const { rank, alpha, targets } = lora.settings;
  const config = {
    peft_type: 'LORA',
    task_type: 'CAUSAL_LM',
    base_model_name_or_path: baseModel,
    r: rank,
    lora_alpha: alpha,
    lora_dropout: 0,
    target_modules: [...targets],
    fan_in_fan_out: fanInFanOut,
    bias: 'none',
    use_rslora: false,
    use_dora: false,
    init_lora_weights: true,
    inference_mode: true,
    modules_to_save: null,
  };
  return {
    'adapter_config.json': `${JSON.stringify(config, null, 2)}\n`,
    'adapter_model.safetensors': encodeSafetensors(tensors, { format: 'pt' }),
  };
}

/** Reads a PEFT adapter for a GPT-2 of `config`; refuses one that does not fit it, in words. */
export async function readGptLora(source: CheckpointSource, config: ModelConfig): Promise<GptLora> {
  const adapter = await readLoraAdapter(source, { conv1d: true });
  const values = new Map<string, { a: Float32Array; b: Float32Array }>();
  const targets = new Set<string>();
  let rank = 0;
  for (const [module, pair] of adapter.modules) {
    values.set(module, { a: pair.a, b: pair.b });
    targets.add(module.slice(module.lastIndexOf('.') + 1));
    rank = pair.rank;
  }
  // alpha so that alpha / r is the file's scale (rsLoRA's alpha / √r included).
  return loraFromValues(
    config,
    { rank, alpha: adapter.scale * rank, targets: [...targets] },
    values,
    source.label,
  );
}

/** A CheckpointSource over files held in memory (a snapshot's, a ZIP's) under `prefix/`. */
export function memorySource(
  files: Readonly<Record<string, Uint8Array | string>>,
  prefix: string,
): CheckpointSource {
  return {
    label: prefix,
    read: async (file) => {
      const found = files[`${prefix}/${file}`];
      if (found === undefined) return null;
      return typeof found === 'string' ? new TextEncoder().encode(found) : found;
    },
  };
}
