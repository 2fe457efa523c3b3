// The GRPO update of one role, nanoGPT style: pad the role's sampled sequences into one
// batch, then numIterations times: forward → per-token log-probs → clipped surrogate (+ β·k3
// to a frozen reference) → gradients → NaN/Inf guard → global-norm clip → Adam step.
//
// π_old is the sampling policy: its log-probs come from the sampler, taken when the tokens
// were drawn. The reference is a frozen copy of the weights the role started from; with
// β = 0 it is never created and its forward pass is skipped.
import * as tf from '@tensorflow/tfjs-core';
import { disposeModel, forward, type GPT } from '../model';
import { grpoLoss, grpoLossMetrics } from './grpoLoss';
import type { GrpoLossMetrics, GrpoLossOptions } from './grpoLossTypes';
import { tokenEntropies, tokenLogProbs } from './logProbs';
import { applyGradientsSafely, type SkipReason } from './safeUpdate';

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
}

export interface RoleUpdate {
  /** Loss metrics, averaged over the iterations. */
  metrics: GrpoLossMetrics;
  /** Global gradient norm before clipping, averaged over the iterations. */
  gradNorm: number;
  /** Why an iteration's update was skipped (NaN/Inf), one entry per skipped iteration. */
  skipped: SkipReason[];
}

/** Optimizer state and reference weights as plain arrays, for snapshots. */
export interface RoleTrainerState {
  iterations: number;
  /** Adam's first and second moments, in parameter order. */
  moments: { name: string; shape: number[]; data: Float32Array }[];
  /** The frozen reference's weights by parameter name (absent when β = 0). */
  reference: Map<string, Float32Array> | null;
}

export class RoleTrainer {
  private readonly optimizer: tf.AdamOptimizer;
  private readonly reference: GPT | null;
  private readonly variables: tf.Variable[];

  constructor(
    readonly model: GPT,
    readonly options: RoleTrainerOptions,
  ) {
    // Adam without weight decay, as TRL's GRPO default (weight_decay 0).
    this.optimizer = tf.train.adam(options.learningRate, 0.9, 0.999, 1e-8);
    this.reference = options.loss.beta > 0 ? frozenCopy(model) : null;
    this.variables = [...model.params.values()];
  }

  async update(sequences: readonly PolicySequence[]): Promise<RoleUpdate> {
    const batch = paddedBatch(sequences, this.options.padId);
    const { temperature } = this.options;
    const refLogProbs = this.reference
      ? tf.tidy(
          () =>
            tokenLogProbs(
              targetLogits(this.reference as GPT, batch.ids),
              batch.targets,
              temperature,
            ) as tf.Tensor2D,
        )
      : undefined;
    const metrics: GrpoLossMetrics[] = [];
    const gradNorms: number[] = [];
    const skipped: SkipReason[] = [];
    try {
      for (let iteration = 0; iteration < this.options.numIterations; iteration++) {
        // The forward inside the gradient also yields the metrics' log-probs and entropies.
        let kept: { logProbs: tf.Tensor2D; entropies: tf.Tensor2D } | null = null;
        const lossFn = (): tf.Scalar => {
          const logits = targetLogits(this.model, batch.ids);
          const logProbs = tokenLogProbs(logits, batch.targets, temperature) as tf.Tensor2D;
          kept = {
            logProbs: tf.keep(tf.clone(logProbs)),
            entropies: tf.keep(tokenEntropies(logits, temperature) as tf.Tensor2D),
          };
          return grpoLoss(
            {
              logProbs,
              oldLogProbs: batch.oldLogProbs,
              refLogProbs,
              advantages: batch.advantages,
              mask: batch.mask,
            },
            this.options.loss,
          );
        };
        const { value, grads } = tf.variableGrads(lossFn, this.variables);
        const lossValue = (await value.data())[0] ?? Number.NaN;
        const report = await applyGradientsSafely(
          this.optimizer,
          grads,
          lossValue,
          this.options.maxGradNorm,
        );
        value.dispose();
        tf.dispose(grads);
        const used = kept as { logProbs: tf.Tensor2D; entropies: tf.Tensor2D } | null;
        if (used) {
          metrics.push(
            await grpoLossMetrics(
              {
                logProbs: used.logProbs,
                oldLogProbs: batch.oldLogProbs,
                refLogProbs,
                advantages: batch.advantages,
                mask: batch.mask,
                entropies: used.entropies,
              },
              this.options.loss,
            ),
          );
          tf.dispose([used.logProbs, used.entropies]);
        }
        gradNorms.push(report.gradNorm);
        if (report.skipReason) skipped.push(report.skipReason);
      }
    } finally {
      tf.dispose([batch.ids, batch.targets, batch.mask, batch.oldLogProbs, batch.advantages]);
      refLogProbs?.dispose();
    }
    return { metrics: averageMetrics(metrics), gradNorm: meanOf(gradNorms), skipped };
  }

