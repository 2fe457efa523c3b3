// A PEFT LoRA adapter (adapter_config.json + adapter_model.safetensors, PEFT's tensor names
// `base_model.model.<module>.lora_A.weight` [r, in] and `.lora_B.weight` [out, r]) applied on
// load: W ← W + s·B·A with s = lora_alpha / r, or lora_alpha / √r with use_rslora. What the
// lab does not implement (DoRA, per-module ranks, fan_in_fan_out on Linear layers) is refused
// by name. GPT-2's Conv1D layers are fan_in_fan_out by nature (PEFT sets it for them): the
// role adapter's reader (loraFiles.ts) passes `conv1d` for them and A, B keep the same layout.

import type { CheckpointSource } from './families/hfCheckpoint';
import { parseJsonFile } from './families/hfCheckpoint';
import { readSafetensors, toFloat32 } from './safetensors';

export interface LoraPair {
  /** [r, in] */
  a: Float32Array;
  /** [out, r] */
  b: Float32Array;
  rank: number;
}

export interface LoraAdapter {
  label: string;
  scale: number;
  /** Module name (e.g. model.layers.0.self_attn.q_proj) → its A and B. */
  modules: Map<string, LoraPair>;
}

const PREFIX = 'base_model.model.';

export async function readLoraAdapter(
  source: CheckpointSource,
  options: { conv1d?: boolean } = {},
): Promise<LoraAdapter> {
  const { label } = source;
  const configBytes = await source.read('adapter_config.json');
  if (!configBytes) throw new Error(`${label}: adapter_config.json is missing`);
  const cfg = parseJsonFile<Record<string, unknown>>(configBytes, 'adapter_config.json', label);
  const fail = (why: string): never => {
    throw new Error(`${label}: adapter_config.json: ${why}`);
  };
  if (cfg.peft_type !== undefined && cfg.peft_type !== 'LORA')
    fail(`peft_type "${String(cfg.peft_type)}" is not LORA`);
  const r = cfg.r;
  const alpha = cfg.lora_alpha;
  if (typeof r !== 'number' || !Number.isInteger(r) || r <= 0) fail('r must be a positive integer');
  if (typeof alpha !== 'number' || !Number.isFinite(alpha)) fail('lora_alpha must be a number');
  if (cfg.use_dora) fail('use_dora true is not implemented');
  if (cfg.fan_in_fan_out && !options.conv1d) fail('fan_in_fan_out true is not implemented');
  for (const key of ['rank_pattern', 'alpha_pattern'] as const) {
    const pattern = cfg[key];
    if (pattern && typeof pattern === 'object' && Object.keys(pattern).length)
      fail(`${key} (per-module ranks or alphas) is not implemented`);
  }
  const scale = cfg.use_rslora
    ? (alpha as number) / Math.sqrt(r as number)
    : (alpha as number) / (r as number);

  const weightBytes = await source.read('adapter_model.safetensors');
  if (!weightBytes) throw new Error(`${label}: adapter_model.safetensors is missing`);
  const { tensors } = readSafetensors(weightBytes, `${label}: adapter_model.safetensors`);
  const modules = new Map<string, LoraPair>();
  for (const [name, t] of tensors) {
    const match = /^base_model\.model\.(.+)\.lora_([AB])\.weight$/.exec(name);
    if (!match)
      throw new Error(`${label}: adapter_model.safetensors has ${name}, not a LoRA A or B`);
    if (match[2] === 'B') continue;
    const module = match[1]!;
    const b = tensors.get(`${PREFIX}${module}.lora_B.weight`);
    if (!b)
      throw new Error(`${label}: adapter_model.safetensors has ${module}'s lora_A but no lora_B`);
    if (t.shape.length !== 2 || b.shape.length !== 2 || t.shape[0] !== r || b.shape[1] !== r) {
      throw new Error(
        `${label}: ${module}: lora_A [${t.shape}] and lora_B [${b.shape}] do not have rank r = ${r}`,
      );
    }
    modules.set(module, { a: toFloat32(t), b: toFloat32(b), rank: r as number });
  }
  for (const name of tensors.keys()) {
    const module = name.replace(/^base_model\.model\./, '').replace(/\.lora_B\.weight$/, '');
    if (name.endsWith('.lora_B.weight') && !modules.has(module))
      throw new Error(`${label}: adapter_model.safetensors has ${module}'s lora_B but no lora_A`);
  }
  if (modules.size === 0)
    throw new Error(`${label}: adapter_model.safetensors has no LoRA weights`);
  return { label, scale, modules };
}

/** Refuses an adapter whose targets the model lacks or whose shapes do not fit them. */
export function checkLoraTargets(
  shapes: Map<string, number[]>,
  adapter: LoraAdapter,
  layout: 'in-out' | 'out-in' = 'out-in',
): void {
  for (const [module, pair] of adapter.modules) {
    const shape = shapes.get(`${module}.weight`);
    if (!shape)
      throw new Error(
        `${adapter.label}: the adapter targets ${module}, which the model does not have`,
      );
    const [out, inn] = (layout === 'out-in' ? shape : [...shape].reverse()) as [number, number];
    if (
      shape.length !== 2 ||
      pair.a.length !== pair.rank * inn ||
      pair.b.length !== out * pair.rank
    ) {
      throw new Error(
        `${adapter.label}: ${module}: the adapter's shapes do not fit the weight [${shape}]`,
      );
    }
  }
}

/**
 * PEFT's merge of a projection's weight (row-major, changed in place) ← weight + scale·B·A, with
 * A [r, in] and B [out, r]: an nn.Linear weight [out, in] ('out-in'), or GPT-2's Conv1D
 * [in, out] ('in-out', the delta transposed); each sum over r in float64.
 */
export function mergeLora(
  weight: Float32Array,
  inn: number,
  out: number,
  a: ArrayLike<number>,
  b: ArrayLike<number>,
  rank: number,
  scale: number,
  layout: 'in-out' | 'out-in',
): void {
  const row = new Float64Array(inn);
  for (let o = 0; o < out; o++) {
    row.fill(0);
    for (let k = 0; k < rank; k++) {
      const bk = b[o * rank + k] as number;
      for (let i = 0; i < inn; i++) row[i]! += bk * (a[k * inn + i] as number);
    }
    for (let i = 0; i < inn; i++) {
      const at = layout === 'out-in' ? o * inn + i : i * out + o;
      weight[at]! += scale * row[i]!;
    }
  }
}
