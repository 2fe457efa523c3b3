// One table of a run's settings: for each, where it lives in RunConfig, its URL key, its
// command-line flag, its label and help text, its kind and its bounds. The URL codec
// (runConfig.ts), the page's controls (ui/lab/ControlsPanel.tsx) and the CLI
// (`npm run train -- grpo --plans 4 …`) all read it, so they cannot disagree. Data only (no
// tfjs): the page's main thread imports it through engine/api.ts.
//
// Bounds here are the input's hints (min, step); whether a value can run is the engine's
// validation (runConfigProblems), which also knows the rules that join two settings
// (N ≥ 2 plans only in core mode).
import type { RunConfig } from './types';

export const TIERS = ['L1', 'L2', 'L3', 'L4'] as const;
export const PRESET_NAMES = ['tiny', 'small', 'base'] as const;

export type SettingKind =
  /** A whole number. */
  | 'integer'
  /** Any number. */
  | 'number'
  /** One of `choices`. */
  | 'choice'
  /** Tier weights, written `L1:1,L2:2` (a tier without a weight has weight 1). */
  | 'tiers'
  /** A comma-separated list of names. */
  | 'list';

export interface Setting {
  /** Where the value lives: `preset`, `grpo.plansPerTask`, `grpo.rewardWeights.efficiency`. */
  path: string;
  /** Its key in a link's query string (absent: not in links). */
  urlKey?: string;
  /** Its command-line flag, without the dashes (`npm run train -- grpo --plans 4`). */
  cliFlag: string;
  /** Its name on the page, also put in place of the field in validation messages. */
  label: string;
  help?: string;
  kind: SettingKind;
  choices?: readonly { value: string; label: string }[];
  min?: number;
  step?: number;
  /** Shown after the label on the page (`Micro-batch memory (MiB)`). */
  unit?: string;
  /** May be left out of the config: the engine then picks (the backend's memory budget). */
  optional?: boolean;
}

