// A base the lab's kernels hold lives there only (issue 31, "weights live in one place"): loaded
// with the kernels on, a random Qwen2 base is never made in tfjs while its roles sample, update
// (with the KL reference) and sample again on the device; when the kernels turn off mid-run, the
// tfjs sampler makes each weight as its forward first reads it, from the checkpoint's files, and
// draws the same tokens the device drew. The device samples from a copy with the adapter merged
// (the base this small), each layer in one dispatch, and draws what tfjs draws over the adapter.

import { rmSync } from 'node:fs';
import * as tf from '@tensorflow/tfjs-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { loadBaseModel } from '../../src/engine/baseModel';
import { createBaseRoles } from '../../src/engine/baseRoles';
import { defaultRunConfig } from '../../src/engine/session';
import { initBackend } from '../../src/gpu/backend';
import { kernelEngine, markEngineFailed } from '../../src/gpu/engine/kernelEngine';
import { roleDeviceCalls } from '../../src/gpu/engine/kernelRoles';
import { sampledCounts } from '../../src/gpu/engine/modelSampling';
import { folderSource } from '../../src/model/families/folderSourceNode';
import type { HubWeights } from '../../src/model/families/hubWeights';
import { grpoLossOptions } from '../../src/rl/config';
import { RoleTrainer } from '../../src/rl/trainer';
import { KvCacheSampler } from '../../src/rollout';
import { Rng } from '../../src/tasks/random';
import { writeChatFixture } from './hf-fixtures';

process.env.VK_ICD_FILENAMES ??= '/usr/lib/chromium/vk_swiftshader_icd.json';
process.env.XDG_RUNTIME_DIR ??= '/tmp';

let root: string;
let base: string;

beforeAll(() => {
  ({ root, base } = writeChatFixture('base-on-device-'));
});
afterAll(() => rmSync(root, { recursive: true, force: true }));

describe('a base the kernels hold', () => {
  it('is never made in tfjs on the device, and is made from its files when the kernels turn off', async () => {
    const report = await initBackend('kernels');
    expect(report.kernels).toBe(true);
    const tensorsBefore = tf.memory().numTensors;
    const config = defaultRunConfig({ loraRank: 4, base, grpo: { beta: 0.04 } });
    const { base: loaded } = await loadBaseModel(folderSource(base), base, config);
    const weights = loaded.model.weights;
    expect(weights.size).toBe(0);
    expect(weights.has('model.embed_tokens.weight')).toBe(true);

    const roles = createBaseRoles(config, loaded);
    const coder = roles.roles.get('coder')!;
    const rng = new Rng(5);
    for (const { b } of coder.lora!.modules.values())
      b.assign(
        tf.tensor(
          Float32Array.from({ length: b.size }, () => 0.2 * (rng.next() - 0.5)),
          b.shape,
        ),
      );
    const prompt = roles.prompts.coder(
      { statement: 'Return the sum of a and b.', entryPoint: 'add' },
      '1. add them',
    );
    const sampling = {
      maxNewTokens: 6,
      temperature: 1,
      topK: 0,
      seed: 9,
      stopId: roles.prompts.stopId,
    };
    const calls = roleDeviceCalls.sample;
    const fused = sampledCounts.fusedRows;
    const drawn = await new KvCacheSampler(coder).sample([prompt, prompt], sampling);
    expect(roleDeviceCalls.sample).toBe(calls + 1);
    // A base this small samples from an f32 copy with the adapter merged, a layer a dispatch.
    expect(sampledCounts.fusedRows - fused).toBe(2);
    const trainer = new RoleTrainer(coder, {
      learningRate: 1e-3,
      temperature: 1,
      numIterations: 1,
      maxGradNorm: 1,
      loss: grpoLossOptions(config.grpo, 'coder'),
      padId: roles.prompts.stopId,
    });
    const updates = roleDeviceCalls.update;
    const update = await trainer.update(
      drawn.tokens.map((completion, i) => ({
        prompt,
        completion,
        oldLogProbs: drawn.logProbs[i]!,
        advantage: i === 0 ? 1 : -1,
      })),
    );
    expect(roleDeviceCalls.update).toBe(updates + 1);
    expect(update.metrics.kl).not.toBeNull();
    const after = await new KvCacheSampler(coder).sample([prompt, prompt], sampling);
    expect(sampledCounts.fusedRows - fused).toBe(4); // the updated adapter merged again
    // Sampling, the update and its KL reference all ran on the device: tfjs made no weight,
    // and holds no more tensors than the two adapters and their optimizer state.
    expect(weights.size).toBe(0);
    const adapterTensors = 2 * 2 * coder.lora!.modules.size;
    expect(tf.memory().numTensors - tensorsBefore).toBeLessThanOrEqual(4 * adapterTensors + 8);

    // The kernels turn off (a failed device): tfjs samples from here, making every weight.
    markEngineFailed(kernelEngine()!, new Error('a test turns the kernels off'));
    expect(kernelEngine()).toBeNull();
    const onTfjs = await new KvCacheSampler(coder).sample([prompt, prompt], sampling);
    expect(roleDeviceCalls.sample).toBe(calls + 2);
    // Every weight the forward reads, which is every weight of the checkpoint.
    const made = weights.size;
    expect(made).toBeGreaterThan(0);
    (weights as HubWeights).makeAll();
    expect(weights.size).toBe(made);
    expect(onTfjs.tokens).toEqual(after.tokens);
    onTfjs.logProbs.forEach((row, r) => {
      row.forEach((lp, i) => {
        expect(Math.abs(lp - after.logProbs[r]![i]!)).toBeLessThan(1e-4);
      });
    });
    trainer.dispose();
  }, 300_000);
});
