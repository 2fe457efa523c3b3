// Full-parameter training on the kernels' one model (gpu/engine/deviceWeights.ts: a trainable
// DeviceTransformer's weights f32 in one flat buffer, their gradients where the forward reads
// them): the gradient of Σ dlogp·logπ for every weight of a GPT-2 — the tied embedding (head
// and rows), learned positions, LayerNorms' weights and biases, Conv1D projections (transposed
// on the device, back in the checkpoint's layout), their biases — against tfjs's autodiff of the
// same model; padded rows and a GRPO group sharing its prompt in one row; the weights and
// Adam's moments read back by name as they were written; and the Llama family's switches trained
// in full (RMSNorm's weights, RoPE, SwiGLU, grouped-query attention, Qwen3's q/k norms, a q|k|v
// bias, an untied head; a 16-bit checkpoint widened to f32): sampled entries of every weight's
// gradient against central differences of the independent float64 forward.
import * as tf from '@tensorflow/tfjs-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { initBackend } from '../../src/gpu/backend';
import { float32Tensors, type WeightTensor } from '../../src/gpu/engine/deviceCheckpoint';
import { DevicePolicy } from '../../src/gpu/engine/devicePolicy';
import { DeviceTransformer } from '../../src/gpu/engine/deviceTransformer';
import type { WeightDtype } from '../../src/gpu/engine/ops';
import { gptTransformerConfig, makeConfig } from '../../src/model/config';
import { type LlamaConfig, llamaTransformerConfig } from '../../src/model/families/llamaConfig';
import { createModel, disposeModel, type GPT } from '../../src/model/gpt';
import { readValues } from '../../src/model/params';
import { Rng } from '../../src/tasks/random';
import { randomBatch, tfjsGradients, tfjsLogProbs } from './gpt-gradients';
import { kernelRuntime, needRuntime } from './kernels-harness';
import {
  llamaConfig,
  llamaReferenceLogits,
  randomLlama,
  relativeToLargest,
} from './llama-device-fixtures';

const h = kernelRuntime();

