// Gradient accumulation over micro-batches changes nothing but memory: the GRPO gradient, the
// optimizer step after it, the warm start's step, and sampled tokens equal the one-pass ones.
// The memory estimate that sizes the micro-batches stays an upper bound of tfjs's real peak.
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import * as tf from '@tensorflow/tfjs-core';
import { beforeAll, describe, expect, it } from 'vitest';
import { initBackend } from '../../src/gpu/backend';
import {
  createModel,
  disposeModel,
  forward,
  type GPT,
  makeConfig,
  maskedLoss,
  readValues,
  trainingBytes,
} from '../../src/model';
import { gptTransformerConfig } from '../../src/model/config';
import { folderSource } from '../../src/model/families/folderSourceNode';
import { hubTransformerConfig } from '../../src/model/families/hubConfig';
import { hubRole } from '../../src/model/families/hubModel';
import { loadHubModel } from '../../src/model/families/load';
import { tokenEntropies, tokenLogProbs } from '../../src/model/logProbs';
import { createLora } from '../../src/model/lora';
import { forwardBytes, packByBudget, samplingBytes } from '../../src/model/memory';
import {
  logitsAtOf,
  type TrainableModel,
  trainableOf,
  trainingBytesOf,
} from '../../src/model/trainableModel';
import type { LossType } from '../../src/rl/config';
import { grpoLoss } from '../../src/rl/grpoLoss';
import { type PolicySequence, RoleTrainer } from '../../src/rl/trainer';
import { KvCacheSampler } from '../../src/rollout/kvSampler';
import { DEFAULT_SFT, runSft } from '../../src/sft';
import { Rng } from '../../src/tasks/random';
import { type FixtureName, fixtureSpec, writeHfCheckpoint } from './hf-fixtures';

const CONFIG = makeConfig('tiny', 29, 'coder', { nEmbd: 16, nLayer: 2, nHead: 2, nCtx: 64 });

beforeAll(async () => {
  await initBackend('cpu');
});

/** Ragged sequences with random advantages and π_old log-probs near (not at) the policy's. */
function randomSequences(seed: number, count: number): PolicySequence[] {
  const prng = new Rng(seed);
  const random = () => prng.next();
  const token = () => 2 + Math.floor(random() * (CONFIG.vocabSize - 2));
  return Array.from({ length: count }, () => {
    const prompt = Array.from({ length: 2 + Math.floor(random() * 9) }, token);
    const completion = Array.from({ length: 1 + Math.floor(random() * 24) }, token);
    return {
      prompt,
      completion,
      oldLogProbs: completion.map(() => -Math.log(CONFIG.vocabSize) + (random() - 0.5) * 0.6),
      advantage: (random() - 0.5) * 3,
    };
  });
}

function trainer(model: GPT, lossType: LossType, budgetBytes: number): RoleTrainer {
  return new RoleTrainer(model, {
    learningRate: 1e-2,
    temperature: 0.8,
    numIterations: 1,
    maxGradNorm: 1,
    loss: { lossType, epsilonLow: 0.2, epsilonHigh: 0.28, beta: 0.04 },
    padId: 0,
    memoryBudgetBytes: budgetBytes,
  });
}

function maxRelativeDiff(a: Float32Array, b: Float32Array): number {
  let scale = 1e-6;
  let worst = 0;
  for (let i = 0; i < a.length; i++) scale = Math.max(scale, Math.abs(a[i]!));
  for (let i = 0; i < a.length; i++) worst = Math.max(worst, Math.abs(a[i]! - b[i]!));
  return worst / scale;
}

/** A budget that fits `rows` of the longest sequence: forces several micro-batches. */
function budgetFor(sequences: PolicySequence[], rows: number): number {
  const width = Math.max(...sequences.map((s) => s.prompt.length + s.completion.length));
  return trainingBytes(gptTransformerConfig(CONFIG), rows, width);
}

