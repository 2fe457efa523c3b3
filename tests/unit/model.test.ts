import * as tf from '@tensorflow/tfjs-core';
import { beforeAll, describe, expect, it } from 'vitest';
import { initBackend } from '../../src/gpu/backend';
import {
  causalAttention,
  copyRows,
  createModel,
  forward,
  type GPT,
  makeConfig,
  maskedLoss,
  parameterCount,
  parameterSpecs,
} from '../../src/model';
import { matMulByRows, rows } from '../../src/model/ops';
import { RoleTrainer } from '../../src/rl/trainer';

const micro = () => makeConfig('tiny', 13, 'coder', { nEmbd: 8, nLayer: 2, nHead: 2, nCtx: 8 });

function batch(B: number, T: number, V: number, seed: number): tf.Tensor2D {
  let s = seed;
  const ids = Array.from({ length: B * T }, () => {
    s = (s * 1103515245 + 12345) % 2147483648;
    return s % V;
  });
  return tf.tensor2d(ids, [B, T], 'int32');
}

/** Attention from plain tfjs ops, with tfjs's own gradients: the reference for the custom one. */
function plainAttention(q: tf.Tensor3D, k: tf.Tensor3D, v: tf.Tensor3D): tf.Tensor3D {
  const T = q.shape[1];
  const scores = tf.mul(tf.matMul(q, k, false, true), 1 / Math.sqrt(q.shape[2]));
  const mask = tf.mul(tf.sub(1, tf.linalg.bandPart(tf.ones([T, T]), -1, 0)), -1e9);
  return tf.matMul(tf.softmax(tf.add(scores, mask)), v);
}