/** Every setting, in the order links write them. */
export const SETTINGS: readonly Setting[] = [
  {
    path: 'preset',
    urlKey: 'preset',
    cliFlag: 'preset',
    label: 'Model preset',
    kind: 'choice',
    choices: [
      { value: 'tiny', label: 'tiny (~0.1M, CPU minutes)' },
      { value: 'small', label: 'small (~1M)' },
      { value: 'base', label: 'base (~5M, real GPU)' },
    ],
  },
  {
    path: 'grpo.mode',
    urlKey: 'mode',
    cliFlag: 'mode',
    label: 'Mode',
    help: 'core: both roles learn; single: the Coder alone; frozen-planner: only the Coder learns',
    kind: 'choice',
    choices: [
      { value: 'core', label: 'core (Planner + Coder)' },
      { value: 'single', label: 'single (Coder alone)' },
      { value: 'frozen-planner', label: 'frozen-planner' },
    ],
  },
  {
    path: 'grpo.tasksPerStep',
    urlKey: 'tasks',
    cliFlag: 'tasks-per-step',
    label: 'Tasks per step',
    kind: 'integer',
    min: 1,
  },
  {
    path: 'grpo.plansPerTask',
    urlKey: 'n',
    cliFlag: 'plans',
    label: 'N plans per task',
    help: 'The Planner’s group size: at least 2 in core mode; single mode samples no plans.',
    kind: 'integer',
    min: 1,
  },
  {
    path: 'grpo.programsPerPlan',
    urlKey: 'm',
    cliFlag: 'programs',
    label: 'M programs per plan',
    help: 'The Coder’s group size (a group of one has no advantage).',
    kind: 'integer',
    min: 2,
  },
  {
    path: 'grpo.temperature',
    urlKey: 'temp',
    cliFlag: 'temperature',
    label: 'Temperature',
    kind: 'number',
    step: 0.1,
    min: 0.1,
  },
  {
    path: 'grpo.epsilonLow',
    urlKey: 'epsl',
    cliFlag: 'epsilon-low',
    label: 'ε low',
    kind: 'number',
    step: 0.05,
    min: 0,
  },
  {
    path: 'grpo.epsilonHigh',
    urlKey: 'epsh',
    cliFlag: 'epsilon-high',
    label: 'ε high',
    kind: 'number',
    step: 0.05,
    min: 0,
  },
  {
    path: 'grpo.beta',
    urlKey: 'beta',
    cliFlag: 'beta',
    label: 'β (KL)',
    kind: 'number',
    step: 0.01,
    min: 0,
  },
  {
    path: 'grpo.lossType',
    urlKey: 'loss',
    cliFlag: 'loss',
    label: 'Loss aggregation',
    kind: 'choice',
    choices: [
      { value: 'grpo', label: 'grpo' },
      { value: 'dapo', label: 'dapo' },
      { value: 'dr_grpo', label: 'dr_grpo' },
    ],
  },
  {
    path: 'grpo.numIterations',
    urlKey: 'iters',
    cliFlag: 'iterations',
    label: 'Gradient steps per batch',
    kind: 'integer',
    min: 1,
  },
  {
    path: 'grpo.maxGradNorm',
    urlKey: 'clip',
    cliFlag: 'max-grad-norm',
    label: 'Gradient-norm clip',
    kind: 'number',
    min: 0,
  },
  {
    path: 'grpo.learningRate',
    urlKey: 'lr',
    cliFlag: 'lr',
    label: 'Learning rate',
    kind: 'number',
    step: 0.00001,
    min: 0,
  },
  {
    path: 'grpo.scaleRewards',
    urlKey: 'scale',
    cliFlag: 'scale-rewards',
    label: 'Reward scaling',
    kind: 'choice',
    choices: [
      { value: 'group', label: 'group' },
      { value: 'batch', label: 'batch' },
      { value: 'none', label: 'none' },
    ],
  },
  { path: 'grpo.seed', urlKey: 'seed', cliFlag: 'seed', label: 'Seed', kind: 'integer', min: 0 },
  {
    path: 'grpo.maxPlanTokens',
    urlKey: 'plantok',
    cliFlag: 'plan-tokens',
    label: 'Longest plan (tokens)',
    kind: 'integer',
    min: 1,
  },
  {
    path: 'grpo.maxProgramTokens',
    urlKey: 'codetok',
    cliFlag: 'program-tokens',
    label: 'Longest program (tokens)',
    kind: 'integer',
    min: 1,
  },
  {
    path: 'grpo.rewardWeights.passFraction',
    urlKey: 'wpass',
    cliFlag: 'pass-weight',
    label: 'Reward: pass weight',
    kind: 'number',
    step: 0.1,
  },
  {
    path: 'grpo.rewardWeights.efficiency',
    urlKey: 'weff',
    cliFlag: 'efficiency-weight',
    label: 'Reward: λ efficiency',
    kind: 'number',
    step: 0.05,
  },
  {
    path: 'grpo.rewardWeights.formatPenalty',
    urlKey: 'wfmt',
    cliFlag: 'format-penalty',
    label: 'Reward: format penalty',
    kind: 'number',
    step: 0.1,
  },
  {
    path: 'tierMix',
    urlKey: 'tiers',
    cliFlag: 'tiers',
    label: 'Task tiers',
    kind: 'tiers',
    min: 0,
  },
  {
    path: 'evalEvery',
    urlKey: 'eval',
    cliFlag: 'eval-every',
    label: 'Evaluate every (steps)',
    kind: 'integer',
    min: 0,
  },
  { path: 'topK', urlKey: 'topk', cliFlag: 'top-k', label: 'Top-k', kind: 'integer', min: 0 },
  {
    path: 'memoryBudgetMiB',
    urlKey: 'mem',
    cliFlag: 'memory-budget',
    label: 'Micro-batch memory',
    unit: 'MiB',
    kind: 'number',
    step: 16,
    min: 16,
    optional: true,
  },
  {
    path: 'evalTasksPerTier',
    cliFlag: 'eval-tasks',
    label: 'Evaluation tasks per tier',
    kind: 'integer',
    min: 1,
  },
  {
    path: 'taskFamilies',
    cliFlag: 'families',
    label: 'Task families',
    kind: 'list',
    optional: true,
  },
];

/** The name validation gives a setting (`plansPerTask`, `rewardWeights.efficiency`, `topK`). */
export function fieldOf(setting: Setting): string {
  return setting.path.replace(/^grpo\./, '');
}

