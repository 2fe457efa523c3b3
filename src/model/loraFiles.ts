// A role's LoRA adapter as PEFT saves it, for any config: adapter_config.json (peft_type LORA, r,
// lora_alpha, target_modules, fan_in_fan_out true for GPT-2's Conv1D layout, task_type
// CAUSAL_LM) and adapter_model.safetensors (`base_model.model.<module>.lora_A.weight` [r, in],
// `.lora_B.weight` [out, r], float32), so PeftModel.from_pretrained loads it over the base.
// Reading goes through the one PEFT reader of the lab (peft.ts).
import type { CheckpointSource } from './families/hfCheckpoint';
import { type Lora, loraFromValues, PEFT_PREFIX } from './lora';
import { readLoraAdapter } from './peft';
import { encodeSafetensors, type NamedTensor } from './safetensors';
import type { TransformerConfig } from './transformerConfig';

export const ADAPTER_FILES = ['adapter_config.json', 'adapter_model.safetensors'] as const;

export interface AdapterFiles {
  'adapter_config.json': string;
  'adapter_model.safetensors': Uint8Array;
}

/**
 * The adapter's two files for a model of config `c`; `baseModel` is what PEFT records as
 * base_model_name_or_path.
 */
export async function adapterFiles(
  lora: Lora,
  baseModel: string,
  c: TransformerConfig,
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
    fan_in_fan_out: c.weightLayout === 'in-out',
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

/**
 * Reads a role's PEFT adapter for a model of config `c` (any family's: a Conv1D layout's A and
 * B as fan_in_fan_out); refuses one that does not fit it, in words.
 */
export async function readLora(source: CheckpointSource, c: TransformerConfig): Promise<Lora> {
  const adapter = await readLoraAdapter(source, { conv1d: c.weightLayout === 'in-out' });
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
    c,
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
