// The GRPO loss in plain TypeScript (float64): the reference the tfjs version and any fused
// WGSL kernel are tested against, with its hand-derived gradient w.r.t. the current log-probs.
//
//   ρ = exp(logπ_θ − logπ_old)
//   ℓ = −min(ρ·Â, clip(ρ, 1 − ε_low, 1 + ε_high)·Â) + β·k3,   k3 = exp(Δ) − Δ − 1,
//   Δ = logπ_ref − logπ_θ
// aggregated by `lossType` over the mask (see GrpoLossOptions).

import type { GrpoLossMetrics, GrpoLossOptions } from './grpoLossTypes';

export interface GrpoLossReferenceInputs {
  /** [G][L] log-probs of the sampled tokens under the current policy. */
  logProbs: readonly (readonly number[])[];
  /** [G][L] under the sampling policy; omitted = equal to logProbs (numIterations = 1). */
  oldLogProbs?: readonly (readonly number[])[];
  /** [G][L] under the frozen reference; needed when beta > 0. */
  refLogProbs?: readonly (readonly number[])[];
  /** [G] one advantage per output. */
  advantages: readonly number[];
  /** [G][L] 1 for completion tokens, 0 for padding. */
  mask: readonly (readonly number[])[];
  /** [G][L] per-token entropies, for the metric only. */
  entropies?: readonly (readonly number[])[];
}

export interface GrpoLossReferenceResult {
  loss: number;
  /** [G][L] per-token loss before masking and aggregation. */
  perTokenLoss: number[][];
  metrics: GrpoLossMetrics;
}

/** k3 estimator of KL(π_θ ‖ π_ref) for one token, Δ = logπ_ref − logπ_θ. Always ≥ 0. */
export function k3(delta: number): number {
  return Math.exp(delta) - delta - 1;
}

/** −min(ρ·Â, clip(ρ, 1 − ε_low, 1 + ε_high)·Â) for one token. */
export function clippedSurrogateLoss(
  ratio: number,
  advantage: number,
  epsilonLow: number,
  epsilonHigh: number,
): number {
  const clippedRatio = Math.min(Math.max(ratio, 1 - epsilonLow), 1 + epsilonHigh);
  return -Math.min(ratio * advantage, clippedRatio * advantage);
}

/** True where the clipped branch is taken and the token gets no policy gradient. */
export function isClippedLow(ratio: number, advantage: number, epsilonLow: number): boolean {
  return ratio < 1 - epsilonLow && advantage < 0;
}
export function isClippedHigh(ratio: number, advantage: number, epsilonHigh: number): boolean {
  return ratio > 1 + epsilonHigh && advantage > 0;
}

export function grpoLossReference(
  inputs: GrpoLossReferenceInputs,
  options: GrpoLossOptions,
): GrpoLossReferenceResult {
  const { logProbs, advantages, mask } = inputs;
  checkShapes(inputs, options);
  const perTokenLoss: number[][] = [];
  let klSum = 0;
  let lowSum = 0;
  let highSum = 0;
  let regionSum = 0;
  let entropySum = 0;
  for (let i = 0; i < logProbs.length; i++) {
    const row: number[] = [];
    const advantage = advantages[i] ?? 0;
    for (let t = 0; t < (logProbs[i]?.length ?? 0); t++) {
      const logProb = at(logProbs, i, t);
      const ratio = Math.exp(
        logProb - (inputs.oldLogProbs ? at(inputs.oldLogProbs, i, t) : logProb),
      );
      let tokenLoss = clippedSurrogateLoss(
        ratio,
        advantage,
        options.epsilonLow,
        options.epsilonHigh,
      );
      const weight = at(mask, i, t);
      if (inputs.refLogProbs) {
        const kl = k3(at(inputs.refLogProbs, i, t) - logProb);
        klSum += kl * weight;
        if (options.beta !== 0) tokenLoss += options.beta * kl;
      }
      const low = isClippedLow(ratio, advantage, options.epsilonLow);
      const high = isClippedHigh(ratio, advantage, options.epsilonHigh);
      lowSum += low ? weight : 0;
      highSum += high ? weight : 0;
      regionSum += low || high ? weight : 0;
      if (inputs.entropies) entropySum += at(inputs.entropies, i, t) * weight;
      row.push(tokenLoss);
    }
    perTokenLoss.push(row);
  }
  const weights = aggregationWeights(mask, options);
  let loss = 0;
  for (let i = 0; i < perTokenLoss.length; i++) {
    for (let t = 0; t < (perTokenLoss[i]?.length ?? 0); t++) {
      loss += at(perTokenLoss, i, t) * at(weights, i, t);
    }
  }
  const lengths = mask.map((row) => row.reduce((sum, value) => sum + value, 0));
  const tokens = Math.max(
    lengths.reduce((sum, value) => sum + value, 0),
    1,
  );
  return {
    loss,
    perTokenLoss,
    metrics: {
      loss,
      kl: inputs.refLogProbs ? klSum / tokens : null,
      clipRatioLow: lowSum / tokens,
      clipRatioHigh: highSum / tokens,
      clipRatioRegion: regionSum / tokens,
      entropy: inputs.entropies ? entropySum / tokens : null,
      meanLength: lengths.length === 0 ? 0 : lengths.reduce((a, b) => a + b, 0) / lengths.length,
      minLength: lengths.length === 0 ? 0 : Math.min(...lengths),
      maxLength: lengths.length === 0 ? 0 : Math.max(...lengths),
    },
  };
}

