// The default run and its URL form. Data only (no tfjs), so the page's main thread can
// import it without pulling in the engine.
import { DEFAULT_GRPO_CONFIG, type GrpoConfig, resolveGrpoConfig } from '../rl/config';
import type { RunConfig } from './types';

const TIERS = ['L1', 'L2', 'L3', 'L4'] as const;
const PRESET_NAMES = ['tiny', 'small', 'base'] as const;

export const DEFAULT_RUN_CONFIG: Readonly<RunConfig> = Object.freeze({
  preset: 'tiny',
  grpo: { ...DEFAULT_GRPO_CONFIG, seed: 1 },
  tierMix: { L1: 1, L2: 1, L3: 1, L4: 1 },
  evalEvery: 10,
  evalTasksPerTier: 8,
  topK: 0,
});

/** The URL keys of each setting; only settings that differ from the default are written. */
const GRPO_KEYS: Record<string, keyof GrpoConfig> = {
  mode: 'mode',
  tasks: 'tasksPerStep',
  n: 'plansPerTask',
  m: 'programsPerPlan',
  temp: 'temperature',
  epsl: 'epsilonLow',
  epsh: 'epsilonHigh',
  beta: 'beta',
  loss: 'lossType',
  iters: 'numIterations',
  clip: 'maxGradNorm',
  lr: 'learningRate',
  scale: 'scaleRewards',
  seed: 'seed',
  plantok: 'maxPlanTokens',
  codetok: 'maxProgramTokens',
};
const WEIGHT_KEYS = {
  wpass: 'passFraction',
  weff: 'efficiency',
  wfmt: 'formatPenalty',
} as const;

export function encodeRunConfig(config: RunConfig): URLSearchParams {
  const params = new URLSearchParams();
  const base = DEFAULT_RUN_CONFIG;
  if (config.preset !== base.preset) params.set('preset', config.preset);
  for (const [key, field] of Object.entries(GRPO_KEYS)) {
    if (config.grpo[field] !== base.grpo[field]) params.set(key, String(config.grpo[field]));
  }
  for (const [key, field] of Object.entries(WEIGHT_KEYS)) {
    const value = config.grpo.rewardWeights[field];
    if (value !== base.grpo.rewardWeights[field]) params.set(key, String(value));
  }
  const mix = formatMix(config.tierMix);
  if (mix !== formatMix(base.tierMix)) params.set('tiers', mix);
  if (config.evalEvery !== base.evalEvery) params.set('eval', String(config.evalEvery));
  if (config.topK !== base.topK) params.set('topk', String(config.topK));
  return params;
}

/** Reads a config from URL parameters; unknown or invalid values are reported, not thrown. */
export function decodeRunConfig(params: URLSearchParams): {
  config: RunConfig;
  problems: string[];
} {
  const problems: string[] = [];
  const base = DEFAULT_RUN_CONFIG;
  const grpo: Record<string, unknown> = {
    ...base.grpo,
    rewardWeights: { ...base.grpo.rewardWeights },
  };
  const weights = grpo.rewardWeights as Record<string, number>;
  let preset = base.preset;
  let tierMix = { ...base.tierMix };
  let evalEvery = base.evalEvery;
  let topK = base.topK;
  for (const [key, raw] of params) {
    if (key === 'preset') {
      if ((PRESET_NAMES as readonly string[]).includes(raw)) preset = raw as RunConfig['preset'];
      else problems.push(`preset "${raw}" is not one of ${PRESET_NAMES.join(', ')}`);
    } else if (key === 'tiers') {
      const parsed = parseMix(raw);
      if (parsed) tierMix = parsed;
      else problems.push(`tiers "${raw}" is not like L1:1,L2:2`);
    } else if (key === 'eval' || key === 'topk') {
      const value = Number(raw);
      if (!Number.isInteger(value) || value < 0) problems.push(`${key} must be a whole number ≥ 0`);
      else if (key === 'eval') evalEvery = value;
      else topK = value;
    } else if (key in GRPO_KEYS) {
      const field = GRPO_KEYS[key] as keyof GrpoConfig;
      grpo[field] = typeof base.grpo[field] === 'number' ? Number(raw) : raw;
    } else if (key in WEIGHT_KEYS) {
      weights[WEIGHT_KEYS[key as keyof typeof WEIGHT_KEYS]] = Number(raw);
    }
    // Other keys (e.g. a page's own view state) are not the run's business.
  }
  let resolved: GrpoConfig;
  try {
    resolved = resolveGrpoConfig(grpo as Partial<GrpoConfig>);
  } catch (error) {
    problems.push(error instanceof Error ? error.message : String(error));
    resolved = { ...base.grpo };
  }
  return { config: { ...base, preset, grpo: resolved, tierMix, evalEvery, topK }, problems };
}

function formatMix(mix: RunConfig['tierMix']): string {
  return TIERS.filter((tier) => (mix[tier] ?? 0) > 0)
    .map((tier) => `${tier}:${mix[tier]}`)
    .join(',');
}

function parseMix(text: string): RunConfig['tierMix'] | null {
  const mix: RunConfig['tierMix'] = {};
  for (const part of text.split(',')) {
    const [tier, weight] = part.split(':');
    const value = Number(weight);
    if (!(TIERS as readonly string[]).includes(tier ?? '') || !(value > 0)) return null;
    mix[tier as (typeof TIERS)[number]] = value;
  }
  return Object.keys(mix).length > 0 ? mix : null;
}
