// What one GRPO update of a role takes and gives: the contract between the role trainer
// (rl/trainer.ts) and whatever runs the update (tfjs there, the lab's WebGPU kernels in
// gpu/engine). A leaf: it imports types only, so the engine sits below the trainer.
import type { SkipReason } from '../model/safeUpdate';
import type { GrpoLossMetrics, GrpoLossOptions } from './grpoLossTypes';

/** One sampled completion as the update sees it. */
export interface PolicySequence {
  prompt: readonly number[];
  completion: readonly number[];
  /** log π_old of each completion token, from the sampler. */
  oldLogProbs: readonly number[];
  advantage: number;
}

export interface RoleTrainerOptions {
  learningRate: number;
  /** Sampling temperature: log-probs are those of softmax(logits / temperature). */
  temperature: number;
  numIterations: number;
  maxGradNorm: number;
  loss: GrpoLossOptions;
  padId: number;
  /** Bytes one micro-batch may hold (src/model/memory.ts); default: the backend's. */
  memoryBudgetBytes?: number;
}

export interface RoleUpdate {
  /** Loss metrics, averaged over the iterations. */
  metrics: GrpoLossMetrics;
  /** Global gradient norm before clipping, averaged over the iterations. */
  gradNorm: number;
  /** Why an iteration's update was skipped (NaN/Inf), one entry per skipped iteration. */
  skipped: SkipReason[];
  /** How many micro-batches the sequences were split into. */
  microBatches: number;
}

/** Optimizer state and reference weights as plain arrays, for snapshots. */
export interface RoleTrainerState {
  iterations: number;
  /** Adam's first and second moments, in parameter order. */
  moments: { name: string; shape: number[]; data: Float32Array }[];
  /** The frozen reference's weights by parameter name (absent when β = 0). */
  reference: Map<string, Float32Array> | null;
}
