// Full-parameter training on the kernels' one model (gpu/engine/deviceWeights.ts: a trainable
// DeviceTransformer's weights f32 in one flat buffer, their gradients where the forward reads
// them): the gradient of Σ dlogp·logπ for every weight of a GPT-2 — the tied embedding (head
// and rows), learned positions, LayerNorms' weights and biases, Conv1D projections (transposed
// on the device, back in the checkpoint's layout), their biases — against tfjs's autodiff of the
// same model; padded rows and a GRPO group sharing its prompt in one row; and the weights and
// Adam's moments read back by name as they were written.
import * as tf from '@tensorflow/tfjs-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { initBackend } from '../../src/gpu/backend';
import { DevicePolicy } from '../../src/gpu/engine/devicePolicy';
import { DeviceTransformer, float32Tensors } from '../../src/gpu/engine/deviceTransformer';
import { gptTransformerConfig, makeConfig } from '../../src/model/config';
import { createModel, disposeModel, type GPT, sequenceLogProbs } from '../../src/model/gpt';
import { readValues } from '../../src/model/params';
import { Rng } from '../../src/tasks/random';
import { kernelRuntime, needRuntime } from './kernels-harness';
import { relativeToLargest } from './llama-device-fixtures';

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

  /** tfjs's gradient of Σ_i dlogp_i·logπ_i w.r.t. every parameter, by name. */
  function tfjsGradients(model: GPT, sequences: number[][], dlogp: Float32Array[]) {
    const { grads } = tf.variableGrads(() => {
      let total = tf.scalar(0);
      sequences.forEach((q, i) => {
        const lp = sequenceLogProbs(model, tf.tensor2d([q], [1, q.length], 'int32'));
        const row = dlogp[i] as Float32Array;
        total = tf.add(total, tf.sum(tf.mul(lp, tf.tensor2d(row, [1, row.length]))));
      });
      return total as tf.Scalar;
    }, [...model.params.values()]);
    return grads;
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
      const rng = new Rng(13);
      const sequences = [9, 14, 6].map((n) =>
        Array.from({ length: n }, () => Math.floor(rng.next() * config.vocabSize)),
      );
      const dlogp = sequences.map((q) =>
        Float32Array.from({ length: q.length - 1 }, () => rng.next() - 0.5),
      );
      const { logp, grads } = await policy.weightGradients({ sequences }, dlogp);
      for (const [i, q] of sequences.entries()) {
        const lp = await sequenceLogProbs(model, tf.tensor2d([q], [1, q.length], 'int32')).data();
        expect(relativeToLargest(logp[i] as Float32Array, lp), `log-probs ${i}`).toBeLessThan(1e-5);
      }
      expect([...grads.keys()].sort()).toEqual([...model.params.keys()].sort());
      await expectGradients(model, grads, tfjsGradients(model, sequences, dlogp));
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
    await expectGradients(model, grads, tfjsGradients(model, sequences, dlogp));
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
});
