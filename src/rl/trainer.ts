// The GRPO update of one role, nanoGPT style: the role's sampled sequences are packed into
// micro-batches under the memory budget (longest first, little padding), then numIterations
// times: for each micro-batch forward → per-token log-probs → clipped surrogate (+ β·k3 to a
// frozen reference) → gradients, summed over the micro-batches → one NaN/Inf guard, one
// global-norm clip, one AdamW step (src/model/train.ts, the warm start's path too). Each
// micro-batch's loss is divided by the whole batch's normalizer (dapo: its tokens, grpo: its
// sequences, dr_grpo: sequences × max length), so the step equals the one-pass step.
//
// π_old is the sampling policy: its log-probs come from the sampler, taken when the tokens
// were drawn. The reference is a frozen copy of the weights the role started from; with
// β = 0 it is never created and its forward pass is skipped. With LoRA (model.lora) only the
// adapter trains and the reference is the frozen base itself, the adapter off (no copy). The
// model is the lab's GPT-2 or a role over a Hub base (model/trainableModel.ts).
import * as tf from '@tensorflow/tfjs-core';
import { updateOnDevice } from '../gpu/engine/kernelRoleTraining';
import {
  AdamW,
  type AdamWState,
  accumulateGradients,
  applyGradientsSafely,
  defaultMemoryBudgetBytes,
  disposeModel,
  type GPT,
  packByBudget,
  type SkipReason,
} from '../model';
import { tokenEntropies, tokenLogProbs } from '../model/logProbs';
import {
  adapterOff,
  logitsAtOf,
  type TrainableModel,
  trainableOf,
  trainingBytesOf,
} from '../model/trainableModel';
import { grpoLoss, grpoLossMetrics } from './grpoLoss';
import { averageLossMetrics } from './grpoLossReference';
import type { GrpoLossMetrics, GrpoLossOptions } from './grpoLossTypes';
import type {
  PolicySequence,
  RoleTrainerOptions,
  RoleTrainerState,
  RoleUpdate,
} from './policyUpdate';

// What an update takes and gives lives in a leaf module (policyUpdate.ts), so the kernels'
// engine, which the trainer calls, never imports the trainer back.
export type {
  PolicySequence,
  RoleTrainerOptions,
  RoleTrainerState,
  RoleUpdate,
} from './policyUpdate';

export class RoleTrainer {
  private readonly optimizer: AdamW;
  private readonly reference: TrainableModel | null;
  /** Trained in full, the reference is a frozen copy the trainer owns (snapshots carry it). */
  private readonly frozenReference: GPT | null;
  private readonly variables: tf.Variable[];
  private readonly budgetBytes: number;

  constructor(
    readonly model: TrainableModel,
    readonly options: RoleTrainerOptions,
  ) {
    const trainable = trainableOf(model);
    // No weight decay and β₂ 0.999, as TRL's GRPO defaults (AdamW, weight_decay 0).
    this.optimizer = new AdamW(
      trainable,
      { beta1: 0.9, beta2: 0.999, eps: 1e-8, weightDecay: 0 },
      options.learningRate,
    );
    // Under an adapter the reference is the base (the adapter off); trained in full, a copy.
    this.frozenReference = options.loss.beta > 0 && !model.lora ? frozenCopy(model as GPT) : null;
    this.reference = options.loss.beta > 0 ? (this.frozenReference ?? adapterOff(model)) : null;
    this.variables = [...trainable.values()];
    this.budgetBytes = options.memoryBudgetBytes ?? defaultMemoryBudgetBytes(tf.getBackend());
  }