describe('GPT model', () => {
  beforeAll(async () => {
    await initBackend('cpu');
  });

  it('has the presets and parameter counts the design names', () => {
    const tiny = makeConfig('tiny', 103);
    expect(parameterCount(tiny)).toBeGreaterThan(80_000);
    expect(parameterCount(tiny)).toBeLessThan(160_000);
    expect(parameterCount(makeConfig('small', 103))).toBeLessThan(1_200_000);
    const base = parameterCount(makeConfig('base', 103));
    expect(base).toBeGreaterThan(4_000_000);
    expect(base).toBeLessThan(6_000_000);
    const specs = parameterSpecs(tiny);
    expect(specs.reduce((n, s) => n + s.shape.reduce((a, b) => a * b, 1), 0)).toBe(
      parameterCount(tiny),
    );
    expect(() => makeConfig('huge', 103)).toThrow(/unknown preset "huge"/);
  });

  it('same seed gives the same logits; different seed differs', async () => {
    const a = createModel(micro(), 7);
    const b = createModel(micro(), 7);
    const c = createModel(micro(), 8);
    const ids = batch(2, 8, 13, 1);
    const [la, lb, lc] = await Promise.all([a, b, c].map((m) => forward(m, ids).data()));
    expect(Array.from(la!)).toEqual(Array.from(lb!));
    expect(Array.from(la!)).not.toEqual(Array.from(lc!));
  });

  it('custom attention gradients equal tfjs autodiff of plain ops', async () => {
    const q = tf.randomNormal([3, 5, 4], 0, 1, 'float32', 1) as tf.Tensor3D;
    const k = tf.randomNormal([3, 5, 4], 0, 1, 'float32', 2) as tf.Tensor3D;
    const v = tf.randomNormal([3, 5, 4], 0, 1, 'float32', 3) as tf.Tensor3D;
    const w = tf.randomNormal([3, 5, 4], 0, 1, 'float32', 4);
    const f = (att: typeof plainAttention) => (a: tf.Tensor, b: tf.Tensor, c: tf.Tensor) =>
      tf.sum(tf.mul(att(a as tf.Tensor3D, b as tf.Tensor3D, c as tf.Tensor3D), w));
    const custom = tf.grads(f(causalAttention))([q, k, v]);
    const plain = tf.grads(f(plainAttention))([q, k, v]);
    for (let i = 0; i < 3; i++) {
      const d = await tf.max(tf.abs(tf.sub(custom[i]!, plain[i]!))).data();
      expect(d[0]).toBeLessThan(1e-5);
    }
  });

  it('analytic gradients match finite differences', async () => {
    const model: GPT = createModel(micro(), 3);
    const ids = batch(2, 8, 13, 5);
    const mask = tf.ones([2, 7]) as tf.Tensor2D;
    const loss = () => maskedLoss(model, ids, mask);
    const { grads } = tf.variableGrads(loss, [...model.params.values()]);
    const eps = 1e-2;
    let checked = 0;
    for (const name of [
      'transformer.wte.weight',
      'transformer.wpe.weight',
      'transformer.h.0.attn.c_attn.weight',
      'transformer.h.1.mlp.c_fc.weight',
      'transformer.h.0.ln_1.weight',
      'transformer.ln_f.bias',
    ]) {
      const variable = model.params.get(name)!;
      const analytic = await grads[variable.name]!.data();
      const base = (await variable.data()) as Float32Array;
      for (const index of [0, Math.floor(base.length / 3), base.length - 1]) {
        const at = (delta: number) => {
          const moved = Float32Array.from(base);
          moved[index]! += delta;
          variable.assign(tf.tensor(moved, variable.shape));
          return loss().dataSync()[0]!;
        };
        const numeric = (at(eps) - at(-eps)) / (2 * eps);
        variable.assign(tf.tensor(base, variable.shape));
        expect(Math.abs(numeric - analytic[index]!)).toBeLessThan(2e-3 + 0.05 * Math.abs(numeric));
        checked++;
      }
    }
    expect(checked).toBe(18);
  });

  it("the trainer's reference is a frozen, independent copy (GRPO's π_ref)", async () => {
    const model = createModel(micro(), 9);
    const trainer = new RoleTrainer(model, {
      learningRate: 1e-2,
      temperature: 1,
      numIterations: 1,
      maxGradNorm: 1,
      loss: { lossType: 'grpo', epsilonLow: 0.2, epsilonHigh: 0.2, beta: 0.04 },
      padId: 0,
    });
    const weights = async () => {
      const out = new Map<string, number[]>();
      for (const [name, v] of model.params) out.set(name, Array.from(await v.data()));
      return out;
    };
    const reference = async () =>
      new Map([...((await trainer.exportState()).reference ?? [])].map(([n, d]) => [n, [...d]]));
    const before = await weights();
    expect(await reference()).toEqual(before);
    const wte = model.params.get('transformer.wte.weight')!;
    wte.assign(tf.add(wte, 1));
    expect(await reference()).toEqual(before);
    expect(await reference()).not.toEqual(await weights());
    trainer.dispose();
  });

  // nn.Linear's x·Wᵀ runs as (W·xᵀ)ᵀ on wasm (its transposed-B matMul is a slow loop): the same
  // values and the same input gradient as the plain transposed matMul, on both CPU backends.
  it.each(['cpu', 'wasm'] as const)(
    'matMulByRows equals x·Wᵀ and its gradient on %s',
    async (backend) => {
      await initBackend(backend);
      try {
        const seed = Math.floor(Math.random() * 1e6);
        const x = tf.randomNormal([5, 7], 0, 1, 'float32', seed) as tf.Tensor2D;
        const w = tf.randomNormal([9, 7], 0, 1, 'float32', seed + 1) as tf.Tensor2D;
        const dy = tf.randomNormal([5, 9], 0, 1, 'float32', seed + 2) as tf.Tensor2D;
        const value = await matMulByRows(x, w).data();
        const expected = await tf.matMul(x, w, false, true).data();
        for (const [i, v] of value.entries()) expect(v).toBeCloseTo(expected[i]!, 4);
        const loss = (f: (input: tf.Tensor2D) => tf.Tensor2D) => (input: tf.Tensor) =>
          tf.sum(tf.mul(f(input as tf.Tensor2D), dy));
        const grad = await tf
          .grad(loss((input) => matMulByRows(input, w)))(x)
          .data();
        const expectedGrad = await tf
          .grad(loss((input) => tf.matMul(input, w, false, true)))(x)
          .data();
        for (const [i, g] of grad.entries()) expect(g).toBeCloseTo(expectedGrad[i]!, 4);
      } finally {
        await initBackend('cpu');
      }
    },
  );

  // rows and copyRows copy in JS on the CPU backends (faster than wasm's gather): the same
  // values as tf.gather, on both, for fresh random inputs and repeated, reordered rows.
  it.each(['cpu', 'wasm'] as const)('rows and copyRows equal tf.gather on %s', async (backend) => {
    await initBackend(backend);
    try {
      const x = tf.randomNormal([6, 5, 3], 0, 1, 'float32', Math.floor(Math.random() * 1e6));
      const picked = [4, 0, 0, 5, 2];
      const expected = await tf.gather(x, tf.tensor1d(picked, 'int32')).array();
      expect(await copyRows(x, picked).array()).toEqual(expected);
      const flat = tf.reshape(x, [6, 15]);
      const slices = rows(x);
      expect(slices.map((slice) => slice.shape)).toEqual(Array(6).fill([5, 3]));
      for (let i = 0; i < 6; i++)
        expect(Array.from(await slices[i]!.data())).toEqual(
          Array.from(await tf.gather(flat, i).data()),
        );
    } finally {
      await initBackend('cpu');
    }
  });
});
