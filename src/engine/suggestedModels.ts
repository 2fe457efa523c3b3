// The page's Model choice as plain data (no tfjs: the main thread reads it through api.ts): a
// few Hugging Face models of the Llama family the lab loads (any GPT-2 loads too, by id) (engine/baseModel.ts), their size
// as published, and a rough step-time estimate so a model that would take minutes a step on
// this machine says so before Train. The exact size is read from the model's config.json when
// it loads; these figures only guide the choice.
import { usesPlanner } from '../rl/config';
import type { RunConfig } from './types';

export interface SuggestedModel {
  /** The Hub id (org/name), as `base=` takes it. */
  id: string;
  family: 'llama' | 'qwen2' | 'qwen3';
  /** Parameters, as the model card gives them (embeddings included). */
  parameters: number;
  /** Bytes of its BF16 safetensors, the download. */
  downloadBytes: number;
  /** One line on what it is. */
  about: string;
}

export const SUGGESTED_MODELS: readonly SuggestedModel[] = [
  {
    id: 'HuggingFaceTB/SmolLM2-135M-Instruct',
    family: 'llama',
    parameters: 135e6,
    downloadBytes: 269e6,
    about: 'the smallest: a general chat model, fits any machine',
  },
  {
    id: 'HuggingFaceTB/SmolLM2-360M-Instruct',
    family: 'llama',
    parameters: 362e6,
    downloadBytes: 724e6,
    about: 'a general chat model',
  },
  {
    id: 'Qwen/Qwen2.5-Coder-0.5B-Instruct',
    family: 'qwen2',
    parameters: 494e6,
    downloadBytes: 988e6,
    about: 'a code model: the one this lab is built around',
  },
  {
    id: 'Qwen/Qwen3-0.6B',
    family: 'qwen3',
    parameters: 596e6,
    downloadBytes: 1.19e9,
    about:
      'a newer general model (its chat template may ask it to think first: replies run longer)',
  },
];

/**
 * Achieved float32 FLOP/s assumed for the estimate: a GPU running the lab's kernels, and the CPU
 * (tfjs wasm, or the kernels on a software adapter). Rough, on purpose: the estimate only has to
 * tell seconds from minutes. bench/llamaLora.ts projects a GPU step from measured dispatches.
 */
const GPU_FLOPS = 2e12;
const CPU_FLOPS = 1e10;
/** Prompt tokens through a chat template: the system turn, the task, and for the Coder the plan. */
export const PLANNER_PROMPT_TOKENS = 150;
export const CODER_PROMPT_TOKENS = 250;

/**
 * The step's two sampling stages, each as sequences × tokens a sequence (prompt + reply cap):
 * the Planner's N plans a task (none in single mode), then the Coder's programs.
 */
export function samplingStages(config: RunConfig): { sequences: number; tokens: number }[] {
  const g = config.grpo;
  const planner = usesPlanner(g.mode);
  return [
    {
      sequences: planner ? g.tasksPerStep * g.plansPerTask : 0,
      tokens: PLANNER_PROMPT_TOKENS + g.maxPlanTokens,
    },
    {
      sequences: g.tasksPerStep * (planner ? g.plansPerTask : 1) * g.programsPerPlan,
      tokens: CODER_PROMPT_TOKENS + g.maxProgramTokens,
    },
  ];
}

/** Tokens a GRPO step samples and scores with this run's group sizes. */
export function tokensPerStep(config: RunConfig): number {
  return samplingStages(config).reduce((sum, s) => sum + s.sequences * s.tokens, 0);
}

/**
 * Seconds a GRPO step of a `parameters`-sized base would take: about 2·P FLOPs a token to sample
 * and 6·P to score and update (the LoRA adapters' share is negligible). An estimate.
 */
export function estimateStepSeconds(parameters: number, config: RunConfig, onGpu: boolean): number {
  return (8 * parameters * tokensPerStep(config)) / (onGpu ? GPU_FLOPS : CPU_FLOPS);
}

/** "about 40 s", "about 12 min", "about 2 h". */
export function describeDuration(seconds: number): string {
  if (seconds < 90) return `about ${Math.max(1, Math.round(seconds))} s`;
  if (seconds < 90 * 60) return `about ${Math.round(seconds / 60)} min`;
  return `about ${(seconds / 3600).toFixed(1)} h`;
}

/** "0.49B parameters · 988 MB to download". */
export function describeSuggested(model: SuggestedModel): string {
  const params =
    model.parameters >= 1e9
      ? `${(model.parameters / 1e9).toFixed(2)}B`
      : `${Math.round(model.parameters / 1e6)}M`;
  return `${params} parameters · ${Math.round(model.downloadBytes / 1e6)} MB to download`;
}