  async update(sequences: readonly PolicySequence[]): Promise<RoleUpdate> {
    // The lab's WebGPU engine when it is on; null: train here. Every model on the kernels' one
    // model (gpu/engine/kernelRoleTraining.ts): GPT-2's weights in full or its LoRA adapter, a
    // Hub base's role's adapter.
    const onDevice = await updateOnDevice(
      this.model,
      this.options,
      this.batchLossOptions(sequences),
      this.hostState,
      sequences,
    );
    if (onDevice) return onDevice;
    const batch = this.prepare(sequences);
    const metrics: GrpoLossMetrics[] = [];
    const gradNorms: number[] = [];
    const skipped: SkipReason[] = [];
    try {
      for (let iteration = 0; iteration < this.options.numIterations; iteration++) {
        const summed = await this.accumulate(batch);
        try {
          const report = await applyGradientsSafely(
            this.optimizer,
            summed.grads,
            summed.loss,
            this.options.maxGradNorm,
          );
          metrics.push(summed.metrics);
          gradNorms.push(report.gradNorm);
          if (report.skipReason) skipped.push(report.skipReason);
        } finally {
          tf.dispose(Object.values(summed.grads));
        }
      }
    } finally {
      disposePrepared(batch);
    }
    return {
      metrics: averageLossMetrics(metrics),
      gradNorm: meanOf(gradNorms),
      skipped,
      microBatches: batch.pieces.length,
    };
  }

  /** The optimizer and reference as the device trainer reads and refreshes them. */
  private readonly hostState = {
    exportState: () => this.optimizer.exportState(),
    importState: (state: AdamWState) => this.optimizer.importState(state),
    referenceModel: () => this.frozenReference,
  };

  /**
   * The gradient of one iteration's loss by parameter name, with its metrics, and no step
   * taken (the check that micro-batching changes nothing). The caller disposes the grads.
   */
  async gradients(
    sequences: readonly PolicySequence[],
  ): Promise<{ grads: Map<string, tf.Tensor>; metrics: GrpoLossMetrics; microBatches: number }> {
    const batch = this.prepare(sequences);
    try {
      const summed = await this.accumulate(batch);
      const grads = new Map<string, tf.Tensor>();
      for (const [name, variable] of trainableOf(this.model)) {
        const gradient = summed.grads[variable.name];
        if (gradient) grads.set(name, gradient);
      }
      return { grads, metrics: summed.metrics, microBatches: batch.pieces.length };
    } finally {
      disposePrepared(batch);
    }
  }

  /** Micro-batches under the budget, the whole batch's loss options, the reference's log-probs. */
  private prepare(sequences: readonly PolicySequence[]): PreparedBatch {
    const { temperature, padId } = this.options;
    const pieces = packByBudget(
      sequences.map((s) => s.prompt.length + s.completion.length),
      (rows, width) => trainingBytesOf(this.model, rows, width),
      this.budgetBytes,
    ).map((indices) => indices.map((i) => sequences[i]!));
    // Once per micro-batch and kept across iterations (small: [rows, width − 1] each).
    const refLogProbs = pieces.map((piece) =>
      this.reference ? referenceLogProbs(this.reference, piece, padId, temperature) : undefined,
    );
    return { pieces, loss: this.batchLossOptions(sequences), refLogProbs };
  }

  /** Σ over the micro-batches of the loss's gradient, and the iteration's metrics. */
  private async accumulate(
    batch: PreparedBatch,
  ): Promise<{ grads: tf.NamedTensorMap; loss: number; metrics: GrpoLossMetrics }> {
    const { temperature, padId } = this.options;
    const { pieces, loss, refLogProbs } = batch;
    const pieceMetrics: PieceMetrics[] = [];
    // The piece in flight: built inside the gradient's tidy, kept for its metrics.
    let current: KeptPiece | null = null;
    const summed = await accumulateGradients(
      this.variables,
      pieces.length,
      (index) => {
        const padded = keepAll(paddedBatch(pieces[index]!, padId));
        const logits = logitsAtOf(this.model, padded.ids, padded.rows);
        const logProbs = tokenLogProbs(logits, padded.targets, temperature) as tf.Tensor2D;
        current = {
          ...padded,
          logProbs: tf.keep(tf.clone(logProbs)),
          entropies: tf.keep(tokenEntropies(logits, temperature) as tf.Tensor2D),
        };
        return grpoLoss(
          {
            logProbs,
            oldLogProbs: padded.oldLogProbs,
            refLogProbs: refLogProbs[index],
            advantages: padded.advantages,
            mask: padded.mask,
          },
          loss,
        );
      },
      async (index) => {
        const kept = current as KeptPiece | null;
        if (!kept) return;
        current = null;
        try {
          pieceMetrics.push({
            metrics: await grpoLossMetrics(
              {
                logProbs: kept.logProbs,
                oldLogProbs: kept.oldLogProbs,
                refLogProbs: refLogProbs[index],
                advantages: kept.advantages,
                mask: kept.mask,
                entropies: kept.entropies,
              },
              loss,
            ),
            tokens: pieces[index]!.reduce((sum, s) => sum + s.completion.length, 0),
            outputs: pieces[index]!.length,
          });
        } finally {
          tf.dispose(Object.values(kept));
        }
      },
    );
    return { ...summed, metrics: combinePieceMetrics(pieceMetrics) };
  }

