// The supervised warm start: next-token cross-entropy on answer tokens only, AdamW,
// warm-up + cosine decay, gradient clipping, progress events. Engine code: no Node or DOM
// imports, so it runs in Node and in a Worker alike.
import * as tf from '@tensorflow/tfjs-core';
import type { RoleExample } from '../agents/format';
import {
  AdamW,
  type AdamWOptions,
  type AdamWState,
  accumulatedStep,
  defaultMemoryBudgetBytes,
  type GPT,
  learningRate,
  maskedLoss,
  packByBudget,
  trainingBytes,
} from '../model';
import { gptTransformerConfig } from '../model/config';
import { makeBatch } from './batches';

export interface SftOptions {
  /** Stop after this many steps … */
  steps?: number;
  /** … or after this much wall time (the schedule then follows elapsed time). */
  minutes?: number;
  peakLr: number;
  minLr: number;
  warmupSteps: number;
  adamw?: Partial<AdamWOptions>;
  /** Global gradient-norm clip (0: none; default 1). */
  maxGradNorm?: number;
  /** Bytes one micro-batch may hold (default: the backend's, src/model/memory.ts). */
  memoryBudgetBytes?: number;
  /** Emit a progress event every this many steps. */
  logEvery: number;
  padId: number;
  /** Checked between steps; return true to stop early. */
  shouldStop?: () => boolean;
  /**
   * Go on from a run that stopped after `step` steps (a steps budget only): `model` holds its
   * weights, `optimizer` its Adam moments, and the batches it drew are drawn again and skipped,
   * so the run ends as the uninterrupted one would have, to the bit.
   */
  resume?: { step: number; optimizer: AdamWState };
  /** Every this many steps (before the last), onCheckpoint gets the step and Adam's moments. */
  checkpointEvery?: number;
  onCheckpoint?: (step: number, optimizer: AdamWState) => Promise<void>;
}

export const DEFAULT_SFT: Omit<SftOptions, 'padId'> = {
  peakLr: 3e-3,
  minLr: 1e-4,
  warmupSteps: 50,
  logEvery: 10,
  adamw: { weightDecay: 0.01 },
  maxGradNorm: 1,
};

export interface SftProgress {
  step: number;
  /** Mean loss per answer token over the last logEvery steps. */
  loss: number;
  lr: number;
  gradNorm: number;
  /** Real (non-pad) tokens processed per second, over the last logEvery steps. */
  tokensPerSec: number;
  etaSec: number;
  elapsedSec: number;
  examples: number;
}

export interface SftResult {
  steps: number;
  examples: number;
  finalLoss: number;
  elapsedSec: number;
}

export async function runSft(
  model: GPT,
  nextBatch: () => RoleExample[],
  options: SftOptions,
  onProgress: (p: SftProgress) => void = () => {},
): Promise<SftResult> {
  if (options.steps === undefined && options.minutes === undefined)
    throw new Error('sft: give steps or minutes');
  const optimizer = new AdamW(model, options.adamw);
  const variables = [...model.params.values()];
  const budget = options.memoryBudgetBytes ?? defaultMemoryBudgetBytes(tf.getBackend());
  const bytesOf = (rows: number, width: number) =>
    trainingBytes(gptTransformerConfig(model.config), rows, width);
  const budgetSec = options.minutes !== undefined ? options.minutes * 60 : Number.POSITIVE_INFINITY;
  const maxSteps = options.steps ?? Number.POSITIVE_INFINITY;
  const start = now();
  let step = 0;
  let examples = 0;
  if (options.resume) {
    if (options.steps === undefined) throw new Error('sft: only a steps budget can be resumed');
    optimizer.importState(options.resume.optimizer);
    for (; step < options.resume.step; step++) examples += nextBatch().length;
  }
  const firstStep = step;
  let windowLoss = 0;
  let windowSteps = 0;
  let windowTokens = 0;
  let windowStart = start;
  let finalLoss = Number.NaN;
  try {
    while (step < maxSteps && (now() - start) / 1000 < budgetSec && !options.shouldStop?.()) {
      const elapsed = (now() - start) / 1000;
      // Time-budgeted runs follow the clock: progress = elapsed / budget.
      const totalSteps = Number.isFinite(maxSteps)
        ? maxSteps
        : Math.max(step + 1, Math.round((step / Math.max(elapsed, 1e-9)) * budgetSec));
      const lr = learningRate(step, {
        ...options,
        totalSteps: step < 5 ? Number.MAX_SAFE_INTEGER : totalSteps,
      });
      const examplesNow = nextBatch();
      // Micro-batches under the memory budget; each loss is divided by the whole batch's
      // answer tokens, so the accumulated step is the one-batch step.
      const pieces = packByBudget(
        examplesNow.map((e) => e.prompt.length + e.answer.length),
        bytesOf,
        budget,
      );
      const targetTokens = Math.max(
        1,
        examplesNow.reduce((sum, e) => sum + e.answer.length, 0),
      );
      optimizer.learningRate = lr;
      const { loss, gradNorm } = await accumulatedStep(
        optimizer,
        variables,
        pieces.length,
        (index) => {
          const batch = makeBatch(
            pieces[index]!.map((i) => examplesNow[i]!),
            options.padId,
          );
          return maskedLoss(model, batch.ids, batch.mask, targetTokens);
        },
        options.maxGradNorm ?? 1,
      );
      const batchTokens = examplesNow.reduce(
        (sum, e) => sum + e.prompt.length + e.answer.length,
        0,
      );
      step++;
      examples += examplesNow.length;
      windowLoss += loss;
      windowSteps++;
      windowTokens += batchTokens;
      finalLoss = loss;
      const every = options.checkpointEvery ?? 0;
      if (every > 0 && step % every === 0 && step < maxSteps && options.onCheckpoint) {
        await options.onCheckpoint(step, await optimizer.exportState());
      }
      if (step % options.logEvery === 0 || step === maxSteps) {
        const t = now();
        const elapsedSec = (t - start) / 1000;
        const perStep = elapsedSec / (step - firstStep);
        const etaSec = Number.isFinite(maxSteps)
          ? perStep * (maxSteps - step)
          : Math.max(0, budgetSec - elapsedSec);
        onProgress({
          step,
          loss: windowLoss / windowSteps,
          lr,
          gradNorm,
          tokensPerSec: windowTokens / ((t - windowStart) / 1000),
          etaSec,
          elapsedSec,
          examples,
        });
        windowLoss = 0;
        windowSteps = 0;
        windowTokens = 0;
        windowStart = t;
        // A macrotask turn, so a Worker running this hears Pause between steps.
        await new Promise((resolve) => setTimeout(resolve, 0));
      }
    }
  } finally {
    optimizer.dispose();
  }
  return { steps: step, examples, finalLoss, elapsedSec: (now() - start) / 1000 };
}

function now(): number {
  return performance.now();
}
