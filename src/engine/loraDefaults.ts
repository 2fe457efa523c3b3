// The defaults that depend on the kind of run (issue 33), as plain data (the page's main thread
// reads them through engine/api.ts): a base alone means LoRA rank 8, and a LoRA run whose
// learning rate nobody set gets LoRA's rate, not full fine-tuning's. The URL codec
// (runConfig.ts), the CLI's flags (cli/settingFlags.ts) and the page's controls
// (ui/lab/settingField.tsx) all apply them here.
import { DEFAULT_GRPO_CONFIG } from '../rl/config';
import type { RunConfig } from './types';

/** The rank a base gets when the run names none: PEFT examples' usual 8 (alpha 16: scale 2). */
export const DEFAULT_BASE_LORA_RANK = 8;

/**
 * LoRA on the lab's tiny models, ~7× full fine-tuning's rate (docs/EXPERIMENTS.md §4). LoRA's
 * update starts from B = 0 and moves the weights only through B·A, so it needs a larger rate
 * than full fine-tuning. Chosen for the ~115–130 steps five quiet minutes hold since a step got
 * 1.8× faster: 1.5e-3, the fastest over the ~60 steps they held before, reaches its plateau by
 * step ~50 on seeds 2 and 3 (five minutes: z 1.12 and 2.28), while at 1e-3 the rise spans the
 * five minutes on seeds 1–3 and L1–L4 hold.
 */
export const TINY_LORA_LEARNING_RATE = 1e-3;

/**
 * LoRA over a pretrained base. TRL's GRPO recipe with LoRA ("LoRA Without Regret",
 * Qwen3-0.6B) trains at 5e-5 with alpha 32, rank 1; the adapter's step grows with alpha, so
 * at the lab's alpha 16 the same step is ~1e-4. TRL's SFT recipes use 2e-4 with LoRA (ten
 * times their 2e-5 without). Not measured here on a real base: no weights can be downloaded.
 */
export const BASE_LORA_LEARNING_RATE = 1e-4;

/** A run's default learning rate, its name and where it comes from, in words for the page. */
export interface LearningRateDefault {
  value: number;
  name: string;
  source: string;
}

type Kind = Pick<RunConfig, 'loraRank' | 'base'>;

/** What the learning rate is when nobody set it: full fine-tuning's, or LoRA's on a tiny model or a base. */
export function defaultLearningRate(config: Kind): LearningRateDefault {
  if (!((config.loraRank ?? 0) > 0))
    return {
      value: DEFAULT_GRPO_CONFIG.learningRate,
      name: 'full fine-tuning default',
      source: 'measured on the lab’s models',
    };
  if (config.base !== undefined)
    return {
      value: BASE_LORA_LEARNING_RATE,
      name: 'LoRA default over a base',
      source:
        'TRL’s LoRA GRPO recipe, 5e-5 at alpha 32, is this step at alpha 16; not yet measured on a real base here',
    };
  return {
    value: TINY_LORA_LEARNING_RATE,
    name: 'LoRA default for the lab’s models',
    source: 'measured on seeds 1–3',
  };
}

/** The rank when nobody set it: 8 with a base (a base trains adapters only), else none. */
export function defaultLoraRank(config: Pick<RunConfig, 'base'>): number | undefined {
  return config.base !== undefined ? DEFAULT_BASE_LORA_RANK : undefined;
}

/** The settings whose default depends on the kind of run, by their path in the settings table. */
export const KIND_DEFAULT_PATHS = ['loraRank', 'grpo.learningRate'] as const;
export type KindDefaultPath = (typeof KIND_DEFAULT_PATHS)[number];

/** The default of one of them for this run. */
export function kindDefault(config: Kind, path: KindDefaultPath): number | undefined {
  return path === 'loraRank' ? defaultLoraRank(config) : defaultLearningRate(config).value;
}

/**
 * `config` with its kind's defaults in every one of these settings that `isSet` says nobody
 * set: the rank first (a base alone means rank 8), then the rate for the kind that gives.
 */
export function withKindDefaults(
  config: RunConfig,
  isSet: (path: KindDefaultPath) => boolean,
): RunConfig {
  let out = config;
  if (!isSet('loraRank')) {
    const { loraRank: _rank, ...rest } = out;
    const rank = defaultLoraRank(out);
    out = rank === undefined ? rest : { ...rest, loraRank: rank };
  }
  if (!isSet('grpo.learningRate'))
    out = { ...out, grpo: { ...out.grpo, learningRate: defaultLearningRate(out).value } };
  return out;
}

/**
 * After a change on the page (`before` → `after`): a setting the change did not touch and that
 * held its default for `before`'s kind follows the default of `after`'s kind (choosing a base
 * brings rank 8 and LoRA's rate; going back to the lab's models brings full fine-tuning's).
 * A value the user set, or set in this change, stays.
 */
export function followKindDefaults(before: RunConfig, after: RunConfig): RunConfig {
  const valueAt = (config: RunConfig, path: KindDefaultPath) =>
    path === 'loraRank' ? config.loraRank : config.grpo.learningRate;
  return withKindDefaults(after, (path) => {
    const old = valueAt(before, path);
    return valueAt(after, path) !== old || old !== kindDefault(before, path);
  });
}

/** "learning rate 0.001 (LoRA default for the lab’s models, …)": the rate in force and why. */
export function describeLearningRate(config: RunConfig): string {
  const rate = config.grpo.learningRate;
  const fallback = defaultLearningRate(config);
  return rate === fallback.value
    ? `learning rate ${rate} (${fallback.name}: ${fallback.source})`
    : `learning rate ${rate} (set for this run; the ${fallback.name} is ${fallback.value})`;
}
