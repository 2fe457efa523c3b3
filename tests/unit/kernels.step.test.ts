// The device's whole GRPO training step (src/gpu/engine/deviceModel.ts: forward, per-token
// loss, backward, guarded AdamW in one submission) against the tfjs cpu step on the same
// weights and batch: the loss, every gradient, and every updated weight.
import * as tf from '@tensorflow/tfjs-core';
import { beforeAll, describe, expect, it } from 'vitest';
import { initBackend } from '../../src/gpu/backend';
import { DeviceModel } from '../../src/gpu/engine/deviceModel';
import type { MatmulVersion } from '../../src/gpu/engine/ops';
import { AdamW } from '../../src/model/adamw';
import { makeConfig } from '../../src/model/config';
import { type GPT, sequenceLogProbs } from '../../src/model/gpt';
import { initialValues, makeVariables } from '../../src/model/params';
import { applyGradientsSafely } from '../../src/model/safeUpdate';
import { grpoLoss } from '../../src/rl/grpoLoss';
import { Rng } from '../../src/tasks/random';
import { expectClose, kernelRuntime, needRuntime } from './kernels-harness';

const h = kernelRuntime();
beforeAll(async () => {
  await initBackend('cpu');
});

const OPTIONS = { epsilonLow: 0.2, epsilonHigh: 0.28, beta: 0.04 };
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
      const policy = tf.tidy(() => sequenceLogProbs(model, idsT, temperature));
      const logp = (await policy.array()) as number[][];
      policy.dispose();
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

      const tokens = mask.flat().reduce((a: number, b) => a + b, 0);
      const flat = (rows: number[][]) => {
        const out = new Float32Array(B * T);
        rows.forEach((row, b) => {
          row.forEach((v, t) => {
            out[b * T + t] = v;
          });
        });
        return out;
      };
      const dm = new DeviceModel(rt, config, values, ADAM);
      dm.matmulVersion = version;
      // The forward alone, at every position that predicts a token.
      const forwardOnly = await dm.logProbs(B, T, Uint32Array.from(ids.flat()), temperature);
      expectClose(
        forwardOnly.logp.filter((_, r) => r % T !== T - 1),
        logp.flat(),
        1e-5,
        1e-4,
        'forward logp',
      );
      const step = await dm.trainStep(
        {
          B,
          T,
          ids: Uint32Array.from(ids.flat()),
          oldLogp: flat(oldLogp),
          refLogp: flat(refLogp),
          advantage: Float32Array.from(
            { length: B * T },
            (_, r) => advantages[Math.floor(r / T)] ?? 0,
          ),
          weight: flat(mask.map((row) => row.map((m) => m / tokens))),
        },
        { ...OPTIONS, lr, maxGradNorm, temperature },
        true,
      );
      expect(step.applied).toBe(true);
      expect(step.clipped).toBe(report.clipped);
      expectClose([step.loss], [tfLoss], 1e-6, 1e-4, 'loss');
      expectClose([step.gradNorm], [report.gradNorm], 1e-6, 1e-3, 'grad norm');
      // The step's head ran at the completion tokens only (mask 1): their log-probs, 0 elsewhere.
      const masked = mask.flat();
      expect(masked.some((m) => m === 0) && masked.some((m) => m === 1)).toBe(true);
      expectClose(
        step.logp!.filter((_, r) => r % T !== T - 1),
        logp.flat().map((v, i) => (masked[i] ? v : 0)),
        1e-5,
        1e-4,
        'logp',
      );
      const gpuGrads = await dm.readGrads();
      for (const [name, ref] of tfGrads) {
        const scale = Math.max(...ref.map(Math.abs));
        expectClose(gpuGrads.get(name)!, ref, 1e-4 * scale + 1e-9, 1e-3, `d ${name}`);
      }
      const gpuAfter = await dm.readParams();
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
    });
  }
});

describe('a batch with nothing to learn', () => {
  it('no position with weight (no completion token): loss 0, a finite step, no device error', async (ctx) => {
    const rt = needRuntime(h, ctx);
    const config = makeConfig('tiny', 41, 'shared', { nCtx: 24, nLayer: 1 });
    const dm = new DeviceModel(rt, config, initialValues(config, 4), ADAM);
    const [B, T] = [2, 6];
    const R = B * T;
    const errors: string[] = [];
    rt.device.addEventListener('uncapturederror', (e) =>
      errors.push((e as GPUUncapturedErrorEvent).error.message),
    );
    const step = await dm.trainStep(
      {
        B,
        T,
        ids: new Uint32Array(R).fill(2),
        oldLogp: new Float32Array(R),
        refLogp: new Float32Array(R),
        advantage: new Float32Array(R).fill(1),
        weight: new Float32Array(R),
      },
      { ...OPTIONS, lr: 1e-3, maxGradNorm: 1, temperature: 1 },
      true,
    );
    expect(step.loss).toBe(0);
    expect(step.gradNorm).toBe(0);
    expect(Array.from(step.logp!)).toEqual(new Array(R).fill(0));
    const after = await dm.readParams();
    for (const [name, v] of after) expect(v.every(Number.isFinite), name).toBe(true);
    expect(errors).toEqual([]);
  });
});

describe('device memory over a run', () => {
  it('batches of changing shapes keep the buffer count flat (older shapes are freed)', async (ctx) => {
    const rt = needRuntime(h, ctx);
    const config = makeConfig('tiny', 41, 'shared', { nCtx: 24, nLayer: 1 });
    const dm = new DeviceModel(rt, config, initialValues(config, 3), ADAM);
    const counts: number[] = [];
    for (const [B, T] of [
      [2, 5],
      [3, 6],
      [2, 7],
      [4, 9],
      [3, 6],
    ] as [number, number][]) {
      const R = B * T;
      await dm.trainStep(
        {
          B,
          T,
          ids: new Uint32Array(R).fill(1),
          oldLogp: new Float32Array(R).fill(-3),
          refLogp: new Float32Array(R).fill(-3),
          advantage: new Float32Array(R).fill(1),
          weight: new Float32Array(R).fill(1 / R),
        },
        { ...OPTIONS, lr: 1e-3, maxGradNorm: 1, temperature: 1 },
      );
      counts.push(rt.bufferCount);
    }
    expect(counts[2]).toBe(counts[1]);
    expect(counts[4]).toBe(counts[1]);
  });
});
