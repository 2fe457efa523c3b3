// src/gpu/engine/deviceTrainer.ts against rl/trainer.ts' RoleTrainer (tfjs cpu) on the same
// weights and sequences: the loss metrics of every iteration, the gradient norm, and the
// weights after the update (written back into the tfjs model).
import '@tensorflow/tfjs-core'; // first: its ops must load before register_all_gradients (backend.ts)
import { beforeAll, describe, expect, it } from 'vitest';
import { initBackend } from '../../src/gpu/backend';
import { DeviceRoleTrainer } from '../../src/gpu/engine/deviceTrainer';
import { trainingBytesPerToken } from '../../src/gpu/engine/limits';
import { makeConfig } from '../../src/model/config';
import type { GPT } from '../../src/model/gpt';
import { initialValues, makeVariables, readValues } from '../../src/model/params';
import type { LossType } from '../../src/rl/grpoLossTypes';
import { type PolicySequence, RoleTrainer, type RoleTrainerOptions } from '../../src/rl/trainer';
import { Rng } from '../../src/tasks/random';
import { expectClose, kernelRuntime, needRuntime } from './kernels-harness';

const h = kernelRuntime();
beforeAll(async () => {
  await initBackend('cpu');
});

/** Six sequences; `shared`: as GRPO's groups, three to a prompt (the update packs each group). */
function sequences(seed: number, shared = false): PolicySequence[] {
  const prng = new Rng(seed);
  const prompts = [5, 8].map((n) => Array.from({ length: n }, () => 1 + prng.below(36)));
  return Array.from({ length: 6 }, (_, g) => {
    const completion = Array.from({ length: 3 + ((g * 5) % 9) }, () => 1 + prng.below(36));
    return {
      prompt: shared
        ? [...(prompts[g % 2] as number[])]
        : Array.from({ length: 2 + ((g * 3) % 7) }, () => 1 + prng.below(36)),
      completion,
      oldLogProbs: completion.map(() => -Math.log(37) + (prng.next() - 0.5) * 0.8),
      advantage: (prng.next() - 0.5) * 2,
    };
  });
}

describe('the device role trainer vs RoleTrainer (tfjs cpu)', () => {
  for (const [lossType, shared] of [
    ['dapo', false],
    ['grpo', false],
    ['grpo', true],
  ] as [LossType, boolean][]) {
    it(`${lossType}${shared ? ', groups sharing a prompt (packed rows)' : ''}: metrics, gradient norm and updated weights over two iterations`, async (ctx) => {
      const rt = needRuntime(h, ctx);
      const config = makeConfig('tiny', 37, 'coder', { nCtx: 24 });
      const values = initialValues(config, 21);
      const host: GPT = { config, params: makeVariables(config, values) };
      const dev: GPT = { config, params: makeVariables(config, values) };
      const options: RoleTrainerOptions = {
        learningRate: 1e-3,
        temperature: 0.7,
        numIterations: 2,
        maxGradNorm: 1,
        loss: { lossType, epsilonLow: 0.2, epsilonHigh: 0.28, beta: 0.04 },
        padId: 0,
        memoryBudgetBytes: 1 << 30,
      };
      const seqs = sequences(4, shared);
      const hostTrainer = new RoleTrainer(host, options);
      const first = await hostTrainer.gradients(seqs);
      const noise = new Map<string, Float32Array>();
      for (const [name, g] of first.grads) {
        const data = (await g.data()) as Float32Array;
        const scale = Math.max(...data.map(Math.abs));
        noise.set(
          name,
          data.map((x) => (Math.abs(x) < 1e-3 * scale ? 1 : 0)),
        );
        g.dispose();
      }
      const want = await hostTrainer.update(seqs);
      const device = await DeviceRoleTrainer.create(rt, dev, options);
      const got = await device.update(seqs);
      expect(got.skipped).toEqual(want.skipped);
      expectClose([got.gradNorm], [want.gradNorm], 1e-6, 1e-3, 'grad norm');
      for (const key of [
        'loss',
        'kl',
        'clipRatioLow',
        'clipRatioHigh',
        'clipRatioRegion',
        'entropy',
        'meanLength',
        'minLength',
        'maxLength',
      ] as const)
        expectClose(
          [got.metrics[key] ?? Number.NaN],
          [want.metrics[key] ?? Number.NaN],
          1e-5,
          1e-3,
          key,
        );
      const a = await readValues(host.params);
      const b = await readValues(dev.params);
      for (const [name, ref] of a) {
        const out = b.get(name)!;
        const n = noise.get(name)!;
        for (let i = 0; i < ref.length; i++) {
          const bound = n[i] ? 4.2e-3 : 2e-6 + 2e-4 * Math.abs(ref[i] ?? 0) + 5e-6;
          const diff = Math.abs((out[i] ?? 0) - (ref[i] ?? 0));
          if (!(diff <= bound)) expect.fail(`${name}[${i}]: device ${out[i]} vs tfjs ${ref[i]}`);
        }
      }
      const state = await device.exportState();
      expect(state.iterations).toBe(2);
      expect(state.moments.length).toBe(2 * a.size);
      hostTrainer.dispose();
    });
  }
});

