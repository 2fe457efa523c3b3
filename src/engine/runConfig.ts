// The default run and its URL form. Data only (no tfjs), so the page's main thread can
// import it without pulling in the engine.
import { DEFAULT_GRPO_CONFIG, type GrpoConfig, validateGrpoConfig } from '../rl/config';
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
  if (config.memoryBudgetMiB !== undefined) params.set('mem', String(config.memoryBudgetMiB));
  return params;
}

/**
 * One setting that cannot run. `field` is the setting's name in the config: a GrpoConfig
 * key (`plansPerTask`), `rewardWeights.<key>`, or a RunConfig key (`tierMix`, `evalEvery`,
 * `topK`, `memoryBudgetMiB`), so a form can show the words beside the input they concern.
 */
export interface ConfigProblem {
  field: string;
  message: string;
}

/**
 * Every problem with `config`, by field, with the engine's own GRPO validation (the same
 * words TrainingSession would throw) and the run-level checks it does not make.
 */
export function runConfigProblems(config: RunConfig): ConfigProblem[] {
  // validateGrpoConfig starts each message with the field it concerns.
  const problems: ConfigProblem[] = validateGrpoConfig(config.grpo).map((message) => ({
    field: /^[A-Za-z]+(?:\.[A-Za-z]+)?/.exec(message)?.[0] ?? 'grpo',
    message,
  }));
  const weights = Object.values(config.tierMix);
  if (weights.some((weight) => !(weight !== undefined && weight >= 0 && Number.isFinite(weight)))) {
    problems.push({ field: 'tierMix', message: 'tierMix weights must be finite numbers >= 0' });
  } else if (!weights.some((weight) => (weight ?? 0) > 0)) {
    problems.push({ field: 'tierMix', message: 'tierMix needs at least one tier with weight > 0' });
  }
  for (const field of ['evalEvery', 'topK'] as const) {
    const value = config[field];
    if (!Number.isInteger(value) || value < 0) {
      problems.push({ field, message: `${field} must be a whole number >= 0, got ${value}` });
    }
  }
  if (!Number.isInteger(config.evalTasksPerTier) || config.evalTasksPerTier < 1) {
    problems.push({
      field: 'evalTasksPerTier',
      message: `evalTasksPerTier must be a positive integer, got ${config.evalTasksPerTier}`,
    });
  }
  const budget = config.memoryBudgetMiB;
  if (budget !== undefined && !(budget > 0 && Number.isFinite(budget))) {
    problems.push({
      field: 'memoryBudgetMiB',
      message: `memoryBudgetMiB must be a finite number of MiB > 0, got ${budget}`,
    });
  }
  return problems;
}

/** The config field each URL key sets (preset and tiers are checked as they are read). */
const FIELD_OF_KEY: Record<string, string> = {
  ...GRPO_KEYS,
  ...Object.fromEntries(Object.entries(WEIGHT_KEYS).map(([k, f]) => [k, `rewardWeights.${f}`])),
  eval: 'evalEvery',
  topk: 'topK',
  mem: 'memoryBudgetMiB',
};

/**
 * Reads a config from URL parameters. A value that cannot run is ignored (its setting keeps
 * the default) and named in `problems`; every other value of the link still applies.
 * Keys that are not settings (a page's own view state) are left alone.
 */
export function decodeRunConfig(params: URLSearchParams): {
  config: RunConfig;
  problems: string[];
} {
  const problems: string[] = [];
  const base = DEFAULT_RUN_CONFIG;
  let preset = base.preset;
  let tierMix = { ...base.tierMix };
  /** URL key → its raw value, for the settings validation judges as a whole. */
  const given = new Map<string, string>();
  for (const [key, raw] of params) {
    if (key === 'preset') {
      if ((PRESET_NAMES as readonly string[]).includes(raw)) preset = raw as RunConfig['preset'];
      else problems.push(`preset "${raw}" is not one of ${PRESET_NAMES.join(', ')}`);
    } else if (key === 'tiers') {
      const parsed = parseMix(raw);
      if (parsed) tierMix = parsed;
      else problems.push(`tiers "${raw}" is not like L1:1,L2:2`);
    } else if (key in FIELD_OF_KEY) {
      given.set(key, raw);
    }
  }
  const build = (): RunConfig => {
    const grpo = { ...base.grpo, rewardWeights: { ...base.grpo.rewardWeights } };
    const config: RunConfig = { ...base, preset, tierMix, grpo };
    for (const [key, raw] of given) {
      if (key in GRPO_KEYS) {
        const field = GRPO_KEYS[key] as keyof GrpoConfig;
        // An empty number is no number, not 0.
        const value = typeof base.grpo[field] === 'number' ? Number(raw || Number.NaN) : raw;
        (grpo as unknown as Record<string, unknown>)[field] = value;
      } else if (key in WEIGHT_KEYS) {
        grpo.rewardWeights[WEIGHT_KEYS[key as keyof typeof WEIGHT_KEYS]] = Number(
          raw || Number.NaN,
        );
      } else if (key === 'eval') config.evalEvery = Number(raw || Number.NaN);
      else if (key === 'topk') config.topK = Number(raw || Number.NaN);
      else if (key === 'mem') config.memoryBudgetMiB = Number(raw || Number.NaN);
    }
    return config;
  };
  // Drop the values validation blames, one round at a time: a value that is only wrong
  // together with another (n=1 with core mode) is blamed by the field the engine names.
  for (;;) {
    const config = build();
    const found = runConfigProblems(config);
    if (found.length === 0) return { config, problems };
    const blamed = [...given.keys()].filter((key) =>
      found.some((problem) => problem.field === FIELD_OF_KEY[key]),
    );
    if (blamed.length === 0) {
      // Nothing the link set is named: keep the defaults of every setting it gave.
      problems.push(...found.map((problem) => problem.message));
      if (given.size === 0) return { config: { ...base, preset, tierMix }, problems };
      given.clear();
      continue;
    }
    for (const key of blamed) {
      const why = found.filter((problem) => problem.field === FIELD_OF_KEY[key]);
      problems.push(`${key}=${given.get(key)} (${why.map((p) => p.message).join('; ')})`);
      given.delete(key);
    }
  }
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