describe('full-parameter training on the one model', () => {
  const models: GPT[] = [];
  beforeAll(async () => {
    await initBackend('cpu'); // tfjs's float32 autodiff is the comparison
  });
  afterAll(() => {
    for (const m of models) disposeModel(m);
  });

  async function trainable(rt: ReturnType<typeof needRuntime>, model: GPT) {
    const values = await readValues(model.params);
    const weights = float32Tensors(values, (name) => model.params.get(name)?.shape);
    const base = new DeviceTransformer(rt, gptTransformerConfig(model.config), weights, {
      contextLength: model.config.nCtx,
      trainable: true,
    });
    return { policy: new DevicePolicy(rt, base, 'weights'), values };
  }

  /** Every parameter's device gradient within 1e-4 of tfjs's largest; disposes tfjs's. */
  async function expectGradients(
    model: GPT,
    grads: Map<string, Float32Array>,
    want: tf.NamedTensorMap,
  ): Promise<void> {
    for (const [name, v] of model.params) {
      const w = await (want[v.name] as tf.Tensor).data();
      expect(relativeToLargest(grads.get(name) as Float32Array, w), name).toBeLessThan(1e-4);
    }
    tf.dispose(Object.values(want));
  }

  for (const [label, shape] of [
    ['heads of 16', { nEmbd: 64, nHead: 4 }],
    ['heads of 64', { nEmbd: 128, nHead: 2 }],
  ] as const)
    it(`every weight's gradient of a GPT-2 (${label}) equals tfjs's autodiff`, async (ctx) => {
      const rt = needRuntime(h, ctx);
      const config = makeConfig('tiny', 61, 'coder', { ...shape, nLayer: 2, nCtx: 24 });
      const model = createModel(config, 11);
      models.push(model);
      const { policy } = await trainable(rt, model);
      const { sequences, dlogp } = randomBatch(config.vocabSize, [9, 14, 6], 13);
      const { logp, grads } = await policy.weightGradients({ sequences }, dlogp);
      for (const [i, q] of sequences.entries())
        expect(
          relativeToLargest(logp[i] as Float32Array, await tfjsLogProbs(model, q)),
          `log-probs ${i}`,
        ).toBeLessThan(1e-5);
      expect([...grads.keys()].sort()).toEqual([...model.params.keys()].sort());
      await expectGradients(
        model,
        grads,
        tfjsGradients(model, sequences, dlogp, [...model.params.values()]),
      );
      policy.free();
    });

  it('a GRPO group sharing its prompt in one row, the head on completions only: the same gradients as tfjs’s over each sequence alone', async (ctx) => {
    const rt = needRuntime(h, ctx);
    const config = makeConfig('tiny', 61, 'coder', { nEmbd: 64, nHead: 4, nLayer: 2, nCtx: 24 });
    const model = createModel(config, 21);
    models.push(model);
    const { policy } = await trainable(rt, model);
    const prompt = [5, 9, 33, 2, 40];
    const sequences = [
      [...prompt, 7, 8, 9],
      [...prompt, 60, 1],
      [...prompt, 12, 13, 14, 15],
    ];
    const scoredFrom = sequences.map(() => prompt.length - 1);
    const rng = new Rng(3);
    // The loss reads completions only: dlogp 0 over the prompt.
    const dlogp = sequences.map((q) =>
      Float32Array.from({ length: q.length - 1 }, (_, t) =>
        t >= prompt.length - 1 ? rng.next() - 0.5 : 0,
      ),
    );
    const { grads } = await policy.weightGradients({ sequences, scoredFrom }, dlogp);
    await expectGradients(
      model,
      grads,
      tfjsGradients(model, sequences, dlogp, [...model.params.values()]),
    );
    policy.free();
  });

  it('weights and Adam’s moments go out and back in by checkpoint name, Conv1D layout kept', async (ctx) => {
    const rt = needRuntime(h, ctx);
    const config = makeConfig('tiny', 61, 'coder', { nEmbd: 64, nHead: 4, nLayer: 2, nCtx: 24 });
    const model = createModel(config, 41);
    models.push(model);
    const { policy, values } = await trainable(rt, model);
    const weights = policy.weights as NonNullable<typeof policy.weights>;
    const read = await weights.read();
    for (const [name, v] of values) expect(read.get(name), name).toEqual(v);
    const rng = new Rng(5);
    const noise = (m: Map<string, Float32Array>) =>
      new Map([...m].map(([k, v]) => [k, Float32Array.from(v, () => rng.next())]));
    const m = noise(values);
    const v = noise(values);
    weights.importMoments(m, v, 3);
    const back = await weights.exportMoments();
    expect(back.steps).toBe(3);
    for (const name of values.keys()) {
      expect(back.m.get(name), name).toEqual(m.get(name));
      expect(back.v.get(name), name).toEqual(v.get(name));
    }
    policy.free();
  });

  /** Σ_b Σ_t g[b][t]·log p(seq[t+1] | seq[≤t]) by the float64 reference forward. */
  function referenceLoss(
    c: LlamaConfig,
    w: Map<string, WeightTensor>,
    seqs: number[][],
    g: Float32Array[],
  ): number {
    let loss = 0;
    seqs.forEach((seq, b) => {
      const logits = llamaReferenceLogits(c, w, seq, false);
      for (let t = 0; t < seq.length - 1; t++) {
        const z = logits[t] as Float64Array;
        const m = Math.max(...z);
        let sum = 0;
        for (const v of z) sum += Math.exp(v - m);
        loss += (g[b]?.[t] ?? 0) * ((z[seq[t + 1] as number] as number) - m - Math.log(sum));
      }
    });
    return loss;
  }

  for (const [label, over, dtype] of [
    [
      'Qwen3-like: q/k norms, head_dim 12 ≠ hidden/heads, untied head, BF16 widened',
      {
        modelType: 'qwen3',
        qkNorm: true,
        headDim: 12,
        numHeads: 6,
        numKvHeads: 3,
        tieWordEmbeddings: false,
      },
      'BF16',
    ],
    [
      'Qwen2-like: q/k/v bias, tied head, GQA 2:1, F32',
      { modelType: 'qwen2', attentionBias: true, ropeTheta: 1000000 },
      'F32',
    ],
  ] as [string, Partial<LlamaConfig>, WeightDtype][])
    it(`the Llama family trained in full (${label}): every weight's gradient against central differences of the float64 forward`, async (ctx) => {
      const rt = needRuntime(h, ctx);
      const config = llamaConfig(over);
      const stored = randomLlama(config, dtype, 9, 0.3);
      const model = new DeviceTransformer(rt, llamaTransformerConfig(config), stored, {
        contextLength: 16,
        trainable: true,
      });
      const policy = new DevicePolicy(rt, model, 'weights');
      const rng = new Rng(17);
      const sequences = [7, 5].map((n) =>
        Array.from({ length: n }, () => Math.floor(rng.next() * config.vocabSize)),
      );
      const dlogp = sequences.map((q) =>
        Float32Array.from({ length: q.length - 1 }, () => rng.next() - 0.5),
      );
      const { grads } = await policy.weightGradients({ sequences }, dlogp);
      // The float64 reference over the same (widened) values; entries moved one at a time.
      const values = await (policy.weights as NonNullable<typeof policy.weights>).read();
      const at64 = new Map<string, WeightTensor>(
        [...values].map(([name, v]) => [
          name,
          {
            dtype: 'F32',
            shape: stored.get(name)?.shape ?? [],
            data: Float64Array.from(v) as unknown as Float32Array,
          },
        ]),
      );
      const eps = 1e-4;
      for (const [name, grad] of grads) {
        const data = at64.get(name)?.data as unknown as Float64Array;
        const largest = Math.max(...grad.map(Math.abs));
        for (let n = 0; n < 3; n++) {
          const i = Math.floor(rng.next() * data.length);
          const keep = data[i] as number;
          data[i] = keep + eps;
          const up = referenceLoss(config, at64, sequences, dlogp);
          data[i] = keep - eps;
          const down = referenceLoss(config, at64, sequences, dlogp);
          data[i] = keep;
          const want = (up - down) / (2 * eps);
          expect(Math.abs((grad[i] as number) - want), `${name}[${i}]`).toBeLessThan(
            2e-3 * Math.max(largest, 1e-3),
          );
        }
      }
      policy.free();
    });
});
