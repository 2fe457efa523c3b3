// The GRPO update of one role on the device (rl/trainer.ts' RoleTrainer, same interface and
// options): the role's sequences padded into one batch, numIterations whole steps of
// deviceModel.ts (forward, loss, backward, guarded AdamW: one submission each), the reference's
// log-probs from a frozen device copy, the loss metrics from the step's own log-probs; the
// updated weights are written back into the tfjs model, which stays the run's source of truth
// (checkpoints, the sampler's fallback). Adam's state lives on the device (exportState reads it).
import * as tf from '@tensorflow/tfjs-core';
import type { GPT } from '../../model/gpt';
import { readValues } from '../../model/params';
import type { SkipReason } from '../../model/safeUpdate';
import type { GrpoLossMetrics } from '../../rl/grpoLossTypes';
import type {
  PolicySequence,
  RoleTrainerOptions,
  RoleTrainerState,
  RoleUpdate,
} from '../../rl/trainer';
import { DeviceModel } from './deviceModel';
import type { MatmulVersion } from './ops';
import type { GpuRuntime } from './runtime';

interface Packed {
  B: number;
  T: number;
  ids: Uint32Array;
  /** Position r predicts a completion token: its index into that row's completion, else −1. */
  slot: Int32Array;
  oldLogp: Float32Array;
  advantage: Float32Array;
  weight: Float32Array;
  lengths: number[];
}

export class DeviceRoleTrainer {
  readonly device: DeviceModel;
  private readonly reference: DeviceModel | null;

  private constructor(
    readonly model: GPT,
    readonly options: RoleTrainerOptions,
    device: DeviceModel,
    reference: DeviceModel | null,
  ) {
    this.device = device;
    this.reference = reference;
  }

  /** The device copy starts from the model's weights; the reference is frozen at them. */
  static async create(
    rt: GpuRuntime,
    model: GPT,
    options: RoleTrainerOptions,
    /** The frozen reference's weights; default: the model's. */
    referenceValues?: Map<string, Float32Array> | null,
  ): Promise<DeviceRoleTrainer> {
    const values = await readValues(model.params);
    // No weight decay and β₂ 0.999, as RoleTrainer (TRL's GRPO defaults).
    const adam = { beta1: 0.9, beta2: 0.999, eps: 1e-8, weightDecay: 0 };
    const device = new DeviceModel(rt, model.config, values, adam);
    const reference =
      options.loss.beta > 0
        ? new DeviceModel(rt, model.config, referenceValues ?? values, adam)
        : null;
    return new DeviceRoleTrainer(model, options, device, reference);
  }

  setMatmulVersion(version: MatmulVersion): void {
    this.device.matmulVersion = version;
    if (this.reference) this.reference.matmulVersion = version;
  }

  private pack(sequences: readonly PolicySequence[]): Packed {
    const B = sequences.length;
    const T = Math.max(2, ...sequences.map((s) => s.prompt.length + s.completion.length));
    const R = B * T;
    const ids = new Uint32Array(R).fill(this.options.padId);
    const slot = new Int32Array(R).fill(-1);
    const oldLogp = new Float32Array(R);
    const advantage = new Float32Array(R);
    const weight = new Float32Array(R);
    const lengths = sequences.map((s) => s.completion.length);
    const tokens = Math.max(
      1,
      lengths.reduce((a, b) => a + b, 0),
    );
    const given = this.options.loss.normalizer ?? {};
    const outputs = given.outputs ?? B;
    sequences.forEach((s, b) => {
      ids.set([...s.prompt, ...s.completion], b * T);
      const start = s.prompt.length - 1;
      const len = s.completion.length;
      const w =
        this.options.loss.lossType === 'dapo'
          ? 1 / (given.tokens ?? tokens)
          : this.options.loss.lossType === 'grpo'
            ? 1 / (Math.max(len, 1) * outputs)
            : 1 / (outputs * (given.maxLength ?? T - 1));
      for (let j = 0; j < len; j++) {
        const r = b * T + start + j;
        slot[r] = j;
        oldLogp[r] = s.oldLogProbs[j] ?? 0;
        advantage[r] = s.advantage;
        weight[r] = w;
      }
    });
    return { B, T, ids, slot, oldLogp, advantage, weight, lengths };
  }

