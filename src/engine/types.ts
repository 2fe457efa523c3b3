// The training engine's data contract: what one run is (RunConfig), what one GRPO step
// reports (StepReport, with its sample groups), and what a saved run holds (RunSnapshot).
// The Node CLI and the page's engine Worker both speak these types; nothing here knows
// React, the DOM or Node.
import type { PresetName } from '../model';
import type { GrpoConfig, Role } from '../rl/config';
import type { RewardParts } from '../rl/rewards';
import type { Tier } from '../tasks';

/**
 * Where a run computes. auto: the lab's WebGPU kernels where a real GPU adapter exists, else
 * tfjs wasm (the CPU fallback). kernels: the lab's kernels on any adapter, software ones too
 * (correct, slow on a CPU). tfjs-webgpu: tfjs op by op (the reference the kernels are checked
 * against). wasm, cpu: tfjs on the CPU.
 */
export type BackendChoice = 'auto' | 'kernels' | 'tfjs-webgpu' | 'wasm' | 'cpu';
export const BACKEND_CHOICES: readonly BackendChoice[] = [
  'auto',
  'kernels',
  'tfjs-webgpu',
  'wasm',
  'cpu',
];

export const isBackendChoice = (value: unknown): value is BackendChoice =>
  (BACKEND_CHOICES as readonly unknown[]).includes(value);

/**
 * What a run trains and evaluates on: the generated tasks, the examples world (signature and
 * input/output examples only, tasks/examples/), or MBXP's JavaScript problems.
 */
export type TaskSetName = 'procedural' | 'examples' | 'mbxp';
export const TASK_SETS: readonly TaskSetName[] = ['procedural', 'examples', 'mbxp'];

/** Everything that determines a run; same config (with its seed) on one backend → same curves. */
export interface RunConfig {
  preset: PresetName;
  /** Where it computes (absent in runs saved before the choice existed: auto). */
  backend?: BackendChoice;
  grpo: GrpoConfig;
  /** Relative weight of each tier in the training task stream. */
  tierMix: Partial<Record<Tier, number>>;
  /** Evaluate on the fixed suites every `evalEvery` steps (0: never). */
  evalEvery: number;
  /** Tasks per tier taken from each fixed suite for those evaluations. */
  evalTasksPerTier: number;
  /** Top-k for sampling (0 = all tokens). */
  topK: number;
  /** Restrict the training task stream to these families (absent: every family of the mix). */
  taskFamilies?: string[];
  /** Train on a fixed pool: the stream's first `taskPoolSize` tasks, cycled (absent: endless stream). */
  taskPoolSize?: number;
  /** The task set (absent in runs saved before the choice existed: procedural); engine/taskSets.ts. */
  taskSet?: TaskSetName;
  /**
   * Memory budget of one micro-batch (update, reference forward, sampling, evaluation), in
   * MiB. Absent: the backend's own (src/rl/memoryBudget.ts). The engine halves it after an
   * out-of-memory and retries.
   */
  memoryBudgetMiB?: number;
  /** LoRA rank of every role's adapter (absent or 0: full fine-tuning): engine/lora.ts. */
  loraRank?: number;
  /** The adapters' alpha (absent: 16). */
  loraAlpha?: number;
  /** The targeted projections (absent: all of the model family's; model/loraSettings.ts). */
  loraTargets?: string[];
  /**
   * A pretrained base (a Hub id or, in the CLI, a folder): one frozen model, every role its own
   * LoRA adapter over it (engine/baseRoles.ts). Absent: the lab's own models.
   */
  base?: string;
  /** The Hub endpoint a base id is fetched from (absent: https://huggingface.co). */
  hub?: string;
}

/** One program the Coder wrote for one plan, judged by the sandbox. */
export interface ProgramSample {
  /** The Coder's raw completion (decoded). */
  completion: string;
  /** Self-plan mode: the plan this sequence wrote before <|code|> (`completion` is what followed). */
  selfPlan?: string;
  /** The function extracted from it, or '' when there was none. */
  code: string;
  reward: RewardParts;
  advantage: number;
  passCount: number;
  total: number;
  errorKind: string | null;
  /** Sandbox work count (null when the program did not run). */
  work: number | null;
  peakBytes: number | null;
  tokens: number;
  /** With the Debugger, on a program it repaired: the sandbox's report it read and its D repairs. */
  report?: string;
  repairs?: RepairSample[];
}

/** One of the Debugger's D repairs of a failing program; its reward is the improvement. */
export interface RepairSample {
  completion: string;
  code: string;
  /** The repair's own reward (the Coder's formula). */
  repairReward: RewardParts;
  /** The Debugger's reward: repairReward − the original program's, part by part. */
  reward: RewardParts;
  advantage: number;
  passCount: number;
  total: number;
  errorKind: string | null;
  tokens: number;
}

/** With the Retriever: the worked example a plan read, among BM25's K candidates. */
export interface RetrievalSample {
  /** The candidates' statements, BM25's order. */
  candidates: string[];
  /** The chosen candidate (0-based); null when the Retriever's answer named none (top-1 used). */
  choice: number | null;
  /** The chosen candidate's statement and plan (BM25's top-1 when the choice was null). */
  statement: string;
  plan: string;
  /** false: the example would not fit the Planner's context, so this plan read none. */
  shown: boolean;
  /** The Retriever's reward and advantage (absent with the bm25 policy: nothing learns). */
  reward?: RewardParts;
  advantage?: number;
}

/** One plan (absent text in `single` mode) and the M programs written from it. */
export interface PlanSample {
  plan: string;
  reward: RewardParts;
  advantage: number;
  tokens: number;
  programs: ProgramSample[];
  /** With the Retriever: the example this plan's prompt began with. */
  retrieval?: RetrievalSample;
  /** Over a base model: the Planner's prompt as the model read it (its chat template rendered). */
  plannerPrompt?: string;
  /** Over a base model: the Coder's prompt for this plan, rendered. */
  coderPrompt?: string;
  /** Plan dropout: the Coder wrote this plan's programs from an empty plan (no Planner advantage). */
  dropped?: true;
}

/** A task's group for one step: N plans × M programs. */
export interface SampleGroup {
  step: number;
  taskId: string;
  tier: Tier;
  family: string;
  statement: string;
  entryPoint: string;
  tests: { args: unknown[]; expected: unknown }[];
  /** The examples world: the input/output examples the statement shows (also the first tests). */
  examples?: { args: unknown[]; expected: unknown }[];
  reference: { strategy: string; plan: string; code: string }[];
  plans: PlanSample[];
}

/** Metric name → value, TRL names prefixed by role (see src/rl/metrics.ts). */
export type MetricRecord = Record<string, number>;

export interface StepReport {
  step: number;
  metrics: MetricRecord;
  groups: SampleGroup[];
  /** Updates skipped by the NaN/Inf guard this step, with the reason. */
  skippedUpdates: { role: Role; reason: string }[];
}

export interface EvalReport {
  step: number;
  /** `eval/pass@1/L1`…, `eval/exec_cost`, `eval/peak_memory`. */
  metrics: MetricRecord;
}

/** Named raw bytes, so a snapshot can go to disk, IndexedDB or a download unchanged. */
export type FileMap = Record<string, Uint8Array>;

/**
 * A run saved whole: config, the step reached, both roles' weights, optimizer state and
 * random-stream positions. Restoring it continues the run exactly (`--resume`).
 */
export interface RunSnapshot {
  config: RunConfig;
  step: number;
  files: FileMap;
}
