import '@tensorflow/tfjs-backend-cpu';
import '@tensorflow/tfjs-core/dist/register_all_gradients';
import * as tf from '@tensorflow/tfjs-core';
import { beforeAll, describe, expect, it } from 'vitest';
import type { LossType } from '../../src/rl/config';
import { grpoLoss, grpoLossMetrics } from '../../src/rl/grpoLoss';
import {
  clippedSurrogateLoss,
  type GrpoLossReferenceInputs,
  grpoLossGradientReference,
  grpoLossReference,
  k3,
} from '../../src/rl/grpoLossReference';
import type { GrpoLossOptions } from '../../src/rl/grpoLossTypes';
import { Rng } from '../../src/tasks/random';

beforeAll(async () => {
  await tf.setBackend('cpu');
});

const LOSS_TYPES: LossType[] = ['grpo', 'dapo', 'dr_grpo'];

/** Random padded batch: G outputs of unequal lengths (one empty), values rounded to float32. */
function randomBatch(random: Rng, outputs = 8, width = 7): GrpoLossReferenceInputs {
  const f32 = Math.fround;
  const lengths = Array.from({ length: outputs }, (_, i) =>
    i === outputs - 1 ? 0 : 1 + Math.floor(random.next() * width),
  );
  const logProbs: number[][] = [];
  const oldLogProbs: number[][] = [];
  const refLogProbs: number[][] = [];
  const mask: number[][] = [];
  const entropies: number[][] = [];
  for (let i = 0; i < outputs; i++) {
    const row = Array.from({ length: width }, () => f32(Math.log(0.05 + 0.9 * random.next())));
    logProbs.push(row);
    // Old log-probs within ±0.8: ratios from ~0.45 to ~2.2, inside and outside the clip range.
    oldLogProbs.push(row.map((v) => f32(v + 1.6 * (random.next() - 0.5))));
    refLogProbs.push(row.map((v) => f32(v + 0.6 * (random.next() - 0.5))));
    mask.push(Array.from({ length: width }, (_, t) => (t < (lengths[i] ?? 0) ? 1 : 0)));
    entropies.push(Array.from({ length: width }, () => f32(2 * random.next())));
  }
  // Alternating signs, so both clip sides occur in every batch.
  const advantages = Array.from({ length: outputs }, (_, i) =>
    f32((i % 2 === 0 ? 1 : -1) * (0.1 + Math.abs(random.normal()))),
  );
  return { logProbs, oldLogProbs, refLogProbs, advantages, mask, entropies };
}

/** Independent hand computation: piecewise clipping, ragged token lists, explicit aggregation. */
function handLoss(inputs: GrpoLossReferenceInputs, options: GrpoLossOptions): number {
  const perOutput: number[][] = inputs.logProbs.map((row, i) => {
    const tokens: number[] = [];
    const advantage = inputs.advantages[i] ?? 0;
    row.forEach((logProb, t) => {
      if ((inputs.mask[i]?.[t] ?? 0) === 0) return;
      const old = inputs.oldLogProbs?.[i]?.[t] ?? logProb;
      const ratio = Math.exp(logProb - old);
      // Â ≥ 0: the ratio is capped above; Â < 0: floored below.
      const surrogate =
        advantage >= 0
          ? advantage * Math.min(ratio, 1 + options.epsilonHigh)
          : advantage * Math.max(ratio, 1 - options.epsilonLow);
      const ref = inputs.refLogProbs?.[i]?.[t] ?? logProb;
      const kl = Math.exp(ref - logProb) - (ref - logProb) - 1;
      tokens.push(-surrogate + options.beta * kl);
    });
    return tokens;
  });
  const sum = (xs: number[]) => xs.reduce((a, b) => a + b, 0);
  const allTokens = perOutput.flat();
  const G = perOutput.length;
  const maxLen = inputs.logProbs[0]?.length ?? 0;
  switch (options.lossType) {
    case 'grpo':
      return sum(perOutput.map((tokens) => sum(tokens) / Math.max(tokens.length, 1))) / G;
    case 'dapo':
      return sum(allTokens) / allTokens.length;
    case 'dr_grpo':
      return sum(allTokens) / (G * maxLen);
  }
}

function toTensors(inputs: GrpoLossReferenceInputs) {
  return {
    logProbs: tf.tensor2d(inputs.logProbs as number[][]),
    oldLogProbs: tf.tensor2d(inputs.oldLogProbs as number[][]),
    refLogProbs: tf.tensor2d(inputs.refLogProbs as number[][]),
    advantages: tf.tensor1d(inputs.advantages as number[]),
    mask: tf.tensor2d(inputs.mask as number[][]),
    entropies: tf.tensor2d(inputs.entropies as number[][]),
  };
}

