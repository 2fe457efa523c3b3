// Plain-TypeScript (float64) references the WGSL kernels are tested against.
import { clippedSurrogateLoss, k3 } from '../../rl/grpoLossReference';

export interface TokenLogprobResult {
  logp: Float64Array;
  entropy: Float64Array;
}

/** logits [rows, vocab] row-major, targets [rows]: log-softmax picked at the target, and entropy. */
export function tokenLogprobReference(
  logits: ArrayLike<number>,
  targets: ArrayLike<number>,
  rows: number,
  vocab: number,
): TokenLogprobResult {
  const logp = new Float64Array(rows);
  const entropy = new Float64Array(rows);
  for (let r = 0; r < rows; r++) {
    const base = r * vocab;
    let max = Number.NEGATIVE_INFINITY;
    for (let j = 0; j < vocab; j++) max = Math.max(max, logits[base + j] ?? 0);
    let sum = 0;
    let weighted = 0;
    for (let j = 0; j < vocab; j++) {
      const z = (logits[base + j] ?? 0) - max;
      const e = Math.exp(z);
      sum += e;
      weighted += e * z;
    }
    const logSum = Math.log(sum);
    logp[r] = (logits[base + (targets[r] ?? 0)] ?? 0) - max - logSum;
    entropy[r] = logSum - weighted / sum;
  }
  return { logp, entropy };
}

export interface GrpoTokenInputs {
  logp: ArrayLike<number>;
  oldLogp: ArrayLike<number>;
  refLogp: ArrayLike<number>;
  /** One advantage per token (the output's advantage broadcast over its tokens). */
  advantage: ArrayLike<number>;
  mask: ArrayLike<number>;
}

export interface GrpoTokenOptions {
  epsilonLow: number;
  epsilonHigh: number;
  beta: number;
}

/** Per-token GRPO loss times the mask, from grpoLossReference's own per-token pieces. */
export function grpoTokenLossReference(
  inputs: GrpoTokenInputs,
  options: GrpoTokenOptions,
): Float64Array {
  const n = inputs.logp.length;
  const loss = new Float64Array(n);
  for (let i = 0; i < n; i++) {
    const weight = inputs.mask[i] ?? 0;
    if (weight === 0) continue; // padding may hold garbage log-probs; its loss is exactly 0
    const logp = inputs.logp[i] ?? 0;
    const ratio = Math.exp(logp - (inputs.oldLogp[i] ?? 0));
    let tokenLoss = clippedSurrogateLoss(
      ratio,
      inputs.advantage[i] ?? 0,
      options.epsilonLow,
      options.epsilonHigh,
    );
    if (options.beta !== 0) tokenLoss += options.beta * k3((inputs.refLogp[i] ?? 0) - logp);
    loss[i] = tokenLoss * weight;
  }
  return loss;
}
