// AdamW with global-norm gradient clipping and a warm-up + cosine learning-rate schedule.
// Shared by the supervised warm start and the GRPO trainer.
import * as tf from '@tensorflow/tfjs-core';
import type { GPT } from './gpt';

export interface AdamWOptions {
  beta1: number;
  beta2: number;
  eps: number;
  weightDecay: number;
  /** Clip the global gradient norm to this value; 0 disables clipping. */
  clipNorm: number;
}

export const DEFAULT_ADAMW: AdamWOptions = {
  beta1: 0.9,
  beta2: 0.95,
  eps: 1e-8,
  weightDecay: 0.01,
  clipNorm: 1,
};

export class AdamW {
  readonly options: AdamWOptions;
  private readonly m = new Map<string, tf.Variable>();
  private readonly v = new Map<string, tf.Variable>();
  private t = 0;

  constructor(
    private readonly model: GPT,
    options: Partial<AdamWOptions> = {},
  ) {
    this.options = { ...DEFAULT_ADAMW, ...options };
    for (const [name, p] of model.params) {
      this.m.set(name, tf.variable(tf.zerosLike(p), false));
      this.v.set(name, tf.variable(tf.zerosLike(p), false));
    }
  }

  get stepCount(): number {
    return this.t;
  }

  /**
   * Applies one update from gradients keyed by parameter name (GPT-2 names). Returns the
   * global gradient norm before clipping. Does not dispose the gradients.
   */
  async apply(grads: Map<string, tf.Tensor>, lr: number): Promise<number> {
    const { beta1, beta2, eps, weightDecay, clipNorm } = this.options;
    // Pairwise adds, not addN: addN of ~30 tensors exceeds WebGPU's 8 storage buffers per stage.
    const normTensor = tf.tidy(() =>
      tf.sqrt([...grads.values()].map((g) => tf.sum(tf.square(g))).reduce((a, b) => tf.add(a, b))),
    );
    const gradNorm = (await normTensor.data())[0]!;
    normTensor.dispose();
    const scale = clipNorm > 0 && gradNorm > clipNorm ? clipNorm / (gradNorm + 1e-6) : 1;
    this.t++;
    const c1 = 1 - beta1 ** this.t;
    const c2 = 1 - beta2 ** this.t;
    tf.tidy(() => {
      for (const [name, p] of this.model.params) {
        const raw = grads.get(name);
        if (!raw) continue; // a parameter outside the loss gets no update
        const g = scale === 1 ? raw : tf.mul(raw, scale);
        const m = this.m.get(name)!;
        const v = this.v.get(name)!;
        m.assign(tf.add(tf.mul(m, beta1), tf.mul(g, 1 - beta1)));
        v.assign(tf.add(tf.mul(v, beta2), tf.mul(tf.square(g), 1 - beta2)));
        const update = tf.div(tf.div(m, c1), tf.add(tf.sqrt(tf.div(v, c2)), eps));
        // Decoupled weight decay on matrices only (not biases or LayerNorm gains).
        const decayed = p.rank >= 2 && weightDecay > 0 ? tf.mul(p, 1 - lr * weightDecay) : p;
        p.assign(tf.sub(decayed, tf.mul(update, lr)));
      }
    });
    return gradNorm;
  }

  dispose(): void {
    for (const t of [...this.m.values(), ...this.v.values()]) t.dispose();
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