/** The setting with this URL key. */
export function settingByUrlKey(key: string): Setting | undefined {
  return SETTINGS.find((setting) => setting.urlKey === key);
}

/** The setting at this path (`grpo.plansPerTask`); throws on a path the table lacks. */
export function setting(path: string): Setting {
  const found = SETTINGS.find((s) => s.path === path);
  if (!found) throw new Error(`no setting at ${path}`);
  return found;
}

/** The setting's value in `config` (undefined where an optional one is left out). */
export function settingValue(config: RunConfig, setting: Setting): unknown {
  let value: unknown = config;
  for (const part of setting.path.split('.')) value = (value as Record<string, unknown>)?.[part];
  return value;
}

/** A copy of `config` with the setting's value replaced (undefined removes an optional one). */
export function withSetting(config: RunConfig, setting: Setting, value: unknown): RunConfig {
  const put = (target: Record<string, unknown>, parts: string[]): Record<string, unknown> => {
    const [head, ...rest] = parts as [string, ...string[]];
    if (rest.length > 0) {
      return { ...target, [head]: put(target[head] as Record<string, unknown>, rest) };
    }
    if (value === undefined) {
      const { [head]: _gone, ...others } = target;
      return others;
    }
    return { ...target, [head]: value };
  };
  return put(
    config as unknown as Record<string, unknown>,
    setting.path.split('.'),
  ) as unknown as RunConfig;
}

/**
 * Text (a link's value, a flag's) as the setting's value: numbers as numbers (an empty one
 * is no number: NaN, which validation refuses), tiers as a mix (null when unreadable),
 * lists split at commas, choices as given (validation names a wrong one).
 */
export function parseSettingText(setting: Setting, text: string): unknown {
  switch (setting.kind) {
    case 'integer':
    case 'number':
      return Number(text || Number.NaN);
    case 'tiers':
      return parseTierMix(text);
    case 'list':
      return text.split(',');
    case 'choice':
      return text;
  }
}

/** The setting's value as text, as links write it. */
export function formatSettingValue(setting: Setting, value: unknown): string {
  if (setting.kind === 'tiers') return formatTierMix(value as RunConfig['tierMix']);
  if (setting.kind === 'list') return (value as string[]).join(',');
  return String(value);
}

/** `L1:1,L3:2`: the tiers with a weight > 0, in order. */
export function formatTierMix(mix: RunConfig['tierMix']): string {
  return TIERS.filter((tier) => (mix[tier] ?? 0) > 0)
    .map((tier) => `${tier}:${mix[tier]}`)
    .join(',');
}

/** Reads `L1:1,L2:2` (a bare `L1` weighs 1); null unless every part is a tier with weight > 0. */
export function parseTierMix(text: string): RunConfig['tierMix'] | null {
  const mix: RunConfig['tierMix'] = {};
  for (const part of text.split(',')) {
    const [tier, weight] = part.split(':');
    const value = weight === undefined ? 1 : Number(weight);
    if (!(TIERS as readonly string[]).includes(tier ?? '') || !(value > 0)) return null;
    mix[tier as (typeof TIERS)[number]] = value;
  }
  return Object.keys(mix).length > 0 ? mix : null;
}

/**
 * The settings a command line gives (`--plans 4 --tiers L1:1,L2:1`), over `base`. A flag the
 * table does not know is left to the command; a value that cannot be read throws, naming
 * the flag. The result is validated by whoever runs it (TrainingSession).
 */
export function runConfigFromFlags(flags: ReadonlyMap<string, string>, base: RunConfig): RunConfig {
  let config = base;
  for (const s of SETTINGS) {
    const text = flags.get(s.cliFlag);
    if (text === undefined) continue;
    const value =
      s.kind === 'integer' || s.kind === 'number' ? Number(text) : parseSettingText(s, text);
    if (value === null) throw new Error(`--${s.cliFlag} "${text}" is not like L1:1,L2:2`);
    config = withSetting(config, s, value);
  }
  return config;
}

/** `--flag VALUE` for every setting, for a command's usage text. */
export function settingsUsage(): string {
  return SETTINGS.map((s) => {
    const value = s.choices ? s.choices.map((c) => c.value).join('|') : s.kind.toUpperCase();
    return `--${s.cliFlag} ${value}`;
  }).join(' ');
}