  async update(sequences: readonly PolicySequence[]): Promise<RoleUpdate> {
    const p = this.pack(sequences);
    const { temperature, learningRate, maxGradNorm, numIterations, loss } = this.options;
    const refLogp = this.reference
      ? (await this.reference.logProbs(p.B, p.T, p.ids, temperature)).logp
      : new Float32Array(p.B * p.T);
    const metrics: GrpoLossMetrics[] = [];
    const gradNorms: number[] = [];
    const skipped: SkipReason[] = [];
    for (let i = 0; i < numIterations; i++) {
      const step = await this.device.trainStep(
        {
          B: p.B,
          T: p.T,
          ids: p.ids,
          oldLogp: p.oldLogp,
          refLogp,
          advantage: p.advantage,
          weight: p.weight,
        },
        { ...loss, lr: learningRate, maxGradNorm, temperature },
        true,
      );
      metrics.push(this.metrics(p, step.loss, step.logp!, step.entropy!, refLogp));
      gradNorms.push(step.gradNorm);
      if (!step.applied)
        skipped.push(Number.isFinite(step.loss) ? 'non_finite_gradient' : 'non_finite_loss');
    }
    const values = await this.device.readParams();
    tf.tidy(() => {
      for (const [name, v] of this.model.params) v.assign(tf.tensor(values.get(name)!, v.shape));
    });
    const mean = (xs: number[]) => (xs.length ? xs.reduce((a, b) => a + b, 0) / xs.length : 0);
    const avg = (pick: (m: GrpoLossMetrics) => number | null) =>
      metrics.some((m) => pick(m) === null) ? null : mean(metrics.map((m) => pick(m) ?? 0));
    return {
      metrics: {
        loss: avg((m) => m.loss) ?? 0,
        kl: avg((m) => m.kl),
        clipRatioLow: avg((m) => m.clipRatioLow) ?? 0,
        clipRatioHigh: avg((m) => m.clipRatioHigh) ?? 0,
        clipRatioRegion: avg((m) => m.clipRatioRegion) ?? 0,
        entropy: avg((m) => m.entropy),
        meanLength: avg((m) => m.meanLength) ?? 0,
        minLength: avg((m) => m.minLength) ?? 0,
        maxLength: avg((m) => m.maxLength) ?? 0,
      },
      gradNorm: mean(gradNorms),
      skipped,
      microBatches: 1,
    };
  }

  /** grpoLossMetrics' numbers from the step's own log-probs (read back with its report). */
  private metrics(
    p: Packed,
    loss: number,
    logp: Float32Array,
    entropy: Float32Array,
    refLogp: Float32Array,
  ): GrpoLossMetrics {
    const { epsilonLow, epsilonHigh } = this.options.loss;
    let n = 0;
    let kl = 0;
    let low = 0;
    let high = 0;
    let region = 0;
    let ent = 0;
    for (let r = 0; r < p.slot.length; r++) {
      if ((p.slot[r] ?? -1) < 0) continue;
      n++;
      const lp = logp[r] ?? 0;
      const ratio = Math.exp(lp - (p.oldLogp[r] ?? 0));
      const a = p.advantage[r] ?? 0;
      const isLow = ratio < 1 - epsilonLow && a < 0;
      const isHigh = ratio > 1 + epsilonHigh && a > 0;
      if (isLow) low++;
      if (isHigh) high++;
      if (isLow || isHigh) region++;
      const d = (refLogp[r] ?? 0) - lp;
      kl += Math.exp(d) - d - 1;
      ent += entropy[r] ?? 0;
    }
    const t = Math.max(1, n);
    const lengths = p.lengths;
    return {
      loss,
      kl: this.reference ? kl / t : null,
      clipRatioLow: low / t,
      clipRatioHigh: high / t,
      clipRatioRegion: region / t,
      entropy: ent / t,
      meanLength: lengths.length ? lengths.reduce((a, b) => a + b, 0) / lengths.length : 0,
      minLength: lengths.length ? Math.min(...lengths) : 0,
      maxLength: lengths.length ? Math.max(...lengths) : 0,
    };
  }

  async exportState(): Promise<RoleTrainerState> {
    const { m, v } = await this.device.readMoments();
    const moments = [];
    for (const [kind, map] of [
      ['m', m],
      ['v', v],
    ] as const)
      for (const e of this.device.layout.entries)
        moments.push({ name: `${e.name}/${kind}`, shape: e.shape, data: map.get(e.name)! });
    return {
      iterations: this.device.step,
      moments,
      reference: this.reference ? await this.reference.readParams() : null,
    };
  }

  async importState(state: RoleTrainerState): Promise<void> {
    const entries = this.device.layout.entries;
    if (state.moments.length === 2 * entries.length) {
      const m = new Map<string, Float32Array>();
      const v = new Map<string, Float32Array>();
      entries.forEach((e, i) => {
        m.set(e.name, state.moments[i]!.data);
        v.set(e.name, state.moments[entries.length + i]!.data);
      });
      this.device.writeMoments(m, v, state.iterations);
    } else this.device.step = state.iterations;
    this.device.writeParams(await readValues(this.model.params));
    if (this.reference && state.reference) this.reference.writeParams(state.reference);
  }
}
