// A whole GRPO training step of the kernels' one model trained in full (gpu/engine/devicePolicy.ts'
// policy over a trainable DeviceTransformer: the forward, the loss and its dlogp on the host
// (rl/grpoLossReference.ts), the backward to every weight, the guarded AdamW) against the tfjs
// cpu step on the same weights and batch: the loss, every gradient, and every updated weight,
// under each matmul version the engine may pick.
import * as tf from '@tensorflow/tfjs-core';
import { beforeAll, describe, expect, it } from 'vitest';
import { initBackend } from '../../src/gpu/backend';
import { float32Tensors } from '../../src/gpu/engine/deviceCheckpoint';
import { DevicePolicy } from '../../src/gpu/engine/devicePolicy';
import { DeviceTransformer } from '../../src/gpu/engine/deviceTransformer';
import type { MatmulVersion } from '../../src/gpu/engine/ops';
import type { GpuRuntime } from '../../src/gpu/engine/runtime';
import { AdamW } from '../../src/model/adamw';
import { gptTransformerConfig, type ModelConfig, makeConfig } from '../../src/model/config';
import { type GPT, sequenceLogProbs } from '../../src/model/gpt';
import { initialValues, makeVariables, parameterSpecs } from '../../src/model/params';
import { applyGradientsSafely } from '../../src/model/safeUpdate';
import { grpoLoss } from '../../src/rl/grpoLoss';
import { grpoLossGradientReference, grpoLossReference } from '../../src/rl/grpoLossReference';
import { Rng } from '../../src/tasks/random';
import { expectClose, kernelRuntime, needRuntime } from './kernels-harness';

const h = kernelRuntime();
beforeAll(async () => {
  await initBackend('cpu');
});

const OPTIONS = { epsilonLow: 0.2, epsilonHigh: 0.28, beta: 0.04 };

/** The model's weights trained in full on the kernels: a policy over a trainable one model. */
function devicePolicy(
  rt: GpuRuntime,
  config: ModelConfig,
  values: Map<string, Float32Array>,
  matmul?: MatmulVersion,
) {
  const shapes = new Map(parameterSpecs(config).map((p) => [p.name, p.shape]));
  const model = new DeviceTransformer(
    rt,
    gptTransformerConfig(config),
    float32Tensors(values, (name) => shapes.get(name)),
    { contextLength: config.nCtx, trainable: true, ...(matmul ? { matmul } : {}) },
  );
  return new DevicePolicy(rt, model, 'weights');
}
const ADAM = { beta1: 0.9, beta2: 0.95, eps: 1e-8, weightDecay: 0.01 };

function setup(seed: number, B: number, T: number) {
  // The tiny preset's shape (d 64, 2 layers, 4 heads), a short context and a small vocabulary.
  const config = makeConfig('tiny', 41, 'shared', { nCtx: 24 });
  const values = initialValues(config, seed);
  const prng = new Rng(seed + 1);
  // Non-trivial gains and biases, so their gradients and every path are exercised.
  for (const [name, v] of values)
    if (!name.endsWith('wte.weight') && !name.endsWith('wpe.weight'))
      for (let i = 0; i < v.length; i++) v[i] = (v[i] ?? 0) + (prng.next() - 0.5) * 0.2;
  const ids = Array.from({ length: B }, () => Array.from({ length: T }, () => prng.below(41)));
  // Rows end in padding of different lengths (mask 0 there).
  const lengths = Array.from({ length: B }, (_, b) => T - 1 - (b % 3) * 2);
  const mask = ids.map((_, b) =>
    Array.from({ length: T - 1 }, (_, t) => (t < (lengths[b] ?? 0) ? 1 : 0)),
  );
  const advantages = Array.from({ length: B }, () => (prng.next() - 0.5) * 3);
  return { config, values, ids, mask, advantages, prng };
}