describe('the device role trainer in micro-batches', () => {
  it("a pass holds the run's memory budget's worth of tokens (at least 64)", async (ctx) => {
    const rt = needRuntime(h, ctx);
    const config = makeConfig('tiny', 37, 'coder', { nCtx: 24 });
    const values = initialValues(config, 23);
    const perToken = trainingBytesPerToken(config);
    const options = (memoryBudgetBytes?: number): RoleTrainerOptions => ({
      learningRate: 1e-3,
      temperature: 1,
      numIterations: 1,
      maxGradNorm: 1,
      loss: { lossType: 'grpo', epsilonLow: 0.2, epsilonHigh: 0.28, beta: 0 },
      padId: 0,
      ...(memoryBudgetBytes !== undefined ? { memoryBudgetBytes } : {}),
    });
    const make = async (budget?: number) =>
      (
        await DeviceRoleTrainer.create(
          rt,
          { config, params: makeVariables(config, values) },
          options(budget),
        )
      ).maxTokensPerPass;
    expect(await make(300 * perToken)).toBe(300);
    expect(await make(10 * perToken)).toBe(64);
    expect(await make()).toBeGreaterThan(300);
  });

  for (const shared of [false, true])
    it(`three passes with accumulated gradients give the one-pass update${shared ? ' (packed rows, whole rows a pass)' : ''}`, async (ctx) => {
      const rt = needRuntime(h, ctx);
      const config = makeConfig('tiny', 37, 'coder', { nCtx: 24 });
      const values = initialValues(config, 22);
      const one: GPT = { config, params: makeVariables(config, values) };
      const many: GPT = { config, params: makeVariables(config, values) };
      const options: RoleTrainerOptions = {
        learningRate: 1e-3,
        temperature: 1,
        numIterations: 1,
        maxGradNorm: 1,
        loss: { lossType: 'dr_grpo', epsilonLow: 0.2, epsilonHigh: 0.28, beta: 0.04 },
        padId: 0,
      };
      const seqs = sequences(9, shared);
      const a = await DeviceRoleTrainer.create(rt, one, options);
      const b = await DeviceRoleTrainer.create(rt, many, options);
      b.maxTokensPerPass = 24; // rows × width: the six sequences take three or more passes
      const ua = await a.update(seqs);
      const ub = await b.update(seqs);
      expect(ua.microBatches).toBe(1);
      expect(ub.microBatches).toBeGreaterThanOrEqual(3);
      expectClose([ub.metrics.loss], [ua.metrics.loss], 1e-6, 1e-4, 'loss');
      expectClose([ub.gradNorm], [ua.gradNorm], 1e-6, 1e-4, 'grad norm');
      expectClose([ub.metrics.kl ?? 0], [ua.metrics.kl ?? 0], 1e-7, 1e-4, 'kl');
      const x = await readValues(one.params);
      const y = await readValues(many.params);
      for (const [name, ref] of x) expectClose(y.get(name)!, ref, 2e-6, 1e-4, name);
    });
});