describe('micro-batched GRPO update', () => {
  for (const lossType of ['grpo', 'dapo', 'dr_grpo'] as const) {
    it(`${lossType}: the accumulated gradient equals the one-pass gradient`, async () => {
      const sequences = randomSequences(lossType.length * 7, 13);
      const whole = createModel(CONFIG, 5);
      const split = createModel(CONFIG, 5);
      const onePass = trainer(whole, lossType, Number.POSITIVE_INFINITY);
      const micro = trainer(split, lossType, budgetFor(sequences, 3));
      const a = await onePass.gradients(sequences);
      const b = await micro.gradients(sequences);
      expect(a.microBatches).toBe(1);
      expect(b.microBatches).toBeGreaterThanOrEqual(4);
      for (const [name, gradient] of a.grads) {
        const other = b.grads.get(name);
        expect(other, name).toBeDefined();
        const diff = maxRelativeDiff(
          (await gradient.data()) as Float32Array,
          (await other!.data()) as Float32Array,
        );
        expect(diff, name).toBeLessThan(1e-4);
      }
      expect(b.metrics.loss).toBeCloseTo(a.metrics.loss, 5);
      expect(b.metrics.kl ?? Number.NaN).toBeCloseTo(a.metrics.kl ?? Number.NaN, 6);
      expect(b.metrics.entropy ?? Number.NaN).toBeCloseTo(a.metrics.entropy ?? Number.NaN, 5);
      expect(b.metrics.clipRatioRegion).toBeCloseTo(a.metrics.clipRatioRegion, 6);
      expect(b.metrics.meanLength).toBeCloseTo(a.metrics.meanLength, 6);
      expect(b.metrics.maxLength).toBe(a.metrics.maxLength);
      tf.dispose([...a.grads.values(), ...b.grads.values()]);
      onePass.dispose();
      micro.dispose();
      disposeModel(whole);
      disposeModel(split);
    });
  }

  it('the optimizer step after accumulation equals the one-batch step, with no tensor left', async () => {
    const sequences = randomSequences(99, 11);
    const whole = createModel(CONFIG, 8);
    const split = createModel(CONFIG, 8);
    const before = tf.memory().numTensors;
    const onePass = trainer(whole, 'dapo', Number.POSITIVE_INFINITY);
    const micro = trainer(split, 'dapo', budgetFor(sequences, 2));
    for (let step = 0; step < 3; step++) {
      const a = await onePass.update(sequences);
      const b = await micro.update(sequences);
      expect(b.microBatches).toBeGreaterThan(3);
      expect(b.gradNorm).toBeCloseTo(a.gradNorm, 4);
      expect(b.metrics.loss).toBeCloseTo(a.metrics.loss, 5);
    }
    const wholeValues = await readValues(whole.params);
    const splitValues = await readValues(split.params);
    for (const [name, values] of wholeValues) {
      expect(maxRelativeDiff(values, splitValues.get(name)!), name).toBeLessThan(1e-4);
    }
    onePass.dispose();
    micro.dispose();
    expect(tf.memory().numTensors).toBe(before);
    disposeModel(whole);
    disposeModel(split);
  });
});

describe('pruned update', () => {
  for (const lossType of ['grpo', 'dapo', 'dr_grpo'] as const) {
    it(`${lossType}: scoring completion positions only gives the full pass's loss and gradients`, async () => {
      const sequences = randomSequences(lossType.length * 3 + 1, 9);
      const model = createModel(CONFIG, 6);
      const pruned = trainer(model, lossType, Number.POSITIVE_INFINITY);
      const got = await pruned.gradients(sequences);
      // The full pass: logits at every position, the mask picks the completion tokens.
      const width = Math.max(...sequences.map((s) => s.prompt.length + s.completion.length));
      const G = sequences.length;
      const ids = tf.tensor2d(
        sequences.flatMap((s) => {
          const row = [...s.prompt, ...s.completion];
          return [...row, ...Array(width - row.length).fill(0)];
        }),
        [G, width],
        'int32',
      );
      const maskRows = sequences.map((s) =>
        Array.from({ length: width - 1 }, (_, t) =>
          t >= s.prompt.length - 1 && t < s.prompt.length - 1 + s.completion.length ? 1 : 0,
        ),
      );
      const oldRows = sequences.map((s) =>
        Array.from({ length: width - 1 }, (_, t) => s.oldLogProbs[t - (s.prompt.length - 1)] ?? 0),
      );
      const fullLogProbs = () =>
        tokenLogProbs(
          tf.slice(forward(model, ids), [0, 0, 0], [G, width - 1, CONFIG.vocabSize]),
          tf.slice(ids, [0, 1], [G, width - 1]),
          0.8,
        ) as tf.Tensor2D;
      const refLogProbs = tf.tidy(fullLogProbs);
      const tokens = sequences.reduce((sum, s) => sum + s.completion.length, 0);
      const { value, grads } = tf.variableGrads(
        () =>
          grpoLoss(
            {
              logProbs: fullLogProbs(),
              oldLogProbs: oldRows,
              refLogProbs,
              advantages: sequences.map((s) => s.advantage),
              mask: maskRows,
            },
            {
              lossType,
              epsilonLow: 0.2,
              epsilonHigh: 0.28,
              beta: 0.04,
              normalizer: { tokens, outputs: G, maxLength: width - 1 },
            },
          ),
        [...model.params.values()],
      );
      expect(got.metrics.loss).toBeCloseTo((await value.data())[0]!, 5);
      for (const [name, variable] of model.params) {
        const full = (await grads[variable.name]!.data()) as Float32Array;
        const mine = (await got.grads.get(name)!.data()) as Float32Array;
        expect(maxRelativeDiff(full, mine), name).toBeLessThan(1e-4);
      }
      tf.dispose([ids, refLogProbs, value, ...Object.values(grads), ...got.grads.values()]);
      pruned.dispose();
      disposeModel(model);
    });
  }
});

