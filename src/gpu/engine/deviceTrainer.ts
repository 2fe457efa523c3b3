// The GRPO update of one role on the device (rl/trainer.ts' RoleTrainer, same interface and
// options): the role's sequences as padded rows (packedBatch.ts: a group that shares a prompt
// holds it once), in passes within the memory budget, numIterations whole steps of
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
} from '../../rl/policyUpdate';
import { DeviceModel, type PackedRows } from './deviceModel';
import { trainingBytesPerToken } from './limits';
import type { MatmulVersion } from './ops';
import { packBatch } from './packedBatch';
import type { GpuRuntime } from './runtime';

interface Packed {
  B: number;
  T: number;
  ids: Uint32Array;
  /** Shared prompts' rows (packedBatch.ts): positions and attention segments. */
  packed?: PackedRows;
  /** Position r predicts a completion token: its index into that row's completion, else −1. */
  slot: Int32Array;
  oldLogp: Float32Array;
  advantage: Float32Array;
  weight: Float32Array;
  lengths: number[];
}

/** The positions that predict a completion token: the only ones the loss reads. */
function completionRows(p: Packed): Uint32Array {
  const rows: number[] = [];
  p.slot.forEach((slot, r) => {
    if (slot >= 0) rows.push(r);
  });
  return Uint32Array.from(rows);
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
    const { vocabSize: V, nInner: F, nEmbd: D } = model.config;
    const binding = device.rt.device.limits.maxStorageBufferBindingSize;
    const byBudget =
      options.memoryBudgetBytes !== undefined
        ? Math.floor(options.memoryBudgetBytes / trainingBytesPerToken(model.config))
        : Number.POSITIVE_INFINITY;
    this.maxTokensPerPass = Math.max(
      64,
      Math.min(16384, byBudget, Math.floor(binding / 4 / Math.max(V, F, 3 * D))),
    );
  }

  /**
   * The device copy starts from the model's weights (or is `device`, a copy already holding
   * them: the engine's, shared with its sampler); the reference is frozen at them.
   */
  static async create(
    rt: GpuRuntime,
    model: GPT,
    options: RoleTrainerOptions,
    /** The frozen reference's weights; default: the model's. */
    referenceValues?: Map<string, Float32Array> | null,
    device?: DeviceModel,
  ): Promise<DeviceRoleTrainer> {
    const needValues = !device || (options.loss.beta > 0 && !referenceValues);
    const values = needValues ? await readValues(model.params) : null;
    // No weight decay and β₂ 0.999, as RoleTrainer (TRL's GRPO defaults).
    const adam = { beta1: 0.9, beta2: 0.999, eps: 1e-8, weightDecay: 0 };
    const own = device ?? new DeviceModel(rt, model.config, values!, adam);
    const reference =
      options.loss.beta > 0
        ? new DeviceModel(rt, model.config, referenceValues ?? values!, adam)
        : null;
    return new DeviceRoleTrainer(model, options, own, reference);
  }

  setMatmulVersion(version: MatmulVersion): void {
    this.device.matmulVersion = version;
    if (this.reference) this.reference.matmulVersion = version;
  }

  /**
   * Tokens (rows × padded width) one pass may hold: the larger of a pass's buffers (logits
   * R×V, the MLP's R×F) must fit one binding, its activations the run's memory budget
   * (trainingBytesPerToken), and a pass stays a few hundred MiB at most.
   */
  maxTokensPerPass: number;

  private normalizers(sequences: readonly PolicySequence[]) {
    const given = this.options.loss.normalizer ?? {};
    const width = Math.max(2, ...sequences.map((s) => s.prompt.length + s.completion.length));
    return {
      tokens:
        given.tokens ??
        Math.max(
          1,
          sequences.reduce((a, s) => a + s.completion.length, 0),
        ),
      outputs: given.outputs ?? sequences.length,
      maxLength: given.maxLength ?? width - 1,
    };
  }

  /**
   * The passes of an update: the sequences' rows (a group that shares a prompt holds it once,
   * packedBatch.ts), as many rows a pass as fit maxTokensPerPass; per position, what the loss
   * reads of the completion token it predicts.
   */
  private passes(
    sequences: readonly PolicySequence[],
    n: { tokens: number; outputs: number; maxLength: number },
  ): Packed[] {
    const batch = {
      sequences: sequences.map((s) => [...s.prompt, ...s.completion]),
      scoredFrom: sequences.map((s) => s.prompt.length - 1),
    };
    return packBatch(batch, this.maxTokensPerPass).map((part) => {
      const R = part.B * part.T;
      const slot = new Int32Array(R).fill(-1);
      const oldLogp = new Float32Array(R);
      const advantage = new Float32Array(R);
      const weight = new Float32Array(R);
      const lengths: number[] = [];
      for (const run of part.runs) {
        const s = sequences[run.sequence] as PolicySequence;
        const len = s.completion.length;
        lengths.push(len);
        // The whole batch's normalizers, so the passes add up to the one-pass loss.
        const w =
          this.options.loss.lossType === 'dapo'
            ? 1 / n.tokens
            : this.options.loss.lossType === 'grpo'
              ? 1 / (Math.max(len, 1) * n.outputs)
              : 1 / (n.outputs * n.maxLength);
        for (let j = 0; j < run.count; j++) {
          const r = (part.scored as Uint32Array)[run.first + j] as number;
          slot[r] = j;
          oldLogp[r] = s.oldLogProbs[j] ?? 0;
          advantage[r] = s.advantage;
          weight[r] = w;
        }
      }
      return {
        B: part.B,
        T: part.T,
        // Padding (weight 0, after every real position of its row) reads id 0.
        ids: part.ids,
        ...(part.segments
          ? { packed: { positions: part.positions, segments: part.segments } }
          : {}),
        slot,
        oldLogp,
        advantage,
        weight,
        lengths,
      };
    });
  }

  async update(sequences: readonly PolicySequence[]): Promise<RoleUpdate> {
    const norm = this.normalizers(sequences);
    const packs = this.passes(sequences, norm);
    const { temperature, learningRate, maxGradNorm, numIterations, loss } = this.options;
    const refLogps: Float32Array[] = [];
    for (const p of packs)
      refLogps.push(
        this.reference
          ? (
              await this.reference.logProbs(
                p.B,
                p.T,
                p.ids,
                temperature,
                completionRows(p),
                p.packed,
              )
            ).logp
          : new Float32Array(p.B * p.T),
      );
    const metrics: GrpoLossMetrics[] = [];
    const gradNorms: number[] = [];
    const skipped: SkipReason[] = [];
    for (let i = 0; i < numIterations; i++) {
      const logps: Float32Array[] = [];
      const entropies: Float32Array[] = [];
      let last: { loss: number; gradNorm: number; applied: boolean } | null = null;
      for (let k = 0; k < packs.length; k++) {
        const p = packs[k]!;
        const step = await this.device.trainStep(
          {
            B: p.B,
            T: p.T,
            ids: p.ids,
            oldLogp: p.oldLogp,
            refLogp: refLogps[k]!,
            advantage: p.advantage,
            weight: p.weight,
            ...(p.packed ? { packed: p.packed } : {}),
          },
          { ...loss, lr: learningRate, maxGradNorm, temperature },
          true,
          { first: k === 0, last: k === packs.length - 1 },
        );
        logps.push(step.logp!);
        entropies.push(step.entropy!);
        last = step;
      }
      metrics.push(this.metrics(packs, last!.loss, logps, entropies, refLogps));
      gradNorms.push(last!.gradNorm);
      if (!last!.applied)
        skipped.push(Number.isFinite(last!.loss) ? 'non_finite_gradient' : 'non_finite_loss');
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
      microBatches: packs.length,
    };
  }

  /** grpoLossMetrics' numbers from the step's own log-probs (read back with its passes). */
  private metrics(
    packs: Packed[],
    loss: number,
    logps: Float32Array[],
    entropies: Float32Array[],
    refLogps: Float32Array[],
  ): GrpoLossMetrics {
    const { epsilonLow, epsilonHigh } = this.options.loss;
    let n = 0;
    let kl = 0;
    let low = 0;
    let high = 0;
    let region = 0;
    let ent = 0;
    packs.forEach((p, k) => {
      const logp = logps[k]!;
      const entropy = entropies[k]!;
      const refLogp = refLogps[k]!;
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
    });
    const t = Math.max(1, n);
    const lengths = packs.flatMap((p) => p.lengths);
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

  /** Adam's state and the reference; the weights are the device copy's (kernelSampling.ts). */
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
    if (this.reference && state.reference) this.reference.writeParams(state.reference);
  }
}
