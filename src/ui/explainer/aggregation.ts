// One group under the three loss aggregations (grpo, dapo, dr_grpo): each token's weight and
// contribution and the loss each gives, from the engine's own reference loss
// (rl/grpoLossReference through api.ts), so the comparison is the maths the trainer uses.
import {
  aggregationWeights,
  type GrpoConfig,
  grpoLossOptions,
  grpoLossReference,
  type LossType,
  type Role,
} from '../../engine/api';

export const LOSS_TYPES: readonly LossType[] = ['grpo', 'dapo', 'dr_grpo'];

export interface AggregatedOutput {
  /** Completion tokens of this member. */
  tokens: number;
  advantage: number;
  /** The weight of each of its tokens in the loss (all equal within one member). */
  tokenWeight: number;
  /** One token's contribution: weight × per-token loss. */
  tokenContribution: number;
  /** All its tokens together. */
  total: number;
}

export interface Aggregation {
  lossType: LossType;
  /** What each token's loss is divided by, in words. */
  divisor: string;
  outputs: AggregatedOutput[];
  loss: number;
}

/**
 * The group's loss under each aggregation at ρ = 1 (the first update on fresh samples), where
 * every token of member i has ℓ = −Â_i; the KL term is left out (per-token log-probs are not
 * kept with the samples). `lengths` are the members' completion tokens.
 */
export function compareAggregations(
  advantages: readonly number[],
  lengths: readonly number[],
  grpo: GrpoConfig,
  role: Role,
): Aggregation[] {
  const width = Math.max(1, ...lengths);
  const mask = lengths.map((length) =>
    Array.from({ length: width }, (_, t) => (t < length ? 1 : 0)),
  );
  const logProbs = mask.map((row) => row.map(() => 0));
  const maxLength = grpoLossOptions(grpo, role).normalizer?.maxLength ?? width;
  const totalTokens = lengths.reduce((a, b) => a + b, 0);
  const G = lengths.length;
  return LOSS_TYPES.map((lossType) => {
    const options = {
      lossType,
      epsilonLow: grpo.epsilonLow,
      epsilonHigh: grpo.epsilonHigh,
      beta: 0,
      normalizer: { maxLength },
    };
    const result = grpoLossReference({ logProbs, advantages: [...advantages], mask }, options);
    const weights = aggregationWeights(mask, options);
    const outputs = lengths.map((tokens, i) => {
      const tokenWeight = tokens > 0 ? (weights[i]?.[0] ?? 0) : 0;
      const tokenLoss = result.perTokenLoss[i]?.[0] ?? 0;
      return {
        tokens,
        advantage: advantages[i] ?? 0,
        tokenWeight,
        tokenContribution: tokenWeight * tokenLoss,
        total: tokenWeight * tokenLoss * tokens,
      };
    });
    const divisor =
      lossType === 'grpo'
        ? `its own length × G (G = ${G})`
        : lossType === 'dapo'
          ? `all the group’s tokens (${totalTokens})`
          : `G × the length cap (${G} × ${maxLength})`;
    return { lossType, divisor, outputs, loss: result.loss };
  });
}