describe('micro-batched warm start', () => {
  it('an SFT step under a small budget equals the one-batch step', async () => {
    const prng = new Rng(4);
    const random = () => prng.next();
    const token = () => 2 + Math.floor(random() * (CONFIG.vocabSize - 2));
    const examples = Array.from({ length: 9 }, () => ({
      prompt: Array.from({ length: 3 + Math.floor(random() * 10) }, token),
      answer: Array.from({ length: 2 + Math.floor(random() * 20) }, token),
    }));
    const run = async (memoryBudgetBytes: number) => {
      const model = createModel(CONFIG, 2);
      await runSft(model, () => examples, {
        ...DEFAULT_SFT,
        steps: 3,
        warmupSteps: 1,
        padId: 0,
        logEvery: 100,
        memoryBudgetBytes,
      });
      const values = await readValues(model.params);
      disposeModel(model);
      return values;
    };
    const whole = await run(Number.POSITIVE_INFINITY);
    const split = await run(trainingBytes(gptTransformerConfig(CONFIG), 2, 40));
    for (const [name, values] of whole) {
      expect(maxRelativeDiff(values, split.get(name)!), name).toBeLessThan(1e-4);
    }
  });
});

describe('memory estimate', () => {
  it('packs longest first, within the budget, and never drops an item', () => {
    const lengths = [5, 40, 12, 40, 3, 30];
    const bytesOf = (rows: number, width: number) => rows * width;
    const pieces = packByBudget(lengths, bytesOf, 80);
    expect(pieces.flat().sort((a, b) => a - b)).toEqual([0, 1, 2, 3, 4, 5]);
    for (const piece of pieces) {
      const width = Math.max(...piece.map((i) => lengths[i]!));
      expect(piece.length === 1 || bytesOf(piece.length, width) <= 80).toBe(true);
    }
    expect(pieces[0]).toEqual([1, 3]);
    // One item over the budget still gets its own piece.
    expect(packByBudget([500], bytesOf, 80)).toEqual([[0]]);
  });

  it("stays above tfjs's measured peak of a forward + backward and of a forward, within 2×", async () => {
    // Measured on wasm, the backend whose 4 GB heap the budget protects (and ~10× faster than cpu).
    await initBackend('wasm');
    for (const [preset, rows, width] of [
      ['tiny', 1, 64],
      ['tiny', 4, 200],
      ['tiny', 2, 400],
      ['small', 2, 128],
      ['base', 1, 160],
    ] as const) {
      const config = makeConfig(preset, 105, 'coder');
      const model = createModel(config, 1);
      const ids = tf.tensor2d(
        Array.from({ length: rows * width }, (_, i) => i % 100),
        [rows, width],
        'int32',
      );
      const mask = tf.ones([rows, width - 1]) as tf.Tensor2D;
      const base = tf.memory().numBytes;
      const profile = await tf.profile(() => {
        const { value, grads } = tf.variableGrads(
          () => maskedLoss(model, ids, mask),
          [...model.params.values()],
        );
        tf.dispose([value, ...Object.values(grads)]);
      });
      const measured = profile.peakBytes - base;
      const forwardOnly = await tf.profile(() => {
        tf.tidy(() => maskedLoss(model, ids, mask));
      });
      const measuredForward = forwardOnly.peakBytes - base;
      const transformer = gptTransformerConfig(config);
      const estimate = trainingBytes(transformer, rows, width);
      const shape = `${preset} ${rows}×${width}`;
      expect(estimate, shape).toBeGreaterThanOrEqual(measured);
      expect(estimate, shape).toBeLessThan(2 * measured);
      const forwardEstimate = forwardBytes(transformer, rows, width);
      expect(forwardEstimate, shape).toBeGreaterThanOrEqual(measuredForward);
      expect(forwardEstimate, shape).toBeLessThan(2 * measuredForward);
      expect(samplingBytes(transformer, rows, width, width)).toBeGreaterThan(forwardEstimate);
      tf.dispose([ids, mask]);
      disposeModel(model);
    }
    await initBackend('cpu');
  });
});