  async exportState(): Promise<RoleTrainerState> {
    const weights = await this.optimizer.getWeights();
    const iterations = (await weights[0]?.tensor.data())?.[0] ?? 0;
    const moments = [];
    for (const { name, tensor } of weights.slice(1)) {
      moments.push({ name, shape: tensor.shape, data: (await tensor.data()) as Float32Array });
    }
    weights[0]?.tensor.dispose();
    let reference: Map<string, Float32Array> | null = null;
    if (this.reference) {
      reference = new Map();
      for (const [name, variable] of this.reference.params) {
        reference.set(name, (await variable.data()) as Float32Array);
      }
    }
    return { iterations, moments, reference };
  }

  /** Restores what exportState saved (same model shapes, same parameter order). */
  async importState(state: RoleTrainerState): Promise<void> {
    if (state.moments.length > 0) {
      // setWeights wraps each tensor in a new variable (sharing its data): free ours after.
      const weights = [
        { name: 'iter', tensor: tf.scalar(state.iterations, 'int32') },
        ...state.moments.map(({ name, shape, data }) => ({ name, tensor: tf.tensor(data, shape) })),
      ];
      await this.optimizer.setWeights(weights);
      tf.dispose(weights.map((w) => w.tensor));
    }
    if (this.reference && state.reference) {
      for (const [name, variable] of this.reference.params) {
        const values = state.reference.get(name);
        if (!values) throw new Error(`trainer state: reference has no ${name}`);
        tf.tidy(() => variable.assign(tf.tensor(values, variable.shape)));
      }
    }
  }

  dispose(): void {
    this.optimizer.dispose();
    if (this.reference) disposeModel(this.reference);
  }
}

interface PaddedBatch {
  /** [G, T] prompt + completion, right-padded. */
  ids: tf.Tensor2D;
  /** [G, T−1] the token each position predicts. */
  targets: tf.Tensor2D;
  /** [G, T−1] 1 where the predicted token is a completion token. */
  mask: tf.Tensor2D;
  oldLogProbs: tf.Tensor2D;
  advantages: tf.Tensor1D;
}

/** Completion token j of a sequence sits at index P + j and is predicted at position P + j − 1. */
function paddedBatch(sequences: readonly PolicySequence[], padId: number): PaddedBatch {
  const width = Math.max(2, ...sequences.map((s) => s.prompt.length + s.completion.length));
  const G = sequences.length;
  const ids = new Int32Array(G * width).fill(padId);
  const mask = new Float32Array(G * (width - 1));
  const old = new Float32Array(G * (width - 1));
  sequences.forEach((sequence, g) => {
    const tokens = [...sequence.prompt, ...sequence.completion];
    ids.set(tokens, g * width);
    const start = sequence.prompt.length - 1;
    sequence.completion.forEach((_, j) => {
      mask[g * (width - 1) + start + j] = 1;
      old[g * (width - 1) + start + j] = sequence.oldLogProbs[j] ?? 0;
    });
  });
  const idsTensor = tf.tensor2d(ids, [G, width], 'int32');
  return {
    ids: idsTensor,
    targets: tf.slice(idsTensor, [0, 1], [G, width - 1]),
    mask: tf.tensor2d(mask, [G, width - 1]),
    oldLogProbs: tf.tensor2d(old, [G, width - 1]),
    advantages: tf.tensor1d(sequences.map((s) => s.advantage)),
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

/** Logits of positions 0..T−2 (those that predict a next token). */
function targetLogits(model: GPT, ids: tf.Tensor2D): tf.Tensor3D {
  const logits = forward(model, ids);
  const [B, T, V] = logits.shape;
  return tf.slice(logits, [0, 0, 0], [B, T - 1, V]);
}

function meanOf(values: readonly number[]): number {
  return values.length === 0 ? 0 : values.reduce((a, b) => a + b, 0) / values.length;
}

function averageMetrics(all: readonly GrpoLossMetrics[]): GrpoLossMetrics {
  const mean = (pick: (m: GrpoLossMetrics) => number) => meanOf(all.map(pick));
  const nullable = (pick: (m: GrpoLossMetrics) => number | null) =>
    all.some((m) => pick(m) === null) ? null : mean((m) => pick(m) ?? 0);
  return {
    loss: mean((m) => m.loss),
    kl: nullable((m) => m.kl),
    clipRatioLow: mean((m) => m.clipRatioLow),
    clipRatioHigh: mean((m) => m.clipRatioHigh),
    clipRatioRegion: mean((m) => m.clipRatioRegion),
    entropy: nullable((m) => m.entropy),
    meanLength: mean((m) => m.meanLength),
    minLength: mean((m) => m.minLength),
    maxLength: mean((m) => m.maxLength),
  };
}
