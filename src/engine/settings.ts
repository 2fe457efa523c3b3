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

export const TIERS = ['L1', 'L2', 'L3', 'L4', 'L5'] as const;
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
  | 'list'
  /** Free text (a folder or a Hub id). */
  | 'text';

export interface Setting {
  /** Where the value lives: `preset`, `grpo.plansPerTask`, `grpo.rewardWeights.efficiency`. */
  path: string;
  /** Its key in a link's query string (absent: not in links). */
  urlKey?: string;
  /** Its command-line flag, without the dashes (`npm run train -- grpo --plans 4`). */
  cliFlag: string;
  /** An older spelling of the flag, still accepted (`--lr` for `--learning-rate`). */
  cliAlias?: string;
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
    help: 'The size of both models. tiny trains in CPU minutes; small and base want a real GPU. Each preset has its own shipped warm start.',
    kind: 'choice',
    choices: [
      { value: 'tiny', label: 'tiny (~0.1M, CPU minutes)' },
      { value: 'small', label: 'small (~1M)' },
      { value: 'base', label: 'base (~5M, real GPU)' },
    ],
  },
  {
    path: 'backend',
    urlKey: 'backend',
    cliFlag: 'backend',
    label: 'Backend',
    help: 'Where the models compute. auto: the lab’s own WebGPU kernels where a real GPU adapter exists, else tfjs wasm on the CPU. kernels: the lab’s kernels on any adapter, a software one too (correct, slow on a CPU). tfjs-webgpu: tfjs op by op, the reference the kernels are checked against. The status bar says which ran; a lost GPU moves the run to wasm.',
    kind: 'choice',
    choices: [
      { value: 'auto', label: 'auto (kernels on a GPU, else wasm)' },
      { value: 'kernels', label: 'the lab’s WebGPU kernels' },
      { value: 'tfjs-webgpu', label: 'tfjs webgpu (op by op)' },
      { value: 'wasm', label: 'tfjs wasm (CPU)' },
      { value: 'cpu', label: 'tfjs cpu (plain JavaScript)' },
    ],
  },
  {
    path: 'grpo.mode',
    urlKey: 'mode',
    cliFlag: 'mode',
    label: 'Mode',
    help: "core: the Planner writes N plans per task, the Coder M programs per plan, and both learn. single: the Coder alone, straight from the task. frozen-planner: plans are written but only the Coder learns (CoRe without Planner RL). frozen-coder: programs are written but only the Planner learns (CoRe without Coder RL). self-plan: one model writes a plan and then the program in one sequence, learning from the program's reward — the control for two models against one (its own warm start, shipped for the examples task set).",
    kind: 'choice',
    choices: [
      { value: 'core', label: 'core (Planner + Coder)' },
      { value: 'single', label: 'single (Coder alone)' },
      { value: 'frozen-planner', label: 'frozen-planner' },
      { value: 'frozen-coder', label: 'frozen-coder' },
      { value: 'self-plan', label: 'self-plan (one model: plan, then code)' },
    ],
  },
  {
    path: 'grpo.schedule',
    urlKey: 'schedule',
    cliFlag: 'schedule',
    label: 'Training schedule',
    help: 'simultaneous: in core mode both roles update every step. alternating: they take turns in stages of K steps — the Planner trains while the Coder is frozen, then the Coder while the Planner is frozen — so each learns against a partner that holds still.',
    kind: 'choice',
    choices: [
      { value: 'simultaneous', label: 'simultaneous' },
      { value: 'alternating', label: 'alternating stages' },
    ],
  },
  {
    path: 'grpo.stageSteps',
    urlKey: 'stage',
    cliFlag: 'stage-steps',
    label: 'K steps per stage',
    help: 'K: with the alternating schedule, steps 1–K train the Planner, K+1–2K the Coder, and so on.',
    kind: 'integer',
    min: 1,
  },
  {
    path: 'grpo.plannerCredit',
    urlKey: 'pcredit',
    cliFlag: 'planner-credit',
    label: 'Planner credit',
    help: 'How a plan is paid from the M programs the Coder wrote from it. mean: their mean reward, what the Coder achieves with the plan on average. best: the best of them, so a plan that lets the Coder succeed at all is paid in full, however often the Coder slips.',
    kind: 'choice',
    choices: [
      { value: 'mean', label: 'mean of its programs' },
      { value: 'best', label: 'best of its programs' },
    ],
  },
  {
    path: 'grpo.coderSees',
    urlKey: 'sees',
    cliFlag: 'coder-sees',
    label: 'Coder sees',
    help: 'What the Coder reads. statement: the task’s statement and the Planner’s plan. plan: only the function’s signature and the plan, so everything the Coder knows about the task comes through the plan (a referential game: the Planner must say what the task is).',
    kind: 'choice',
    choices: [
      { value: 'statement', label: 'statement and plan' },
      { value: 'plan', label: 'signature and plan only' },
    ],
  },
  {
    path: 'grpo.planDropout',
    urlKey: 'pdrop',
    cliFlag: 'plan-dropout',
    label: 'Plan dropout',
    help: 'The share of plans whose programs the Coder writes from an empty plan instead (those plans earn the Planner nothing), so that writing without a plan is a prompt the Coder knows and the evaluation’s “no plan” figure is fair. Empty: 0.1 on the examples task set (whose warm start has the same share), 0 on the procedural one (its measured defaults stand).',
    kind: 'number',
    step: 0.05,
    min: 0,
    optional: true,
  },
  {
    path: 'grpo.agents',
    urlKey: 'agents',
    cliFlag: 'agents',
    label: 'Agents',
    help: 'Which agents take part, in the order they act. planner,coder: the Planner plans, the Coder codes. +debugger: for each failing program the Debugger reads the sandbox’s report of the first failing test and writes D repairs, paid for what a repair fixes. retriever,…: before planning, the Retriever picks a worked example (statement + plan of a solved training task) for the Planner’s prompt among K that BM25 proposes, paid the mean Coder reward that follows.',
    kind: 'choice',
    choices: [
      { value: 'planner,coder', label: 'planner,coder' },
      { value: 'planner,coder,debugger', label: 'planner,coder,debugger' },
      { value: 'retriever,planner,coder', label: 'retriever,planner,coder' },
      { value: 'retriever,planner,coder,debugger', label: 'all four' },
    ],
  },
  {
    path: 'grpo.tasksPerStep',
    urlKey: 'tasks',
    cliFlag: 'tasks-per-step',
    label: 'Tasks per step',
    help: 'Tasks drawn for each GRPO step. A step samples tasks × N × M programs, so this sets how long a step takes.',
    kind: 'integer',
    min: 1,
  },
  {
    path: 'grpo.plansPerTask',
    urlKey: 'n',
    cliFlag: 'plans',
    label: 'N plans per task',
    help: 'N: plans the Planner samples per task. They form its group: a plan’s advantage is its reward against the other plans of the task. At least 2 in core mode; single mode samples no plans.',
    kind: 'integer',
    min: 1,
  },
  {
    path: 'grpo.programsPerPlan',
    urlKey: 'm',
    cliFlag: 'programs',
    label: 'M programs per plan',
    help: 'M: programs the Coder writes from each plan. They form its group: a program’s advantage is its reward against the other programs of the plan (a group of one has no advantage).',
    kind: 'integer',
    min: 2,
  },
  {
    path: 'grpo.temperature',
    urlKey: 'temp',
    cliFlag: 'temperature',
    label: 'Temperature',
    help: 'Sampling temperature of both roles. Above 1: more varied samples (more signal, more nonsense); below 1: samples more alike, so more groups with zero reward std.',
    kind: 'number',
    step: 0.1,
    min: 0.1,
  },
  {
    path: 'grpo.epsilonLow',
    urlKey: 'epsl',
    cliFlag: 'epsilon-low',
    label: 'ε low',
    help: 'ε low: PPO clipping. Once the ratio π / π_old falls below 1 − ε low, the objective stops pushing that token’s probability down.',
    kind: 'number',
    step: 0.05,
    min: 0,
  },
  {
    path: 'grpo.epsilonHigh',
    urlKey: 'epsh',
    cliFlag: 'epsilon-high',
    label: 'ε high',
    help: 'ε high: once the ratio π / π_old rises above 1 + ε high, the objective stops pushing that token up. A larger ε high (DAPO’s clip-higher) lets rare good tokens grow faster.',
    kind: 'number',
    step: 0.05,
    min: 0,
  },
  {
    path: 'grpo.beta',
    urlKey: 'beta',
    cliFlag: 'beta',
    label: 'β (KL)',
    help: 'β: weight of the KL penalty to the frozen warm start in the loss, measured per token with the k3 estimator r − log r − 1 (r = π_ref / π). 0 (the default, as in TRL) drops the penalty and the reference model (faster steps, no KL chart); raise it to hold the policy near the warm start.',
    kind: 'number',
    step: 0.01,
    min: 0,
  },
  {
    path: 'grpo.lossType',
    urlKey: 'loss',
    cliFlag: 'loss',
    label: 'Loss aggregation',
    help: 'How per-token losses add up. grpo: each answer’s mean over its tokens, then the mean over answers (a long answer’s tokens count less). dapo: the mean over every token of the batch. dr_grpo: the sum over tokens ÷ (answers × the longest allowed length), with no length bias.',
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
    help: 'Gradient steps on each batch of samples (μ). With 1 the ratio π / π_old is 1 and the ε clip never acts; above 1 it can.',
    kind: 'integer',
    min: 1,
  },
  {
    path: 'grpo.maxGradNorm',
    urlKey: 'clip',
    cliFlag: 'max-grad-norm',
    label: 'Gradient-norm clip',
    help: 'Gradients with a larger global norm are scaled down to this norm before the AdamW step (0: no clipping).',
    kind: 'number',
    min: 0,
  },
  {
    path: 'grpo.learningRate',
    urlKey: 'lr',
    cliFlag: 'learning-rate',
    cliAlias: 'lr',
    label: 'Learning rate',
    help: 'AdamW learning rate of both roles. Too high and the warm start’s skills are lost within a few steps. Left at its default, it follows the kind of run: full fine-tuning’s 1.5e-4; with LoRA, LoRA’s own (1e-3 on the lab’s models, 1e-4 over a base model), since an adapter starting from zero needs a larger step.',
    kind: 'number',
    step: 0.00001,
    min: 0,
  },
  {
    path: 'grpo.scaleRewards',
    urlKey: 'scale',
    cliFlag: 'scale-rewards',
    label: 'Reward scaling',
    help: 'How Â is computed from the rewards: group: (reward − group mean) ÷ group std; batch: ÷ the whole batch’s std; none: only the mean is subtracted (Dr. GRPO).',
    kind: 'choice',
    choices: [
      { value: 'group', label: 'group' },
      { value: 'batch', label: 'batch' },
      { value: 'none', label: 'none' },
    ],
  },
  {
    path: 'grpo.seed',
    urlKey: 'seed',
    cliFlag: 'seed',
    label: 'Seed',
    help: 'Seeds the task stream and the sampling: the same seed and settings give the same run on one backend.',
    kind: 'integer',
    min: 0,
  },
  {
    path: 'grpo.maxPlanTokens',
    urlKey: 'plantok',
    cliFlag: 'plan-tokens',
    label: 'Longest plan (tokens)',
    help: 'A plan is cut off at this many tokens.',
    kind: 'integer',
    min: 1,
  },
  {
    path: 'grpo.maxProgramTokens',
    urlKey: 'codetok',
    cliFlag: 'program-tokens',
    label: 'Longest program (tokens)',
    help: 'A program is cut off at this many tokens (a cut-off program usually has no complete function).',
    kind: 'integer',
    min: 1,
  },
  {
    path: 'grpo.rewardWeights.passFraction',
    urlKey: 'wpass',
    cliFlag: 'pass-weight',
    label: 'Reward: pass weight',
    help: 'A program’s reward starts at this weight × the fraction of the task’s tests it passes.',
    kind: 'number',
    step: 0.1,
  },
  {
    path: 'grpo.rewardWeights.efficiency',
    urlKey: 'weff',
    cliFlag: 'efficiency-weight',
    label: 'Reward: λ efficiency',
    help: 'λ: weight of the efficiency bonus, paid only when every test passes: 1 for the task’s cheapest passing program (QuickJS work count), about 0.5 for one twice as costly. 0: correctness only.',
    kind: 'number',
    step: 0.05,
  },
  {
    path: 'grpo.rewardWeights.formatPenalty',
    urlKey: 'wfmt',
    cliFlag: 'format-penalty',
    label: 'Reward: format penalty',
    help: 'Subtracted from a program’s reward when no function can be extracted from what the Coder wrote: it learns to answer in the expected format.',
    kind: 'number',
    step: 0.1,
  },
  {
    path: 'grpo.repairsPerProgram',
    urlKey: 'd',
    cliFlag: 'repairs',
    label: 'D repairs per failing program',
    help: 'D: repairs the Debugger writes for each failing program. They form its group: a repair’s advantage is its improvement (repair’s reward − the program’s) against the other repairs of the program. Only with the Debugger.',
    kind: 'integer',
    min: 2,
  },
  {
    path: 'grpo.repairedProgramsPerStep',
    urlKey: 'dprog',
    cliFlag: 'repaired-programs',
    label: 'Failing programs repaired per step',
    help: 'At most this many of a step’s failing programs (a seeded draw) get D repairs each: it bounds the Debugger’s share of a step’s time.',
    kind: 'integer',
    min: 1,
  },
  {
    path: 'grpo.repairCredit',
    urlKey: 'rcredit',
    cliFlag: 'repair-credit',
    label: 'Coder credit after repair',
    help: 'original: the Coder and the Planner are paid for the program as written, so the Coder still learns to write it right the first time. repaired: a repaired program counts with the best reward among it and its repairs (what the chain delivers).',
    kind: 'choice',
    choices: [
      { value: 'original', label: 'original (as written)' },
      { value: 'repaired', label: 'repaired (after the Debugger)' },
    ],
  },
  {
    path: 'grpo.retrievalCandidates',
    urlKey: 'k',
    cliFlag: 'candidates',
    label: 'K retrieval candidates',
    help: 'K: worked examples BM25 proposes (by the words of the statement) for the Retriever to choose from. Only with the Retriever.',
    kind: 'integer',
    min: 2,
  },
  {
    path: 'grpo.retrievalPolicy',
    urlKey: 'retrieval',
    cliFlag: 'retrieval',
    label: 'Retriever',
    help: 'learned: the Retriever samples one of the K candidates per plan and learns by GRPO. bm25: always BM25’s top candidate, no learning (the baseline).',
    kind: 'choice',
    choices: [
      { value: 'learned', label: 'learned (GRPO)' },
      { value: 'bm25', label: 'BM25 top-1 (no learning)' },
    ],
  },
  {
    path: 'taskSet',
    urlKey: 'taskset',
    cliFlag: 'task-set',
    label: 'Task set',
    help: 'What the run trains and evaluates on. procedural: the lab’s generated tasks (the tiers below), which the shipped tiny models learn in minutes; their statements list the steps. examples: each task shows only its signature and 3–5 input/output examples of a hidden chain of list steps, so the Planner must work out the steps (held-out suites: one step longer; step families never combined in training); its own warm start. mbxp: MBXP’s JavaScript problems (Apache-2.0): training draws from its 644 train tasks, the evaluation uses its validation tasks, each test judged by the sandbox. Real tasks for real models: the tiny ones cannot solve them, but the whole loop runs. The tier mix applies to procedural only.',
    kind: 'choice',
    choices: [
      { value: 'procedural', label: 'procedural (generated tiers)' },
      { value: 'examples', label: 'examples only (steps hidden)' },
      { value: 'mbxp', label: 'MBXP JavaScript (real tasks)' },
    ],
  },
  {
    path: 'tierMix',
    urlKey: 'tiers',
    cliFlag: 'tiers',
    label: 'Task tiers',
    help: 'Relative weight of each tier in the training tasks; 0 leaves a tier out. L1–L4 (one step up to algorithms and efficiency) are what the warm start learned; L5 holds compositions in shapes it never saw, the tier GRPO has to learn.',
    kind: 'tiers',
    min: 0,
  },
  {
    path: 'taskPoolSize',
    urlKey: 'pool',
    cliFlag: 'task-pool',
    label: 'Task pool',
    help: 'Train on a fixed pool of this many tasks, cycled, so the same tasks come back and you can watch them get solved (the evaluation shows whether it generalizes). Empty: a fresh task every time.',
    kind: 'integer',
    min: 1,
    optional: true,
  },
  {
    path: 'evalEvery',
    urlKey: 'eval',
    cliFlag: 'eval-every',
    label: 'Evaluate every (steps)',
    help: 'Greedy pass@1 on the fixed evaluation suites every this many steps (0: never). An evaluating step takes several seconds longer.',
    kind: 'integer',
    min: 0,
  },
  {
    path: 'topK',
    urlKey: 'topk',
    cliFlag: 'top-k',
    label: 'Top-k',
    help: 'Sample only among the k likeliest tokens (0: all tokens).',
    kind: 'integer',
    min: 0,
  },
  {
    path: 'memoryBudgetMiB',
    urlKey: 'mem',
    cliFlag: 'memory-budget',
    label: 'Micro-batch memory',
    help: 'The most memory one micro-batch may hold; larger batches are split into several. Empty: the backend’s own budget. The engine halves it after an out-of-memory.',
    unit: 'MiB',
    kind: 'number',
    step: 16,
    min: 16,
    optional: true,
  },
  {
    path: 'evalTasksPerTier',
    urlKey: 'evaltasks',
    cliFlag: 'eval-tasks',
    label: 'Evaluation tasks per tier',
    help: 'Tasks per tier taken from each fixed suite for the evaluations.',
    kind: 'integer',
    min: 1,
  },
  {
    path: 'taskFamilies',
    cliFlag: 'families',
    label: 'Task families',
    help: 'Train only on these task families (absent: every family of the tier mix).',
    kind: 'list',
    optional: true,
  },
  {
    path: 'loraRank',
    urlKey: 'lora',
    cliFlag: 'lora-rank',
    label: 'LoRA rank',
    help: 'r: each role trains a rank-r LoRA adapter over its frozen base model instead of every weight (Adam state for the adapters only; the KL reference is the base). Empty or 0: full fine-tuning (with a base model: rank 8, and 0 is refused). A LoRA run whose learning rate was not set takes LoRA’s.',
    kind: 'integer',
    min: 0,
    optional: true,
  },
  {
    path: 'loraAlpha',
    urlKey: 'lalpha',
    cliFlag: 'lora-alpha',
    label: 'LoRA alpha',
    help: 'The adapter adds (alpha / r)·B·A to each targeted weight: a larger alpha, a larger step for the same learning rate. Empty: 16.',
    kind: 'number',
    min: 0,
    optional: true,
  },
  {
    path: 'loraTargets',
    urlKey: 'ltargets',
    cliFlag: 'lora-targets',
    label: 'LoRA targets',
    help: 'The projections that get an adapter. GPT-2: c_attn (q, k, v), c_proj (attention output and MLP down), c_fc (MLP up). Llama family (with a base model): q_proj, k_proj, v_proj, o_proj, gate_proj, up_proj, down_proj. Empty: all of the model’s.',
    kind: 'list',
    optional: true,
  },
  {
    path: 'base',
    urlKey: 'base',
    cliFlag: 'base',
    label: 'Base model',
    help: 'A pretrained model (a Hugging Face id such as Qwen/Qwen2.5-Coder-0.5B-Instruct, or a folder in the CLI): held once and frozen, every role trains its own LoRA adapter over it (rank 8 unless given; 0 is refused), prompts go through its chat template, and the KL reference is the base itself. Empty: the lab’s own tiny models.',
    kind: 'text',
    optional: true,
  },
  {
    path: 'hub',
    urlKey: 'hub',
    cliFlag: 'hub',
    label: 'Model hub',
    help: 'Where a base model id is downloaded from (a Hugging Face Hub endpoint). Empty: https://huggingface.co.',
    kind: 'text',
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
    case 'text':
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