function maxAbsDiff(a: number[][], b: number[][]): number {
  let worst = 0;
  a.forEach((row, i) => {
    row.forEach((v, t) => {
      worst = Math.max(worst, Math.abs(v - (b[i]?.[t] ?? Number.NaN)));
    });
  });
  return worst;
}

describe('GRPO loss: per-token pieces', () => {
  it('k3 matches exp(Δ) − Δ − 1 and is ≥ 0', () => {
    const random = new Rng(3);
    for (let n = 0; n < 50; n++) {
      const delta = 4 * (random.next() - 0.5);
      expect(k3(delta)).toBeCloseTo(Math.exp(delta) - delta - 1, 14);
      expect(k3(delta)).toBeGreaterThanOrEqual(0);
    }
    expect(k3(0)).toBe(0);
  });

  it('clips the surrogate at ratios inside and outside the range, both advantage signs', () => {
    const cases: [ratio: number, advantage: number, expected: number][] = [
      [1.1, 2, -2.2], // inside: plain ρ·Â
      [0.9, -2, 1.8],
      [1.5, 1, -1.2], // Â > 0, ρ above range: capped at 1 + ε
      [1.5, -1, 1.5], // Â < 0, ρ above range: no cap (pessimistic bound keeps ρ)
      [0.5, 1, -0.5], // Â > 0, ρ below range: keeps ρ
      [0.5, -1, 0.8], // Â < 0, ρ below range: floored at 1 − ε
    ];
    for (const [ratio, advantage, expected] of cases) {
      expect(clippedSurrogateLoss(ratio, advantage, 0.2, 0.2)).toBeCloseTo(expected, 14);
    }
    // Asymmetric clip (DAPO's clip-higher): ε_high = 0.28.
    expect(clippedSurrogateLoss(1.5, 1, 0.2, 0.28)).toBeCloseTo(-1.28, 14);
  });
});

describe('GRPO loss: reference and tfjs', () => {
  for (const lossType of LOSS_TYPES) {
    for (const beta of [0, 0.04]) {
      it(`${lossType}, beta ${beta}: reference = hand computation = tfjs, metrics agree`, async () => {
        const random = new Rng(100 + LOSS_TYPES.indexOf(lossType) * 10 + beta * 100);
        const inputs = randomBatch(random);
        const options: GrpoLossOptions = { lossType, epsilonLow: 0.2, epsilonHigh: 0.28, beta };
        const reference = grpoLossReference(inputs, options);
        expect(reference.loss).toBeCloseTo(handLoss(inputs, options), 12);

        const tensors = toTensors(inputs);
        const loss = grpoLoss(tensors, options);
        expect((await loss.data())[0]).toBeCloseTo(reference.loss, 5);
        const metrics = await grpoLossMetrics(tensors, options);
        expect(metrics.loss).toBeCloseTo(reference.loss, 5);
        expect(metrics.kl).toBeCloseTo(reference.metrics.kl ?? Number.NaN, 5);
        expect(metrics.entropy).toBeCloseTo(reference.metrics.entropy ?? Number.NaN, 5);
        for (const key of ['clipRatioLow', 'clipRatioHigh', 'clipRatioRegion'] as const) {
          expect(metrics[key]).toBeCloseTo(reference.metrics[key], 6);
        }
        expect(metrics.meanLength).toBeCloseTo(reference.metrics.meanLength, 6);
        expect(metrics.minLength).toBe(0);
        expect(metrics.maxLength).toBe(reference.metrics.maxLength);
        // The random ratios must actually exercise clipping on both sides.
        expect(reference.metrics.clipRatioLow).toBeGreaterThan(0);
        expect(reference.metrics.clipRatioHigh).toBeGreaterThan(0);
        tf.dispose([loss, ...Object.values(tensors)]);
      });
    }
  }

  it('clip ratio metrics count the hand-defined token sets', () => {
    const random = new Rng(7);
    const inputs = randomBatch(random, 5, 6);
    const { metrics } = grpoLossReference(inputs, {
      lossType: 'dapo',
      epsilonLow: 0.2,
      epsilonHigh: 0.2,
      beta: 0,
    });
    let tokens = 0;
    let low = 0;
    let high = 0;
    inputs.logProbs.forEach((row, i) => {
      row.forEach((logProb, t) => {
        if (inputs.mask[i]?.[t] !== 1) return;
        tokens++;
        const ratio = Math.exp(logProb - (inputs.oldLogProbs?.[i]?.[t] ?? 0));
        const advantage = inputs.advantages[i] ?? 0;
        if (ratio < 0.8 && advantage < 0) low++;
        if (ratio > 1.2 && advantage > 0) high++;
      });
    });
    expect(metrics.clipRatioLow).toBeCloseTo(low / tokens, 14);
    expect(metrics.clipRatioHigh).toBeCloseTo(high / tokens, 14);
    expect(metrics.clipRatioRegion).toBeCloseTo((low + high) / tokens, 14);
  });

  it('honours batch-level normalizers for gradient accumulation', () => {
    const random = new Rng(8);
    const inputs = randomBatch(random, 4, 5);
    const base = { epsilonLow: 0.2, epsilonHigh: 0.2, beta: 0.04 };
    const plain = grpoLossReference(inputs, { ...base, lossType: 'dapo' }).loss;
    const tokens = inputs.mask.flat().reduce((a, b) => a + b, 0);
    const doubled = grpoLossReference(inputs, {
      ...base,
      lossType: 'dapo',
      normalizer: { tokens: 2 * tokens },
    }).loss;
    expect(doubled).toBeCloseTo(plain / 2, 12);
    const drMax = grpoLossReference(inputs, {
      ...base,
      lossType: 'dr_grpo',
      normalizer: { maxLength: 10 },
    }).loss;
    const drPlain = grpoLossReference(inputs, { ...base, lossType: 'dr_grpo' }).loss;
    expect(drMax).toBeCloseTo((drPlain * 5) / 10, 12);
  });
});