/**
 * tfjs's peak over the GRPO update's own pass (RoleTrainer.accumulate): logits at the scored
 * rows, their log-probs and entropies, the gradient of what the model trains; or over the
 * reference's forward alone.
 */
async function peakBytesOf(
  model: TrainableModel,
  rows: number,
  width: number,
  scoredPerRow = width - 1,
  pass: 'training' | 'forward' = 'training',
) {
  const V = model.config.vocabSize - 10;
  const ids = tf.tensor2d(
    Array.from({ length: rows * width }, (_, i) => (i * 7) % V),
    [rows, width],
    'int32',
  );
  // Each row's last scoredPerRow positions that predict a next token (the completion's).
  const first = width - 1 - scoredPerRow;
  const scored = tf.tensor1d(
    Array.from(
      { length: rows * scoredPerRow },
      (_, i) => Math.floor(i / scoredPerRow) * width + first + (i % scoredPerRow),
    ),
    'int32',
  );
  const targets = tf.tensor2d(
    Array.from({ length: rows * scoredPerRow }, (_, i) => (i * 5) % V),
    [rows, scoredPerRow],
    'int32',
  );
  const base = tf.memory().numBytes;
  // Read before any other profile: tf.profile's record is one object, reused by the next call.
  const { peakBytes } = await tf.profile(() => {
    if (pass === 'forward') {
      // The reference's log-probs: a forward alone inside one tidy.
      tf.tidy(() => tokenLogProbs(logitsAtOf(model, ids, scored), targets, 1));
      return;
    }
    const { value, grads } = tf.variableGrads(
      () => {
        const logits = logitsAtOf(model, ids, scored);
        const logp = tokenLogProbs(logits, targets, 1);
        const entropy = tokenEntropies(logits, 1);
        return tf.neg(tf.mean(tf.add(logp, tf.mul(0.01, entropy)))) as tf.Scalar;
      },
      [...trainableOf(model).values()] as tf.Variable[],
    );
    tf.dispose([value, ...Object.values(grads)]);
  });
  tf.dispose([ids, scored, targets]);
  return peakBytes - base;
}

