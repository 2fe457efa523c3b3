// Shared shapes of the GRPO loss: its options and the metrics it reports (TRL's names in
// comments). Used by the plain-TypeScript reference and the tfjs implementation.

/**
 * How per-token losses become one number (TRL's `loss_type`):
 * - `grpo`: mean over the tokens of each output, then mean over outputs;
 * - `dapo`: sum over all tokens of the batch / number of tokens (TRL's default);
 * - `dr_grpo`: sum over all tokens / (number of outputs · max completion length).
 */
export type LossType = 'grpo' | 'dapo' | 'dr_grpo';

export interface GrpoLossOptions {
  lossType: LossType;
  /** Clip range of the ratio ρ: [1 − epsilonLow, 1 + epsilonHigh]. */
  epsilonLow: number;
  epsilonHigh: number;
  /** Weight of the k3 KL term; 0 skips it (and the reference log-probs may be omitted). */
  beta: number;
  /**
   * Totals over the whole batch, for gradient accumulation over micro-batches (TRL's
   * `num_items_in_batch`). Defaults are those of the inputs passed:
   * tokens = sum of the mask (dapo), outputs = G (grpo, dr_grpo),
   * maxLength = the padded width L (dr_grpo; pass the config's max tokens to match TRL,
   * which divides by `max_completion_length`).
   */
  normalizer?: { tokens?: number; outputs?: number; maxLength?: number };
}

export interface GrpoLossMetrics {
  loss: number;
  /** Masked token mean of k3 (TRL `kl`); null without reference log-probs. */
  kl: number | null;
  /** Fraction of tokens with ρ < 1 − ε_low and Â < 0 (TRL `clip_ratio/low_mean`). */
  clipRatioLow: number;
  /** Fraction of tokens with ρ > 1 + ε_high and Â > 0 (TRL `clip_ratio/high_mean`). */
  clipRatioHigh: number;
  /** Either of the two (TRL `clip_ratio/region_mean`). */
  clipRatioRegion: number;
  /** Masked token mean of the per-token entropies (TRL `entropy`); null when not given. */
  entropy: number | null;
  /** Completion lengths (mask sums), TRL `completions/mean_length`, `min_length`, `max_length`. */
  meanLength: number;
  minLength: number;
  maxLength: number;
}
