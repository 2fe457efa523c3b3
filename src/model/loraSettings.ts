// LoRA's run settings as plain data (no tfjs: the page's main thread reads them through
// engine/runConfig.ts): rank, alpha, targets, their defaults and their checks.

/** The GPT-2 projections LoRA may target, by their last name. */
export const GPT2_LORA_TARGETS = ['c_attn', 'c_proj', 'c_fc'] as const;

/** The Llama family's (Llama, Qwen2, Qwen3) projections LoRA may target, PEFT's names. */
export const LLAMA_LORA_TARGETS = [
  'q_proj',
  'k_proj',
  'v_proj',
  'o_proj',
  'gate_proj',
  'up_proj',
  'down_proj',
] as const;

/** alpha when the run gives none: 16, PEFT examples' usual value (scale 2 at rank 8). */
export const DEFAULT_LORA_ALPHA = 16;

export interface LoraSettings {
  rank: number;
  alpha: number;
  targets: readonly string[];
}

/** A run's LoRA settings, or null for full fine-tuning (rank absent or 0); targets default to the family's all. */
export function loraSettingsOf(
  config: {
    loraRank?: number;
    loraAlpha?: number;
    loraTargets?: readonly string[];
  },
  family: 'gpt2' | 'llama' = 'gpt2',
): LoraSettings | null {
  if (!config.loraRank) return null;
  return {
    rank: config.loraRank,
    alpha: config.loraAlpha ?? DEFAULT_LORA_ALPHA,
    targets:
      config.loraTargets ?? (family === 'llama' ? [...LLAMA_LORA_TARGETS] : [...GPT2_LORA_TARGETS]),
  };
}

/** What cannot run, by field, each message starting with the field it concerns. */
export function loraProblems(config: {
  loraRank?: number;
  loraAlpha?: number;
  loraTargets?: readonly string[];
}): { field: string; message: string }[] {
  const problems: { field: string; message: string }[] = [];
  const { loraRank: rank, loraAlpha: alpha, loraTargets: targets } = config;
  if (rank !== undefined && !(Number.isInteger(rank) && rank >= 0))
    problems.push({
      field: 'loraRank',
      message: `loraRank must be a whole number >= 0, got ${rank}`,
    });
  if (alpha !== undefined && !(Number.isFinite(alpha) && alpha > 0))
    problems.push({ field: 'loraAlpha', message: `loraAlpha must be a number > 0, got ${alpha}` });
  if (targets !== undefined) {
    // One family's names (which family is the model's: checked where the model is known).
    const fits = (names: readonly string[]) => targets.every((t) => names.includes(t));
    if (targets.length === 0 || !(fits(GPT2_LORA_TARGETS) || fits(LLAMA_LORA_TARGETS)))
      problems.push({
        field: 'loraTargets',
        message: `loraTargets must be some of ${GPT2_LORA_TARGETS.join(', ')} (GPT-2) or of ${LLAMA_LORA_TARGETS.join(', ')} (Llama family), got "${targets.join(',')}"`,
      });
  }
  return problems;
}
