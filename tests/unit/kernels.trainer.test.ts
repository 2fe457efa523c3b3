// RoleTrainer's update of the lab's GPT-2 trained in full on the kernels' one model
// (gpu/engine/kernelRoleTraining.ts: a trainable DeviceTransformer, the loss on the host, the
// backward and AdamW on the device, the weights written back into tfjs) against the same
// RoleTrainer on tfjs cpu, on the same weights and sequences: the loss metrics, the gradient
// norm, the weights after two iterations, Adam's state; and micro-batches within the memory
// budget give the one-pass update.
import '@tensorflow/tfjs-core'; // first: its ops must load before register_all_gradients (backend.ts)
import { afterAll, describe, expect, it } from 'vitest';
import { initBackend } from '../../src/gpu/backend';
import { float32Tensors } from '../../src/gpu/engine/deviceCheckpoint';
import { DevicePolicy } from '../../src/gpu/engine/devicePolicy';
import { DeviceTransformer } from '../../src/gpu/engine/deviceTransformer';
import { roleDeviceCalls } from '../../src/gpu/engine/kernelRoles';
import { gptTransformerConfig, makeConfig } from '../../src/model/config';
import type { GPT } from '../../src/model/gpt';
import { initialValues, makeVariables, parameterSpecs, readValues } from '../../src/model/params';
import type { LossType } from '../../src/rl/grpoLossTypes';
import { type PolicySequence, RoleTrainer, type RoleTrainerOptions } from '../../src/rl/trainer';
import { Rng } from '../../src/tasks/random';
import { expectClose, kernelRuntime, needRuntime } from './kernels-harness';

process.env.VK_ICD_FILENAMES ??= '/usr/lib/chromium/vk_swiftshader_icd.json';
process.env.XDG_RUNTIME_DIR ??= '/tmp';
const h = kernelRuntime();
afterAll(async () => {
  await initBackend('cpu');
});

/** Two updates of a fresh model from `values` on `backend`; its weights and Adam's state after. */
async function train(
  backend: 'kernels' | 'cpu',
  values: Map<string, Float32Array>,
  options: RoleTrainerOptions,
  seqs: PolicySequence[],
) {
  const report = await initBackend(backend);
  if (backend === 'kernels') expect(report.kernels).toBe(true);
  const config = makeConfig('tiny', 37, 'coder', { nCtx: 24 });
  const model: GPT = { config, params: makeVariables(config, values) };
  const trainer = new RoleTrainer(model, options);
  const updates = [await trainer.update(seqs), await trainer.update(seqs)];
  const weights = await readValues(model.params);
  const state = await trainer.exportState();
  trainer.dispose();
  return { updates, weights, state };
}

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

describe('RoleTrainer on the kernels vs on tfjs cpu, the weights trained in full', () => {
  for (const [lossType, shared] of [
    ['dapo', false],
    ['grpo', false],
    ['grpo', true],
  ] as [LossType, boolean][]) {
    it(`${lossType}${shared ? ', groups sharing a prompt (packed rows)' : ''}: metrics, gradient norm, weights and Adam's state over two updates`, async () => {
      const config = makeConfig('tiny', 37, 'coder', { nCtx: 24 });
      const values = initialValues(config, 21);
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
      const before = roleDeviceCalls.update;
      const got = await train('kernels', values, options, seqs);
      expect(roleDeviceCalls.update).toBe(before + 2);
      const want = await train('cpu', values, options, seqs);
      got.updates.forEach((u, i) => {
        const w = want.updates[i]!;
        expect(u.skipped).toEqual(w.skipped);
        expectClose([u.gradNorm], [w.gradNorm], 1e-6, 1e-3, `grad norm ${i}`);
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
            [u.metrics[key] ?? Number.NaN],
            [w.metrics[key] ?? Number.NaN],
            1e-5,
            1e-3,
            `${key} ${i}`,
          );
      });
      // Four Adam steps: a weight whose gradient is float32 noise around 0 moves by ≈ lr a step
      // in a direction that is noise too.
      for (const [name, ref] of want.weights) {
        const out = got.weights.get(name)!;
        const worst = Math.max(...ref.map((v, i) => Math.abs(v - (out[i] ?? 0))));
        expect(worst, name).toBeLessThan(4.2e-3);
        const typical = ref.map((v, i) => Math.abs(v - (out[i] ?? 0))).sort()[ref.length >> 1]!;
        expect(typical, name).toBeLessThan(2e-5);
      }
      expect(got.state.iterations).toBe(want.state.iterations);
      expect(got.state.moments.map((m) => m.name)).toEqual(want.state.moments.map((m) => m.name));
    });
  }
});

describe('the update in micro-batches', () => {
  it("a micro-batch holds the run's memory budget's worth of positions (at least one sequence)", async (ctx) => {
    const rt = needRuntime(h, ctx);
    const config = makeConfig('tiny', 37, 'coder', { nCtx: 24 });
    const shapes = new Map(parameterSpecs(config).map((p) => [p.name, p.shape]));
    const model = new DeviceTransformer(
      rt,
      gptTransformerConfig(config),
      float32Tensors(initialValues(config, 23), (name) => shapes.get(name)),
      { contextLength: 24, trainable: true },
    );
    const policy = new DevicePolicy(rt, model, 'weights');
    const perRow = 4 * policy.activationFloatsPerRow();
    expect(policy.rowsPerMicroBatch(300 * perRow, 24)).toBe(300);
    expect(policy.rowsPerMicroBatch(10 * perRow, 24)).toBe(24);
    expect(policy.rowsPerMicroBatch(1 << 30, 24)).toBeGreaterThan(300);
    policy.free();
  });

  for (const shared of [false, true])
    it(`three micro-batches or more with accumulated gradients give the one-pass update${shared ? ' (packed rows, whole rows a pass)' : ''}`, async () => {
      const config = makeConfig('tiny', 37, 'coder', { nCtx: 24 });
      const values = initialValues(config, 22);
      const options = (memoryBudgetBytes: number): RoleTrainerOptions => ({
        learningRate: 1e-3,
        temperature: 1,
        numIterations: 1,
        maxGradNorm: 1,
        loss: { lossType: 'dr_grpo', epsilonLow: 0.2, epsilonHigh: 0.28, beta: 0.04 },
        padId: 0,
        memoryBudgetBytes,
      });
      const seqs = sequences(9, shared);
      const one = await train('kernels', values, options(1 << 30), seqs);
      // A budget of a few rows' activations: every micro-batch holds one sequence or two.
      const many = await train('kernels', values, options(1), seqs);
      expect(one.updates[0]!.microBatches).toBe(1);
      expect(many.updates[0]!.microBatches).toBeGreaterThanOrEqual(3);
      const [ua, ub] = [one.updates[1]!, many.updates[1]!];
      expectClose([ub.metrics.loss], [ua.metrics.loss], 1e-6, 1e-4, 'loss');
      expectClose([ub.gradNorm], [ua.gradNorm], 1e-6, 1e-4, 'grad norm');
      expectClose([ub.metrics.kl ?? 0], [ua.metrics.kl ?? 0], 1e-7, 1e-4, 'kl');
      for (const [name, ref] of one.weights)
        expectClose(many.weights.get(name)!, ref, 2e-6, 1e-4, name);
    });
});