  /** The loss options with the whole batch's normalizers (TRL's num_items_in_batch). */
  batchLossOptions(sequences: readonly PolicySequence[]): GrpoLossOptions {
    const tokens = sequences.reduce((sum, s) => sum + s.completion.length, 0);
    const width = Math.max(2, ...sequences.map((s) => s.prompt.length + s.completion.length));
    const given = this.options.loss.normalizer ?? {};
    return {
      ...this.options.loss,
      normalizer: {
        tokens: Math.max(tokens, 1),
        outputs: sequences.length,
        // The one-pass default: the padded width of the whole batch.
        maxLength: given.maxLength ?? width - 1,
      },
    };
  }

  async exportState(): Promise<RoleTrainerState> {
    // After a device update too: the device's moments come back into the optimizer.
    const { step, moments } = await this.optimizer.exportState();
    let reference: Map<string, Float32Array> | null = null;
    // With LoRA the reference is the frozen base, which the checkpoint already holds.
    if (this.frozenReference) {
      reference = new Map();
      for (const [name, variable] of this.frozenReference.params) {
        reference.set(name, (await variable.data()) as Float32Array);
      }
    }
    return { iterations: step, moments, reference };
  }

  /** Restores what exportState saved (same model shapes, same parameter order). */
  async importState(state: RoleTrainerState): Promise<void> {
    // The device takes them at its next update (the adapter or weights come from tfjs then).
    this.optimizer.importState({ step: state.iterations, moments: state.moments });
    if (this.frozenReference && state.reference) {
      for (const [name, variable] of this.frozenReference.params) {
        const values = state.reference.get(name);
        if (!values) throw new Error(`trainer state: reference has no ${name}`);
        tf.tidy(() => variable.assign(tf.tensor(values, variable.shape)));
      }
    }
  }

  dispose(): void {
    this.optimizer.dispose();
    // A LoRA reference is the policy's own base: its owner disposes it.
    if (this.frozenReference) disposeModel(this.frozenReference);
  }
}

interface PaddedBatch {
  /** [G, T] prompt + completion, right-padded. */
  ids: tf.Tensor2D;
  /**
   * [G·L] the flattened [G·T] position that predicts completion token j of sequence g (L: the
   * longest completion); padding slots repeat the row's last position and are masked out.
   */
  rows: tf.Tensor1D;
  /** [G, L] completion tokens. */
  targets: tf.Tensor2D;
  /** [G, L] 1 for a completion token, 0 for padding. */
  mask: tf.Tensor2D;
  oldLogProbs: tf.Tensor2D;
  advantages: tf.Tensor1D;
}

/**
 * Completion token j of a sequence sits at index P + j and is predicted at position P + j − 1:
 * only those positions go through the head (the prompt's predictions are never scored).
 */
function paddedBatch(sequences: readonly PolicySequence[], padId: number): PaddedBatch {
  const width = Math.max(2, ...sequences.map((s) => s.prompt.length + s.completion.length));
  const L = Math.max(1, ...sequences.map((s) => s.completion.length));
  const G = sequences.length;
  const ids = new Int32Array(G * width).fill(padId);
  const rows = new Int32Array(G * L);
  const targets = new Int32Array(G * L).fill(padId);
  const mask = new Float32Array(G * L);
  const old = new Float32Array(G * L);
  sequences.forEach((sequence, g) => {
    ids.set([...sequence.prompt, ...sequence.completion], g * width);
    const start = sequence.prompt.length - 1;
    for (let j = 0; j < L; j++) {
      const real = j < sequence.completion.length;
      rows[g * L + j] = g * width + (real ? start + j : width - 1);
      if (!real) continue;
      targets[g * L + j] = sequence.completion[j]!;
      mask[g * L + j] = 1;
      old[g * L + j] = sequence.oldLogProbs[j] ?? 0;
    }
  });
  return {
    ids: tf.tensor2d(ids, [G, width], 'int32'),
    rows: tf.tensor1d(rows, 'int32'),
    targets: tf.tensor2d(targets, [G, L], 'int32'),
    mask: tf.tensor2d(mask, [G, L]),
    oldLogProbs: tf.tensor2d(old, [G, L]),
    advantages: tf.tensor1d(sequences.map((s) => s.advantage)),
  };
}

