// The default run, its validation as a whole, and its URL form (keys and kinds from the
// settings table, settings.ts). Data only (no tfjs), so the page's main thread can import
// it without pulling in the engine.
import { loraProblems } from '../model/loraSettings';
import { DEFAULT_GRPO_CONFIG, validateGrpoConfig } from '../rl/config';
import { baseProblems } from './baseSettings';
import {
  KIND_DEFAULT_PATHS,
  type KindDefaultPath,
  kindDefault,
  withKindDefaults,
} from './loraDefaults';
import {
  fieldOf,
  formatSettingValue,
  PRESET_NAMES,
  parseSettingText,
  parseTierMix,
  SETTINGS,
  settingByUrlKey,
  settingValue,
  withSetting,
} from './settings';
import { BACKEND_CHOICES, isBackendChoice, type RunConfig, TASK_SETS } from './types';

export const DEFAULT_RUN_CONFIG: Readonly<RunConfig> = Object.freeze({
  preset: 'tiny',
  backend: 'auto',
  grpo: { ...DEFAULT_GRPO_CONFIG, seed: 1 },
  // L5 only: the warm start solves L1–L4 (pass@1 ≈ 1 on their validation suites), so GRPO
  // has nothing to show there; L5's new shapes start at ~0.4 sampled pass fraction and rise
  // within minutes. The evaluation still covers L1–L4 and held-out, so forgetting would show.
  tierMix: { L5: 1 },
  taskSet: 'procedural',
  evalEvery: 10,
  evalTasksPerTier: 8,
  topK: 0,
});

/** Whether the setting's default depends on the kind of run (loraDefaults.ts). */
const isKindDefault = (path: string): path is KindDefaultPath =>
  (KIND_DEFAULT_PATHS as readonly string[]).includes(path);

/**
 * A link's query string: only the settings that differ from the default, in table order (the
 * default of this kind of run where it depends on the kind: a base's rank 8, LoRA's rate).
 */
export function encodeRunConfig(config: RunConfig): URLSearchParams {
  const params = new URLSearchParams();
  for (const s of SETTINGS) {
    if (s.urlKey === undefined) continue;
    const value = settingValue(config, s);
    if (value === undefined) continue;
    const text = formatSettingValue(s, value);
    const base = isKindDefault(s.path)
      ? kindDefault(config, s.path)
      : settingValue(DEFAULT_RUN_CONFIG, s);
    const same = s.kind === 'tiers' ? text === formatSettingValue(s, base) : value === base;
    if (!same) params.set(s.urlKey, text);
  }
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
  const pool = config.taskPoolSize;
  if (pool !== undefined && !(Number.isInteger(pool) && pool >= 1)) {
    problems.push({
      field: 'taskPoolSize',
      message: `taskPoolSize must be a whole number of tasks >= 1, got ${pool}`,
    });
  }
  if (config.backend !== undefined && !isBackendChoice(config.backend)) {
    problems.push({
      field: 'backend',
      message: `backend must be one of ${BACKEND_CHOICES.join(' | ')}, got ${String(config.backend)}`,
    });
  }
  problems.push(...loraProblems(config));
  problems.push(...baseProblems(config));
  if (config.taskSet !== undefined && !TASK_SETS.includes(config.taskSet)) {
    problems.push({
      field: 'taskSet',
      message: `taskSet must be one of ${TASK_SETS.join(' | ')}, got ${String(config.taskSet)}`,
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
    const s = settingByUrlKey(key);
    if (!s) continue;
    // The preset and the tiers are checked as they are read (validation does not see them).
    if (s.path === 'preset') {
      if ((PRESET_NAMES as readonly string[]).includes(raw)) preset = raw as RunConfig['preset'];
      else problems.push(`preset "${raw}" is not one of ${PRESET_NAMES.join(', ')}`);
    } else if (s.kind === 'tiers') {
      const parsed = parseTierMix(raw);
      if (parsed) tierMix = parsed;
      else problems.push(`tiers "${raw}" is not like L1:1,L2:2`);
    } else {
      given.set(key, raw);
    }
  }
  const build = (): RunConfig => {
    let config: RunConfig = {
      ...base,
      preset,
      tierMix,
      grpo: { ...base.grpo, rewardWeights: { ...base.grpo.rewardWeights } },
    };
    for (const [key, raw] of given) {
      const s = settingByUrlKey(key)!;
      config = withSetting(config, s, parseSettingText(s, raw));
    }
    // What the link left out and depends on its kind: a base alone trains rank-8 adapters.
    return withKindDefaults(config, (path) =>
      [...given.keys()].some((key) => settingByUrlKey(key)?.path === path),
    );
  };
  const fieldOfKey = (key: string) => fieldOf(settingByUrlKey(key)!);
  // Drop the values validation blames, one round at a time: a value that is only wrong
  // together with another (n=1 with core mode) is blamed by the field the engine names.
  for (;;) {
    const config = build();
    const found = runConfigProblems(config);
    if (found.length === 0) return { config, problems };
    const blamed = [...given.keys()].filter((key) =>
      found.some((problem) => problem.field === fieldOfKey(key)),
    );
    if (blamed.length === 0) {
      // Nothing the link set is named: keep the defaults of every setting it gave.
      problems.push(...found.map((problem) => problem.message));
      if (given.size === 0) return { config: { ...base, preset, tierMix }, problems };
      given.clear();
      continue;
    }
    for (const key of blamed) {
      const why = found.filter((problem) => problem.field === fieldOfKey(key));
      problems.push(`${key}=${given.get(key)} (${why.map((p) => p.message).join('; ')})`);
      given.delete(key);
    }
  }
}
