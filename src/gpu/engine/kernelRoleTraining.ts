// A role's GRPO update on the kernels' one model — a Hub base's role's adapter, the lab's
// GPT-2's adapter, or the lab's GPT-2's own weights in full (kernelRoles.ts holds the base and
// what the role trains on the device): per iteration the device's log-probs of the batch (and
// its entropies, for the metrics), the loss and ∂loss/∂logπ on the host by the lab's reference
// formula (rl/grpoLossReference.ts, float64), the device's backward of Σ dlogp·logπ to the
// trained parameters and their guarded AdamW step, in micro-batches within the run's memory
// budget; the KL reference is the base alone (a zero-B policy) or, trained in full, the frozen
// reference model's copy, read once per update. Afterwards the adapter or the weights, and
// Adam's moments, are written back into tfjs. Null: engine off or a device failure (the caller
// runs the update on tfjs from what tfjs still holds).

import type { AdamWState } from '../../model/adamw';
import type { GPT } from '../../model/gpt';
import { defaultMemoryBudgetBytes } from '../../model/memory';
import type { SkipReason } from '../../model/safeUpdate';
import { isHubModel, type TrainableModel } from '../../model/trainableModel';
import {
  averageLossMetrics,
  grpoLossGradientReference,
  grpoLossReference,
} from '../../rl/grpoLossReference';
import type { GrpoLossMetrics, GrpoLossOptions } from '../../rl/grpoLossTypes';
import type { PolicySequence, RoleTrainerOptions, RoleUpdate } from '../../rl/policyUpdate';
import { kernelEngine, markEngineFailed } from './kernelEngine';
import {
  adamStateOf,
  gptLoraSource,
  gptSource,
  hubSource,
  importAdamState,
  type RoleSource,
  referencePolicy,
  roleIsFresh,
  rolePolicy,
  syncRole,
} from './kernelRoles';
import type { TokenBatch } from './packedBatch';

/** [G][L] completion log-probs out of the device's per-sequence next-token log-probs. */
function completionRows(sequences: readonly PolicySequence[], logp: Float32Array[], L: number) {
  return sequences.map((s, g) =>
    Array.from({ length: L }, (_, j) =>
      j < s.completion.length ? (logp[g]![s.prompt.length - 1 + j] ?? 0) : 0,
    ),
  );
}

/** The loss's inputs for a batch (old log-probs, advantages, mask) without the current ones. */
function lossInputs(sequences: readonly PolicySequence[]) {
  const L = Math.max(1, ...sequences.map((s) => s.completion.length));
  return {
    L,
    batch: {
      sequences: sequences.map((s) => [...s.prompt, ...s.completion]),
      // The loss reads the completion's log-probs only: the head skips the prompt's positions.
      scoredFrom: sequences.map((s) => s.prompt.length - 1),
    } satisfies TokenBatch,
    oldLogProbs: sequences.map((s) =>
      Array.from({ length: L }, (_, j) => (j < s.completion.length ? (s.oldLogProbs[j] ?? 0) : 0)),
    ),
    mask: sequences.map((s) =>
      Array.from({ length: L }, (_, j) => (j < s.completion.length ? 1 : 0)),
    ),
    advantages: sequences.map((s) => s.advantage),
  };
}

/** The device dlogp rows [len − 1] from the host's ∂loss/∂logπ [G][L]. */
function deviceRows(sequences: readonly PolicySequence[], grad: number[][]): Float32Array[] {
  return sequences.map((s, g) => {
    const row = new Float32Array(s.prompt.length + s.completion.length - 1);
    for (let j = 0; j < s.completion.length; j++) row[s.prompt.length - 1 + j] = grad[g]![j]!;
    return row;
  });
}

/** The role a model is on the kernels: a Hub base's role, or the lab's GPT-2 with its adapter or in full. */
function sourceOf(model: TrainableModel, reference: GPT | null): RoleSource | null {
  if (isHubModel(model)) return hubSource(model);
  return model.lora ? gptLoraSource(model) : gptSource(model, false, reference);
}

/**
 * The gradient of one iteration's GRPO loss w.r.t. a role's adapters, computed on the device and
 * read back in PEFT's shapes (the check against tfjs's gradient), with the loss's metrics.
 */
export async function adapterGradientsOnDevice(
  model: TrainableModel,
  options: RoleTrainerOptions,
  loss: GrpoLossOptions,
  sequences: readonly PolicySequence[],
) {
  const source = sourceOf(model, null);
  const policy = await rolePolicy(source);
  if (!source?.lora || !policy)
    throw new Error('the kernels are not on, or the role has no adapter');
  const prepared = lossInputs(sequences);
  const batch = { ...prepared.batch, temperature: options.temperature };
  const ref = loss.beta > 0 ? await referenceRows(source, sequences, batch, prepared.L) : undefined;
  const logp = completionRows(sequences, await policy.logProbs(batch), prepared.L);
  const inputs = { ...prepared, logProbs: logp, ...(ref ? { refLogProbs: ref } : {}) };
  const dlogp = deviceRows(sequences, grpoLossGradientReference(inputs, loss));
  const { grads } = await policy.adapterGradients(batch, dlogp);
  return { grads, metrics: grpoLossReference(inputs, loss).metrics };
}