/**
 * The weight of each token's loss in the aggregate, so loss = Σ w_{i,t}·ℓ_{i,t}:
 * grpo: m/(max(len_i, 1)·G); dapo: m/max(Σ mask, 1); dr_grpo: m/(G·L).
 */
export function aggregationWeights(
  mask: readonly (readonly number[])[],
  options: Pick<GrpoLossOptions, 'lossType' | 'normalizer'>,
): number[][] {
  const outputs = options.normalizer?.outputs ?? mask.length;
  const width = options.normalizer?.maxLength ?? Math.max(0, ...mask.map((row) => row.length));
  const totalTokens =
    options.normalizer?.tokens ??
    Math.max(
      mask.reduce((sum, row) => sum + row.reduce((a, b) => a + b, 0), 0),
      1,
    );
  return mask.map((row) => {
    const length = Math.max(
      row.reduce((a, b) => a + b, 0),
      1,
    );
    const divisor =
      options.lossType === 'grpo'
        ? length * outputs
        : options.lossType === 'dapo'
          ? totalTokens
          : outputs * width;
    return row.map((value) => value / divisor);
  });
}

/**
 * Hand-derived ∂loss/∂logπ_θ (old and ref log-probs held fixed):
 * w_{i,t}·( −Â_i·ρ_{i,t}·[not clipped] + β·(1 − exp(Δ_{i,t})) ),
 * where "clipped" means the clipped branch of the min is taken (ρ > 1+ε_high with Â > 0, or
 * ρ < 1−ε_low with Â < 0). With oldLogProbs omitted, ρ = 1 but still carries the gradient.
 */
export function grpoLossGradientReference(
  inputs: GrpoLossReferenceInputs,
  options: GrpoLossOptions,
): number[][] {
  checkShapes(inputs, options);
  const weights = aggregationWeights(inputs.mask, options);
  return inputs.logProbs.map((row, i) =>
    row.map((logProb, t) => {
      const advantage = inputs.advantages[i] ?? 0;
      const ratio = Math.exp(
        logProb - (inputs.oldLogProbs ? at(inputs.oldLogProbs, i, t) : logProb),
      );
      const clipped =
        isClippedLow(ratio, advantage, options.epsilonLow) ||
        isClippedHigh(ratio, advantage, options.epsilonHigh);
      let gradient = clipped ? 0 : -advantage * ratio;
      if (options.beta !== 0 && inputs.refLogProbs) {
        gradient += options.beta * (1 - Math.exp(at(inputs.refLogProbs, i, t) - logProb));
      }
      return gradient * at(weights, i, t);
    }),
  );
}

function at(matrix: readonly (readonly number[])[], i: number, t: number): number {
  const value = matrix[i]?.[t];
  if (value === undefined) throw new Error(`grpoLossReference: no value at [${i}][${t}]`);
  return value;
}

function checkShapes(inputs: GrpoLossReferenceInputs, options: GrpoLossOptions): void {
  const rows = inputs.logProbs.length;
  const width = inputs.logProbs[0]?.length ?? 0;
  const named: [string, readonly (readonly number[])[] | undefined][] = [
    ['oldLogProbs', inputs.oldLogProbs],
    ['refLogProbs', inputs.refLogProbs],
    ['mask', inputs.mask],
    ['entropies', inputs.entropies],
  ];
  for (const [name, matrix] of [['logProbs', inputs.logProbs], ...named] as const) {
    if (!matrix) continue;
    if (matrix.length !== rows || matrix.some((row) => row.length !== width)) {
      throw new Error(`grpoLossReference: ${name} must be [${rows}][${width}]`);
    }
  }
  if (inputs.advantages.length !== rows) {
    throw new Error(`grpoLossReference: advantages must have ${rows} entries`);
  }
  if (options.beta !== 0 && !inputs.refLogProbs) {
    throw new Error('grpoLossReference: beta > 0 needs refLogProbs');
  }
}

/** The mean of several iterations' metrics; a metric some iteration lacks (null) stays null. */
export function averageLossMetrics(all: readonly GrpoLossMetrics[]): GrpoLossMetrics {
  const mean = (pick: (m: GrpoLossMetrics) => number) =>
    all.reduce((sum, m) => sum + pick(m), 0) / Math.max(1, all.length);
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