describe('one training estimate for every config', () => {
  it("stays above the update's and the reference's measured peaks: the lab's GPT-2 and the Llama family under LoRA", async () => {
    await initBackend('wasm');
    const root = mkdtempSync(join(tmpdir(), 'memory-fit-'));
    try {
      const shapes: [string, FixtureName, Record<string, unknown>, number, number][] = [
        ['qwen2 fixture', 'qwen2', {}, 4, 100],
        ['llama fixture', 'llama', {}, 2, 128],
        ['qwen3 fixture', 'qwen3', {}, 2, 200],
        ['qwen2 wide', 'qwen2', { hidden_size: 128, intermediate_size: 344 }, 2, 128],
        ['qwen2 deep, long', 'qwen2', { num_hidden_layers: 4 }, 1, 480],
        ['qwen2 large vocabulary', 'qwen2', { vocab_size: 4000 }, 2, 96],
        ['llama one kv head', 'llama', { num_key_value_heads: 1, intermediate_size: 256 }, 2, 128],
      ];
      for (const [label, family, overrides, rows, width] of shapes) {
        const spec = fixtureSpec(family, (overrides.vocab_size as number) ?? 1000);
        const dir = join(root, label.replaceAll(' ', '-').replace(',', ''));
        writeHfCheckpoint(
          dir,
          { ...spec, config: { ...spec.config, max_position_embeddings: 512, ...overrides } },
          3,
        );
        const { model: base } = await loadHubModel(folderSource(dir));
        const lora = createLora(
          hubTransformerConfig(base.config),
          {
            rank: 8,
            alpha: 16,
            targets: ['q_proj', 'k_proj', 'v_proj', 'o_proj', 'gate_proj', 'up_proj', 'down_proj'],
          },
          1,
        );
        const role = hubRole(base, lora);
        const measured = await peakBytesOf(role, rows, width);
        const estimate = trainingBytesOf(role, rows, width);
        expect(estimate, label).toBeGreaterThanOrEqual(measured);
        expect(estimate, label).toBeLessThan(2 * measured);
        // The head over a quarter of each row (a completion after its prompt), as the page
        // states a training sequence.
        const completion = Math.floor(width / 4);
        const measuredScored = await peakBytesOf(role, rows, width, completion);
        const estimateScored = trainingBytes(
          hubTransformerConfig(base.config),
          rows,
          width,
          completion,
        );
        expect(estimateScored, `${label}, completions scored`).toBeGreaterThanOrEqual(
          measuredScored,
        );
        expect(estimateScored, `${label}, completions scored`).toBeLessThan(2 * measuredScored);
        const forwardOnly = await peakBytesOf(role, rows, width, width - 1, 'forward');
        const forwardEstimate = forwardBytes(hubTransformerConfig(base.config), rows, width);
        expect(forwardEstimate, `${label}, forward`).toBeGreaterThanOrEqual(forwardOnly);
        // A forward without a tape frees each layer's attention scores before the next layer's:
        // the estimate's every-layer pair term (GPT-2's fit) over-counts long rows of a tiny model.
        expect(forwardEstimate, `${label}, forward`).toBeLessThan(2.5 * forwardOnly);
        for (const t of base.weights.values()) t.dispose();
      }
      for (const [label, adapter] of [
        ['tiny GPT-2, trained in full', false],
        ['tiny GPT-2 under LoRA', true],
      ] as const) {
        const config = makeConfig('tiny', 1000, 'coder');
        const full = createModel(config, 1);
        const model = adapter
          ? {
              ...full,
              lora: createLora(
                gptTransformerConfig(config),
                { rank: 8, alpha: 16, targets: ['c_attn', 'c_proj', 'c_fc'] },
                1,
              ),
            }
          : full;
        const measured = await peakBytesOf(model, 2, 200);
        const estimate = trainingBytesOf(model, 2, 200);
        expect(estimate, label).toBeGreaterThanOrEqual(measured);
        expect(estimate, label).toBeLessThan(2 * measured);
        disposeModel(model);
      }
    } finally {
      rmSync(root, { recursive: true, force: true });
      await initBackend('cpu');
    }
  });
});

describe('chunked sampling', () => {
  it('a budget that splits the batch draws the same tokens and log-probs', async () => {
    const model = createModel(CONFIG, 3);
    const prompts = Array.from({ length: 7 }, (_, r) =>
      Array.from({ length: 3 + (r % 4) }, (_, i) => 2 + ((r * 5 + i * 3) % 20)),
    );
    const options = { maxNewTokens: 12, temperature: 1, topK: 0, seed: 17, stopId: 1 };
    const whole = await new KvCacheSampler(model, Number.POSITIVE_INFINITY).sample(
      prompts,
      options,
    );
    const budget = samplingBytes(gptTransformerConfig(CONFIG), 2, 6, 18);
    const split = await new KvCacheSampler(model, budget).sample(prompts, options);
    expect(split.tokens).toEqual(whole.tokens);
    expect(split.finished).toEqual(whole.finished);
    split.logProbs.forEach((row, r) => {
      row.forEach((value, i) => {
        expect(value).toBeCloseTo(whole.logProbs[r]![i]!, 4);
      });
    });
    disposeModel(model);
  });
});