describe('device training step vs the tfjs cpu step', () => {
  for (const [temperature, maxGradNorm, version] of [
    [1, 1, 'v1_regblock'],
    [0.8, 0.05, 'v2_tiled'],
    [0.8, 1, 'v4_vec4'],
  ] as [number, number, MatmulVersion][]) {
    it(`loss, every gradient, every updated weight (temperature ${temperature}, clip ${maxGradNorm}, matmul ${version})`, async (ctx) => {
      const rt = needRuntime(h, ctx);
      const [B, T] = [4, 13];
      const { config, values, ids, mask, advantages, prng } = setup(7, B, T);
      const model: GPT = { config, params: makeVariables(config, values) };
      const idsT = tf.tensor2d(ids, [B, T], 'int32');
      const current = tf.tidy(() => sequenceLogProbs(model, idsT, temperature));
      const logp = (await current.array()) as number[][];
      current.dispose();
      const oldLogp = logp.map((row) => row.map((v) => v + (prng.next() - 0.5) * 0.6));
      const refLogp = logp.map((row) => row.map((v) => v + (prng.next() - 0.5) * 0.6));
      const vars = [...model.params.values()];
      const { value, grads } = tf.variableGrads(
        () =>
          grpoLoss(
            {
              logProbs: sequenceLogProbs(model, idsT, temperature),
              oldLogProbs: oldLogp,
              refLogProbs: refLogp,
              advantages,
              mask,
            },
            { ...OPTIONS, lossType: 'dapo' },
          ),
        vars,
      );
      const tfLoss = (await value.data())[0] ?? Number.NaN;
      const tfGrads = new Map<string, Float32Array>();
      for (const [name, v] of model.params)
        tfGrads.set(name, (await grads[v.name]!.data()) as Float32Array);
      const lr = 1e-3;
      const optimizer = new AdamW(model, ADAM, lr);
      const report = await applyGradientsSafely(optimizer, grads, tfLoss, maxGradNorm);
      tf.dispose([value, idsT, ...Object.values(grads)]);
      const tfAfter = new Map<string, Float32Array>();
      for (const [name, v] of model.params) tfAfter.set(name, (await v.data()) as Float32Array);

      const policy = devicePolicy(rt, config, values, version);
      // The forward alone, at every position that predicts a token.
      const forwardOnly = await policy.logProbs({ sequences: ids, temperature });
      expectClose(
        forwardOnly.flatMap((r) => Array.from(r)),
        logp.flat(),
        1e-5,
        1e-4,
        'forward logp',
      );
      // The step: its own forward's log-probs, the loss and dlogp on the host, backward, AdamW.
      let stepLogp: Float32Array[] = [];
      const step = await policy.step(
        { sequences: ids, temperature },
        (lp) => {
          stepLogp = lp;
          const inputs = {
            logProbs: lp.map((r) => Array.from(r)),
            oldLogProbs: oldLogp,
            refLogProbs: refLogp,
            advantages,
            mask,
          };
          const o = { ...OPTIONS, lossType: 'dapo' as const };
          return {
            loss: grpoLossReference(inputs, o).loss,
            dlogp: grpoLossGradientReference(inputs, o),
          };
        },
        { lr, ...ADAM, maxGradNorm },
      );
      expect(step.ok).toBe(true);
      expect(step.gradNorm > maxGradNorm).toBe(report.clipped);
      expectClose([step.loss], [tfLoss], 1e-6, 1e-4, 'loss');
      expectClose([step.gradNorm], [report.gradNorm], 1e-6, 1e-3, 'grad norm');
      expectClose(
        stepLogp.flatMap((r) => Array.from(r)),
        logp.flat(),
        1e-5,
        1e-4,
        'logp',
      );
      const weights = policy.weights!;
      const gpuGrads = await weights.unpack(weights.grads);
      for (const [name, ref] of tfGrads) {
        const scale = Math.max(...ref.map(Math.abs));
        expectClose(gpuGrads.get(name)!, ref, 1e-4 * scale + 1e-9, 1e-3, `d ${name}`);
      }
      const gpuAfter = await weights.read();
      for (const [name, ref] of tfAfter) {
        // Adam's first step moves a weight by ≈ lr·sign(g) whatever |g| is: where the gradient is
        // float32 noise around 0 (the key bias: softmax ignores a constant added to every key)
        // the sign is noise too, so those weights only have to stay within one step.
        const got = gpuAfter.get(name)!;
        const g = tfGrads.get(name)!;
        const scale = Math.max(...g.map(Math.abs));
        for (let i = 0; i < ref.length; i++) {
          const diff = Math.abs((got[i] ?? 0) - (ref[i] ?? 0));
          const noise = Math.abs(g[i] ?? 0) < 1e-4 * scale;
          const bound = noise ? 2.1 * lr : 1e-6 + 1e-5 * Math.abs(ref[i] ?? 0);
          if (!(diff <= bound))
            expect.fail(`${name}[${i}]: gpu ${got[i]} vs tfjs ${ref[i]} (grad ${g[i]})`);
        }
      }
      for (const v of model.params.values()) v.dispose();
      optimizer.dispose();
      policy.free();
    });
  }
});

describe('a batch with nothing to learn', () => {
  it('no position with weight (no completion token): loss 0, a finite step, no device error', async (ctx) => {
    const rt = needRuntime(h, ctx);
    const config = makeConfig('tiny', 41, 'shared', { nCtx: 24, nLayer: 1 });
    const policy = devicePolicy(rt, config, initialValues(config, 4));
    const errors: string[] = [];
    rt.device.addEventListener('uncapturederror', (e) =>
      errors.push((e as GPUUncapturedErrorEvent).error.message),
    );
    const sequences = [new Array(6).fill(2), new Array(6).fill(2)];
    const step = await policy.step(
      { sequences },
      (lp) => ({ loss: 0, dlogp: lp.map((r) => new Float32Array(r.length)) }),
      { lr: 1e-3, ...ADAM, maxGradNorm: 1 },
    );
    expect(step.loss).toBe(0);
    expect(step.gradNorm).toBe(0);
    expect(step.ok).toBe(true);
    const after = await policy.weights!.read();
    for (const [name, v] of after) expect(v.every(Number.isFinite), name).toBe(true);
    expect(errors).toEqual([]);
    policy.free();
  });
});

describe('device memory over a run', () => {
  it('batches of changing shapes keep the buffer count flat (older shapes are freed)', async (ctx) => {
    const rt = needRuntime(h, ctx);
    const config = makeConfig('tiny', 41, 'shared', { nCtx: 24, nLayer: 1 });
    const policy = devicePolicy(rt, config, initialValues(config, 3));
    const counts: number[] = [];
    for (const [B, T] of [
      [2, 5],
      [3, 6],
      [2, 7],
      [4, 9],
      [3, 6],
    ] as [number, number][]) {
      const sequences = Array.from({ length: B }, () => new Array(T).fill(1));
      await policy.step(
        { sequences },
        (lp) => ({
          loss: 0.5,
          dlogp: lp.map((r) => new Float32Array(r.length).fill(-1 / (B * T))),
        }),
        { lr: 1e-3, ...ADAM, maxGradNorm: 1 },
      );
      counts.push(rt.bufferCount);
    }
    expect(counts[2]).toBe(counts[1]);
    expect(counts[4]).toBe(counts[1]);
    policy.free();
  });
});
