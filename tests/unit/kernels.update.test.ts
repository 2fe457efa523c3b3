// shaders/head_logprob.wgsl (the head's log-softmax and its backward) and the guarded AdamW
// step (adamw.wgsl).
import { describe, expect, it } from 'vitest';
import {
  adamw,
  adamwUniforms,
  headLogprobBackward,
  headLogprobForward,
  NORM_PARTIALS,
} from '../../src/gpu/engine/ops';
import { tokenLogprobReference } from '../../src/gpu/kernels/reference';
import { adamwRef, headLogprobBackwardRef } from '../../src/gpu/kernels/referenceOps';
import {
  expectClose,
  ints,
  kernelRuntime,
  needRuntime,
  randoms,
  readBack,
  run,
  upload,
} from './kernels-harness';

const h = kernelRuntime();

describe('head_logprob (log-softmax + pick + entropy, and its backward)', () => {
  for (const invTemp of [1, 1 / 0.7]) {
    it(`forward and backward, inverse temperature ${invTemp.toFixed(3)}`, async (ctx) => {
      const rt = needRuntime(h, ctx);
      const [R, V] = [29, 70];
      const logits = randoms(R * V, 61, 4);
      const targets = ints(R, V, 62);
      const g = randoms(R, 63).map((v, i) => (i % 5 === 0 ? 0 : v));
      const [L, Tg, G] = [logits, targets, g].map((t) => upload(rt, t));
      const out = rt.buffer(3 * R);
      await run(rt, [
        headLogprobForward(L!, Tg!, out, R, V, invTemp),
        headLogprobBackward(Tg!, G!, out, L!, R, V, invTemp),
      ]);
      const ref = tokenLogprobReference(
        logits.map((v) => v * invTemp),
        targets,
        R,
        V,
      );
      const o = await readBack(rt, out, 3 * R);
      expectClose(o.subarray(0, R), ref.logp, 1e-5, 1e-4, 'logp');
      expectClose(o.subarray(R, 2 * R), ref.entropy, 1e-5, 1e-4, 'entropy');
      expectClose(
        await readBack(rt, L!, R * V),
        headLogprobBackwardRef(logits, targets, g, R, V, invTemp),
        1e-6,
        1e-4,
        'dlogits',
      );
    });
  }
});

describe('adamw (guarded, clipped, on the device)', () => {
  const n = 3000;
  const opts = {
    lr: 3e-3,
    beta1: 0.9,
    beta2: 0.95,
    eps: 1e-8,
    weightDecay: 0.1,
    step: 3,
    maxGradNorm: 1,
  };
  async function step(
    rt: ReturnType<typeof needRuntime>,
    grads: Float32Array,
    loss: number,
    maxGradNorm: number,
  ) {
    const params = randoms(n, 81);
    const m = randoms(n, 82, 0.01);
    const v = randoms(n, 83, 0.01).map(Math.abs);
    const decay = Float32Array.from({ length: n }, (_, i) => (i % 3 === 0 ? 0 : 1));
    const b = {
      grads: upload(rt, grads),
      partials: rt.buffer(3 * NORM_PARTIALS),
      loss: upload(rt, new Float32Array([loss])),
      stats: rt.buffer(4),
      decay: upload(rt, decay),
      params: upload(rt, params),
      m: upload(rt, m),
      v: upload(rt, v),
    };
    const s = {
      ...opts,
      maxGradNorm,
      c1: 1 - opts.beta1 ** opts.step,
      c2: 1 - opts.beta2 ** opts.step,
    };
    await run(rt, adamw(n, adamwUniforms(n, s), b));
    const ref = adamwRef(params, grads, m, v, decay, loss, { ...opts, maxGradNorm });
    return {
      ref,
      params: await readBack(rt, b.params, n),
      m: await readBack(rt, b.m, n),
      v: await readBack(rt, b.v, n),
      stats: await readBack(rt, b.stats, 4),
      before: params,
    };
  }

  it('matches the reference with and without clipping', async (ctx) => {
    const rt = needRuntime(h, ctx);
    for (const maxGradNorm of [0.5, 0]) {
      const r = await step(rt, randoms(n, 84, 0.1), 1.5, maxGradNorm);
      expectClose(r.stats.subarray(0, 1), [r.ref.norm], 0, 1e-4, 'norm');
      expect(r.stats[1]).toBe(1);
      expectClose(r.m, r.ref.m, 1e-8, 1e-4, 'm');
      expectClose(r.v, r.ref.v, 1e-10, 1e-4, 'v');
      expectClose(r.params, r.ref.params, 1e-6, 1e-4, 'params');
    }
  });

  it('keeps large finite gradients finite in the norm, and skips the step on NaN/Inf', async (ctx) => {
    const rt = needRuntime(h, ctx);
    const big = randoms(n, 85, 1e30);
    const r = await step(rt, big, 1, 1);
    expect(Number.isFinite(r.stats[0])).toBe(true);
    expectClose(r.stats.subarray(0, 1), [r.ref.norm], 0, 1e-4, 'big norm');
    for (const [bad, loss] of [
      [Number.NaN, 1],
      [Number.POSITIVE_INFINITY, 1],
      [0, Number.NaN],
    ]) {
      const grads = randoms(n, 86);
      grads[1234] = bad as number;
      const skipped = await step(rt, grads, loss as number, 1);
      expect(skipped.stats[1]).toBe(0);
      expectClose(skipped.params, skipped.before, 0, 0, 'untouched');
    }
  });
});
