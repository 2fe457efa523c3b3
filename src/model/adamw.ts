// AdamW and the warm-up + cosine learning-rate schedule: the one optimizer of the lab, used by
// the supervised warm start and by the GRPO trainer. It only applies gradients; the NaN/Inf
// guard and global-norm clipping come before it, in one place (./safeUpdate.ts).
import * as tf from '@tensorflow/tfjs-core';
import { type GPT, trainableParams } from './gpt';
import type { Params } from './params';

export interface AdamWOptions {
  beta1: number;
  beta2: number;
  eps: number;
  /** Decoupled weight decay, on matrices only (not biases or LayerNorm gains); 0: plain Adam. */
  weightDecay: number;
}

export const DEFAULT_ADAMW: AdamWOptions = {
  beta1: 0.9,
  beta2: 0.95,
  eps: 1e-8,
  weightDecay: 0.01,
};

/** Adam's state as plain arrays, for snapshots: every first moment in parameter order, then every second. */
export interface AdamWState {
  step: number;
  moments: { name: string; shape: number[]; data: Float32Array }[];
}

interface Slot {
  name: string;
  param: tf.Variable;
  m: tf.Variable;
  v: tf.Variable;
}

export class AdamW {
  readonly options: AdamWOptions;
  /** The step size of the next applyGradients (the schedule sets it before each step). */
  learningRate: number;
  /** By tf variable name, as tf.variableGrads keys its gradients. */
  private readonly slots = new Map<string, Slot>();
  private t = 0;

  /** `model`: a GPT (its trainableParams), or the variables to train themselves. */
  constructor(model: GPT | Params, options: Partial<AdamWOptions> = {}, learningRate = 1e-3) {
    this.options = { ...DEFAULT_ADAMW, ...options };
    this.learningRate = learningRate;
    // With LoRA, the adapter's variables only: the frozen base has no moments.
    for (const [name, param] of model instanceof Map ? model : trainableParams(model)) {
      this.slots.set(param.name, {
        name,
        param,
        // In a tidy: a variable keeps its initial tensor's data, the tensor itself is freed.
        m: tf.tidy(() => tf.variable(tf.zerosLike(param), false)),
        v: tf.tidy(() => tf.variable(tf.zerosLike(param), false)),
      });
    }
  }

  get stepCount(): number {
    return this.t;
  }

  /**
   * One update from gradients keyed by tf variable name (tf.variableGrads' keys). A parameter
   * without a gradient is left alone. Does not dispose the gradients.
   */
  applyGradients(grads: tf.NamedTensorMap): void {
    const { beta1, beta2, eps, weightDecay } = this.options;
    const lr = this.learningRate;
    this.t++;
    const c1 = 1 - beta1 ** this.t;
    const c2 = 1 - beta2 ** this.t;
    tf.tidy(() => {
      for (const [key, { param, m, v }] of this.slots) {
        const g = grads[key];
        if (!g) continue;
        m.assign(tf.add(tf.mul(m, beta1), tf.mul(g, 1 - beta1)));
        v.assign(tf.add(tf.mul(v, beta2), tf.mul(tf.square(g), 1 - beta2)));
        const update = tf.div(tf.div(m, c1), tf.add(tf.sqrt(tf.div(v, c2)), eps));
        const decayed =
          param.rank >= 2 && weightDecay > 0 ? tf.mul(param, 1 - lr * weightDecay) : param;
        param.assign(tf.sub(decayed, tf.mul(update, lr)));
      }
    });
  }

  async exportState(): Promise<AdamWState> {
    const slots = [...this.slots.values()];
    const moments = [];
    for (const kind of ['m', 'v'] as const) {
      for (const slot of slots) {
        moments.push({
          name: `${slot.name}/${kind}`,
          shape: [...slot[kind].shape],
          data: (await slot[kind].data()) as Float32Array,
        });
      }
    }
    return { step: this.t, moments };
  }

  /**
   * Restores exportState's moments by position (all first moments, then all second ones, in
   * parameter order: also the layout of tfjs Adam's getWeights, which older snapshots hold).
   */
  importState(state: AdamWState): void {
    const slots = [...this.slots.values()];
    if (state.moments.length === 0) {
      this.t = state.step;
      return;
    }
    if (state.moments.length !== 2 * slots.length) {
      throw new Error(
        `optimizer state holds ${state.moments.length} moments, the model needs ${2 * slots.length}`,
      );
    }
    slots.forEach((slot, index) => {
      for (const [kind, offset] of [
        ['m', 0],
        ['v', slots.length],
      ] as const) {
        const saved = state.moments[offset + index]!;
        if (saved.data.length !== slot.param.size) {
          throw new Error(`optimizer state: ${saved.name} does not fit ${slot.name}`);
        }
        tf.tidy(() => slot[kind].assign(tf.tensor(saved.data, slot.param.shape)));
      }
    });
    this.t = state.step;
  }

  dispose(): void {
    for (const slot of this.slots.values()) {
      slot.m.dispose();
      slot.v.dispose();
    }
  }
}

/** Linear warm-up to peakLr, then cosine decay to minLr at totalSteps. */
export function learningRate(
  step: number,
  schedule: { peakLr: number; minLr: number; warmupSteps: number; totalSteps: number },
): number {
  const { peakLr, minLr, warmupSteps, totalSteps } = schedule;
  if (step < warmupSteps) return (peakLr * (step + 1)) / warmupSteps;
  const progress = Math.min(1, (step - warmupSteps) / Math.max(1, totalSteps - warmupSteps));
  return minLr + 0.5 * (peakLr - minLr) * (1 + Math.cos(Math.PI * progress));
}