describe('GRPO loss: gradients', () => {
  for (const lossType of LOSS_TYPES) {
    it(`${lossType}: tfjs gradient = hand-derived gradient = finite differences`, () => {
      const random = new Rng(200 + LOSS_TYPES.indexOf(lossType));
      const inputs = randomBatch(random);
      const options: GrpoLossOptions = { lossType, epsilonLow: 0.2, epsilonHigh: 0.28, beta: 0.04 };
      const analytic = grpoLossGradientReference(inputs, options);

      // Central differences on the float64 reference.
      const eps = 1e-6;
      const numeric = inputs.logProbs.map((row, i) =>
        row.map((_, t) => {
          const shifted = (delta: number) =>
            grpoLossReference(
              {
                ...inputs,
                logProbs: inputs.logProbs.map((r, ii) =>
                  r.map((v, tt) => (ii === i && tt === t ? v + delta : v)),
                ),
              },
              options,
            ).loss;
          return (shifted(eps) - shifted(-eps)) / (2 * eps);
        }),
      );
      expect(maxAbsDiff(analytic, numeric)).toBeLessThan(1e-7);

      const tensors = toTensors(inputs);
      const { oldLogProbs, refLogProbs, advantages, mask } = tensors;
      const gradient = tf.grad((logProbs: tf.Tensor) =>
        grpoLoss(
          { logProbs: logProbs as tf.Tensor2D, oldLogProbs, refLogProbs, advantages, mask },
          options,
        ),
      )(tensors.logProbs);
      expect(maxAbsDiff(gradient.arraySync() as number[][], analytic)).toBeLessThan(1e-6);
      // Padding gets no gradient; clipped tokens get only the KL part.
      const lastRow = (gradient.arraySync() as number[][])[inputs.logProbs.length - 1] ?? [];
      expect(lastRow.map((v) => v + 0)).toEqual(new Array(inputs.logProbs[0]?.length).fill(0));
      tf.dispose([gradient, ...Object.values(tensors)]);
    });
  }

  it('without old log-probs the ratio is 1 but still carries the gradient (numIterations 1)', () => {
    const random = new Rng(9);
    const { oldLogProbs: _unused, ...inputs } = randomBatch(random);
    const options: GrpoLossOptions = {
      lossType: 'grpo',
      epsilonLow: 0.2,
      epsilonHigh: 0.2,
      beta: 0.04,
    };
    const analytic = grpoLossGradientReference(inputs, options);
    const tensors = toTensors({ ...inputs, oldLogProbs: inputs.logProbs });
    const { refLogProbs, advantages, mask } = tensors;
    const gradient = tf.grad((logProbs: tf.Tensor) =>
      grpoLoss({ logProbs: logProbs as tf.Tensor2D, refLogProbs, advantages, mask }, options),
    )(tensors.logProbs);
    expect(maxAbsDiff(gradient.arraySync() as number[][], analytic)).toBeLessThan(1e-6);
    // With ρ = 1 the surrogate part of the loss is −mean Â (grpo aggregation).
    const reference = grpoLossReference(
      { ...inputs, refLogProbs: undefined },
      {
        ...options,
        beta: 0,
      },
    );
    const lengths = inputs.mask.map((row) => row.reduce((a, b) => a + b, 0));
    const expected =
      -inputs.advantages.reduce((sum, a, i) => sum + ((lengths[i] ?? 0) > 0 ? a : 0), 0) /
      inputs.advantages.length;
    expect(reference.loss).toBeCloseTo(expected, 6);
    tf.dispose([gradient, ...Object.values(tensors)]);
  });
});
