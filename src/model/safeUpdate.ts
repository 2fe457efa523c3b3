// The guarded optimizer step, the one way gradients reach weights (warm start and GRPO):
// gradients are checked for NaN/Inf and clipped by global norm first. A non-finite loss or
// gradient skips the step (weights and optimizer state untouched) and says why, instead of
// silently poisoning the model.

import * as tf from '@tensorflow/tfjs-core';

export type SkipReason = 'non_finite_loss' | 'non_finite_gradient';

/**
 * What the guard needs of an optimizer: the lab's AdamW, or any tf.Optimizer (whose type asks
 * for variables where tfjs itself passes plain gradient tensors, as minimize does).
 */
export interface GradientApplier {
  applyGradients(grads: VariableMap): void;
}
type VariableMap = { [name: string]: tf.Variable };

export interface GradientCheck {
  /** Global L2 norm over all gradients (NaN/Inf when some gradient is). */
  globalNorm: number;
  /** Names of the variables whose gradient holds a NaN or Inf. */
  nonFiniteVariables: string[];
}

export interface UpdateReport {
  applied: boolean;
  skipReason: SkipReason | null;
  loss: number;
  /** Global gradient norm before clipping. */
  gradNorm: number;
  /** The gradients were scaled down to maxGradNorm. */
  clipped: boolean;
  nonFiniteVariables: string[];
}

/**
 * Global norm and finiteness of `grads`, read back in one transfer. The norm is computed as
 * max|g| · sqrt(Σ (g / max|g|)²) so large-but-finite float32 gradients do not overflow.
 */
export async function inspectGradients(grads: tf.NamedTensorMap): Promise<GradientCheck> {
  const names = Object.keys(grads);
  if (names.length === 0) return { globalNorm: 0, nonFiniteVariables: [] };
  const packed = tf.tidy(() => {
    const tensors = names.map((name) => grads[name] as tf.Tensor);
    // x·0 is 0 for finite x and NaN for NaN/Inf: a finiteness test every backend has.
    const finiteFlags = tensors.map((g) => tf.sum(tf.mul(g, 0)));
    const largest = tf.max(stackFew(tensors.map((g) => tf.max(tf.abs(g)))));
    const scale = tf.maximum(largest, 1e-30);
    const scaledSquares = tensors.map((g) => tf.sum(tf.square(tf.div(g, scale))));
    const globalNorm = tf.mul(largest, tf.sqrt(addPairwise(scaledSquares)));
    return stackFew([globalNorm, ...finiteFlags]);
  });
  const values = await packed.data();
  packed.dispose();
  return {
    globalNorm: values[0] ?? Number.NaN,
    nonFiniteVariables: names.filter((_, index) => !Number.isFinite(values[index + 1] ?? 0)),
  };
}

// WebGPU binds at most 8 storage buffers per shader: an addN or stack over a model's ~30
// gradients silently returns zeros there, so sums and stacks go a few inputs at a time.
const FEW = 4;

function addPairwise(tensors: tf.Tensor[]): tf.Tensor {
  let level = tensors;
  while (level.length > 1) {
    const next: tf.Tensor[] = [];
    for (let i = 0; i < level.length; i += 2) {
      next.push(i + 1 < level.length ? tf.add(level[i]!, level[i + 1]!) : level[i]!);
    }
    level = next;
  }
  return level[0] ?? tf.scalar(0);
}

/** tf.stack of scalars, FEW at a time. */
function stackFew(scalars: tf.Tensor[]): tf.Tensor1D {
  let level: tf.Tensor[] = scalars.map((x) => tf.reshape(x, [1]));
  while (level.length > 1) {
    const next: tf.Tensor[] = [];
    for (let i = 0; i < level.length; i += FEW) next.push(tf.concat(level.slice(i, i + FEW)));
    level = next;
  }
  return (level[0] ?? tf.zeros([0])) as tf.Tensor1D;
}

/**
 * Gradients scaled by min(1, maxNorm / (globalNorm + 1e-6)), as torch's clip_grad_norm_.
 * Returns new tensors (the caller disposes them and its own). maxNorm 0 or Infinity: no clip.
 */
export function clipByGlobalNorm(
  grads: tf.NamedTensorMap,
  maxNorm: number,
  globalNorm: number,
): { grads: tf.NamedTensorMap; clipped: boolean } {
  const coefficient = maxNorm > 0 ? maxNorm / (globalNorm + 1e-6) : Number.POSITIVE_INFINITY;
  const clipped = coefficient < 1;
  const result: tf.NamedTensorMap = {};
  for (const [name, gradient] of Object.entries(grads)) {
    result[name] = clipped ? tf.mul(gradient, coefficient) : tf.clone(gradient);
  }
  return { grads: result, clipped };
}

/**
 * Checks, clips and applies precomputed gradients (e.g. accumulated over micro-batches).
 * Does not dispose `grads`.
 */
export async function applyGradientsSafely(
  optimizer: GradientApplier,
  grads: tf.NamedTensorMap,
  loss: number,
  maxGradNorm: number,
): Promise<UpdateReport> {
  const check = await inspectGradients(grads);
  const skipReason: SkipReason | null = !Number.isFinite(loss)
    ? 'non_finite_loss'
    : check.nonFiniteVariables.length > 0 || !Number.isFinite(check.globalNorm)
      ? 'non_finite_gradient'
      : null;
  const report = {
    loss,
    gradNorm: check.globalNorm,
    nonFiniteVariables: check.nonFiniteVariables,
  };
  if (skipReason) return { ...report, applied: false, skipReason, clipped: false };
  const clip = clipByGlobalNorm(grads, maxGradNorm, check.globalNorm);
  optimizer.applyGradients(clip.grads as VariableMap);
  tf.dispose(clip.grads);
  return { ...report, applied: true, skipReason: null, clipped: clip.clipped };
}

/**
 * One guarded step: gradients of `lossFn` w.r.t. `variables` (all trainable ones when
 * omitted), checked, clipped to `maxGradNorm`, applied. Disposes every tensor it creates.
 */
export async function guardedUpdate(
  optimizer: GradientApplier,
  lossFn: () => tf.Scalar,
  options: { maxGradNorm: number; variables?: tf.Variable[] },
): Promise<UpdateReport> {
  const { value, grads } = tf.variableGrads(lossFn, options.variables);
  try {
    const loss = (await value.data())[0] ?? Number.NaN;
    return await applyGradientsSafely(optimizer, grads, loss, options.maxGradNorm);
  } finally {
    value.dispose();
    tf.dispose(grads);
  }
}