async function referenceRows(
  source: RoleSource,
  sequences: readonly PolicySequence[],
  batch: TokenBatch,
  L: number,
  maxRows = Number.POSITIVE_INFINITY,
): Promise<number[][]> {
  const reference = await referencePolicy(source);
  if (!reference) throw new Error('the kernels are not on');
  return completionRows(sequences, await reference.logProbs(batch, maxRows), L);
}

/** What a device update needs from RoleTrainer's own state. */
export interface HostOptimizer {
  exportState(): Promise<AdamWState>;
  importState(state: AdamWState): void;
  /** The frozen KL reference (β > 0, full-parameter training; with LoRA the base is it). */
  referenceModel(): GPT | null;
}

/**
 * A role's update on the kernels' one model: a Hub base's role's adapter, the lab's GPT-2's
 * adapter, or (no adapter) its own weights in full. The tfjs optimizer stays Adam's source of
 * truth, as tfjs's variables stay the weights': its moments go to the device when tfjs moved the
 * trained variables without it (a resume, an update on tfjs), and come back after every device
 * update, so a snapshot, a resume and a fall-back to tfjs read the last finished step.
 */
export async function updateOnDevice(
  model: TrainableModel,
  options: RoleTrainerOptions,
  loss: GrpoLossOptions,
  host: HostOptimizer,
  sequences: readonly PolicySequence[],
): Promise<RoleUpdate | null> {
  const source = sourceOf(model, loss.beta > 0 ? host.referenceModel() : null);
  // Too long for the context: tfjs's update says why.
  const longest = Math.max(0, ...sequences.map((s) => s.prompt.length + s.completion.length));
  if (!source || longest > source.contextLength) return null;
  const e = kernelEngine();
  try {
    const policy = await rolePolicy(source);
    if (!policy) return null;
    if (roleIsFresh(source)) importAdamState(policy, source, await host.exportState());
    const update = await updateRoleOnDevice(source, options, loss, sequences);
    if (update) host.importState(await adamStateOf(policy, source));
    return update;
  } catch (error) {
    if (e) markEngineFailed(e, error);
    return null;
  }
}

/** A role's update on the device, or null (engine off, device failure). */
async function updateRoleOnDevice(
  source: RoleSource,
  options: RoleTrainerOptions,
  loss: GrpoLossOptions,
  sequences: readonly PolicySequence[],
): Promise<RoleUpdate | null> {
  const e = kernelEngine();
  if (!e || sequences.length === 0) return null;
  try {
    const policy = await rolePolicy(source);
    if (!policy) return null;
    const prepared = lossInputs(sequences);
    const batch = { ...prepared.batch, temperature: options.temperature };
    // Micro-batches within the run's memory budget (and the device's binding limit), at least
    // one sequence each: a real base's full batch holds gigabytes of activations.
    const longest = Math.max(...batch.sequences.map((s) => s.length));
    const maxRows = policy.rowsPerMicroBatch(
      options.memoryBudgetBytes ?? defaultMemoryBudgetBytes('webgpu'),
      longest,
    );
    const ref =
      loss.beta > 0
        ? await referenceRows(source, sequences, batch, prepared.L, maxRows)
        : undefined;
    const metrics: GrpoLossMetrics[] = [];
    const gradNorms: number[] = [];
    const skipped: SkipReason[] = [];
    let microBatches = 1;
    for (let iteration = 0; iteration < options.numIterations; iteration++) {
      const report = await policy.step(
        batch,
        (logp, entropy) => {
          const inputs = {
            ...prepared,
            logProbs: completionRows(sequences, logp, prepared.L),
            entropies: completionRows(sequences, entropy, prepared.L),
            ...(ref ? { refLogProbs: ref } : {}),
          };
          const result = grpoLossReference(inputs, loss);
          metrics.push(result.metrics);
          return {
            loss: result.loss,
            dlogp: deviceRows(sequences, grpoLossGradientReference(inputs, loss)),
          };
        },
        {
          lr: options.learningRate,
          beta1: 0.9,
          beta2: 0.999,
          eps: 1e-8,
          weightDecay: 0,
          maxGradNorm: options.maxGradNorm,
        },
        maxRows,
      );
      microBatches = report.microBatches;
      gradNorms.push(report.gradNorm);
      if (!report.ok)
        skipped.push(Number.isFinite(report.loss) ? 'non_finite_gradient' : 'non_finite_loss');
    }
    await syncRole(source);
    return {
      metrics: averageLossMetrics(metrics),
      gradNorm: gradNorms.reduce((a, b) => a + b, 0) / Math.max(1, gradNorms.length),
      skipped,
      microBatches,
    };
  } catch (error) {
    markEngineFailed(e, error);
    return null;
  }
}