interface PreparedBatch {
  pieces: PolicySequence[][];
  loss: GrpoLossOptions;
  refLogProbs: (tf.Tensor2D | undefined)[];
}

type KeptPiece = PaddedBatch & { logProbs: tf.Tensor2D; entropies: tf.Tensor2D };

interface PieceMetrics {
  metrics: GrpoLossMetrics;
  tokens: number;
  outputs: number;
}

function disposePrepared(batch: PreparedBatch): void {
  tf.dispose(batch.refLogProbs.filter((t): t is tf.Tensor2D => t !== undefined));
}

function keepAll(batch: PaddedBatch): PaddedBatch {
  for (const tensor of Object.values(batch)) tf.keep(tensor);
  return batch;
}

/** log π_ref of each completion token of `piece`, [rows, width − 1], outside any gradient. */
function referenceLogProbs(
  reference: TrainableModel,
  piece: readonly PolicySequence[],
  padId: number,
  temperature: number,
): tf.Tensor2D {
  return tf.tidy(() => {
    const batch = paddedBatch(piece, padId);
    return tokenLogProbs(
      logitsAtOf(reference, batch.ids, batch.rows),
      batch.targets,
      temperature,
    ) as tf.Tensor2D;
  });
}

/**
 * One iteration's metrics from its micro-batches: the loss is a sum (each piece carries the
 * whole batch's normalizer), token means are weighted by tokens, lengths by sequences.
 */
function combinePieceMetrics(pieces: readonly PieceMetrics[]): GrpoLossMetrics {
  const tokens = Math.max(
    1,
    pieces.reduce((sum, p) => sum + p.tokens, 0),
  );
  const outputs = Math.max(
    1,
    pieces.reduce((sum, p) => sum + p.outputs, 0),
  );
  const tokenMean = (pick: (m: GrpoLossMetrics) => number) =>
    pieces.reduce((sum, p) => sum + pick(p.metrics) * p.tokens, 0) / tokens;
  const nullableMean = (pick: (m: GrpoLossMetrics) => number | null) =>
    pieces.some((p) => pick(p.metrics) === null) ? null : tokenMean((m) => pick(m) ?? 0);
  return {
    loss: pieces.reduce((sum, p) => sum + p.metrics.loss, 0),
    kl: nullableMean((m) => m.kl),
    clipRatioLow: tokenMean((m) => m.clipRatioLow),
    clipRatioHigh: tokenMean((m) => m.clipRatioHigh),
    clipRatioRegion: tokenMean((m) => m.clipRatioRegion),
    entropy: nullableMean((m) => m.entropy),
    meanLength: pieces.reduce((sum, p) => sum + p.metrics.meanLength * p.outputs, 0) / outputs,
    minLength: Math.min(...pieces.map((p) => p.metrics.minLength)),
    maxLength: Math.max(...pieces.map((p) => p.metrics.maxLength)),
  };
}

/** A non-trainable copy of the weights (the clones are freed; the variables keep their data). */
function frozenCopy(model: GPT): GPT {
  const params: GPT['params'] = new Map();
  for (const [name, variable] of model.params) {
    params.set(
      name,
      tf.tidy(() => tf.variable(tf.clone(variable), false)),
    );
  }
  return { config: { ...model.config }, params };
}

function meanOf(values: readonly number[]): number {
  return values.length === 0 ? 0 : values.reduce((a, b) => a + b, 0) / values.length;
}
