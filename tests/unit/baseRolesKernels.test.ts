// Role adapters over one base on the lab's kernels (issue 23; SwiftShader here): in process, one
// update's adapter gradients on the device (host GRPO loss by grpoLossReference, device
// backward) equal tfjs's for the same batch, every A and B within 1e-3 of the tensor's largest;
// as a user runs it, `train -- grpo --base <random Qwen2 folder> --lora-rank 4 --task-set mbxp
// --steps 2 --backend kernels` completes two steps sampled and updated on the kernels with the
// per-role metrics, both adapters in PEFT's layout, and judged MBXP samples; its start event
// names the kernels and their adapter, and the tfjs backend kept for the fall-back.

import { spawnSync } from 'node:child_process';
import { readFileSync, rmSync } from 'node:fs';
import { join } from 'node:path';
import * as tf from '@tensorflow/tfjs-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { initBackend } from '../../src/gpu/backend';
import { destroyKernelDevice, kernelEngineReport } from '../../src/gpu/engine/kernelEngine';
import { roleDeviceCalls } from '../../src/gpu/engine/kernelRoles';
import { adapterGradientsOnDevice } from '../../src/gpu/engine/kernelRoleTraining';
import { sampledCounts } from '../../src/gpu/engine/modelSampling';
import '../../src/gpu/engine/selfCheck'; // registers the start's checks
import { checksFor } from '../../src/gpu/engine/selfCheck/checksByConfig';
import { kernelChecks } from '../../src/gpu/engine/selfCheck/registry';
import { parseLlamaConfig } from '../../src/model/families/hfConfig';
import { llamaTransformerConfig } from '../../src/model/families/llamaConfig';
import { PEFT_PREFIX } from '../../src/model/lora';
import { decodeSafetensors } from '../../src/model/safetensors';
import { type PolicySequence, RoleTrainer } from '../../src/rl/trainer';
import { KvCacheSampler } from '../../src/rollout';
import { Rng } from '../../src/tasks/random';
import { baseRolesOf, expectDeviceGradients, randomizeB } from './base-roles-fixtures';
import { writeChatFixture } from './hf-fixtures';

process.env.VK_ICD_FILENAMES ??= '/usr/lib/chromium/vk_swiftshader_icd.json';
process.env.XDG_RUNTIME_DIR ??= '/tmp';

let root: string;
let base: string;

beforeAll(() => {
  ({ root, base } = writeChatFixture('base-roles-kernels-'));
});
afterAll(() => rmSync(root, { recursive: true, force: true }));

/** The chat fixture's roles on the kernels (β > 0: the KL term runs), and the Coder's update options. */
async function coderOnKernels(onDemand: boolean) {
  expect((await initBackend('kernels')).kernels).toBe(true);
  return baseRolesOf(base, onDemand);
}

describe('role adapters over one base on the kernels, in process', () => {
  it("one update's adapter gradients equal tfjs's for the same batch", async () => {
    const { roles, coder, options } = await coderOnKernels(false);
    const rng = randomizeB(coder, 11);

    const prompt = roles.prompts.coder(
      { statement: 'Return the sum of a and b.', entryPoint: 'add' },
      '1. add them',
    );
    // Sampled on the device with the Coder's adapter attached.
    const calls = roleDeviceCalls.sample;
    const prefilled = sampledCounts.prefilledTokens;
    const sampling = {
      maxNewTokens: 5,
      temperature: 1,
      topK: 0,
      seed: 4,
      stopId: roles.prompts.stopId,
    };
    const drawn = await new KvCacheSampler(coder).sample([prompt, prompt, prompt], sampling);
    expect(roleDeviceCalls.sample).toBe(calls + 1);
    // The group's prompt is prefilled once, not once per sample.
    expect(sampledCounts.prefilledTokens - prefilled).toBe(prompt.length);
    // A row that reuses another row's prefill samples what it samples after its own prefill:
    // row 2 follows row 0's prompt in the first call, a different prompt in the second.
    const other = roles.prompts.coder(
      { statement: 'Return the product of a and b.', entryPoint: 'mul' },
      '1. multiply them',
    );
    const shared = await new KvCacheSampler(coder).sample([prompt, other, prompt], sampling);
    const alone = await new KvCacheSampler(coder).sample([other, other, prompt], sampling);
    expect(shared.tokens[2]).toEqual(alone.tokens[2]);
    expect(shared.logProbs[2]).toEqual(alone.logProbs[2]);
    expect(shared.tokens[0]).toEqual(drawn.tokens[0]);
    const sequences: PolicySequence[] = drawn.tokens.map((completion, i) => ({
      prompt,
      completion,
      // Off-policy a little, so ratios and the KL term are not trivial.
      oldLogProbs: drawn.logProbs[i]!.map((l) => l + 0.05 * (rng.next() - 0.5)),
      advantage: [1, -0.5, 0.25][i]!,
    }));
    expect(options.loss.beta).toBeGreaterThan(0);
    const trainer = new RoleTrainer(coder, options);
    const host = await trainer.gradients(sequences);
    const device = await adapterGradientsOnDevice(
      coder,
      options,
      trainer.batchLossOptions(sequences),
      sequences,
    );
    expect(device.metrics.kl).not.toBeNull();
    const compared = expectDeviceGradients(coder, host.grads, device.grads);
    expect(compared).toBe(2 * coder.lora!.modules.size);
    tf.dispose([...host.grads.values()]);

    // The update itself runs on the device and writes the adapter back into tfjs.
    const adapterBefore = [...coder.lora!.modules.values()].map((p) => p.b.dataSync().slice());
    const updates = roleDeviceCalls.update;
    const update = await trainer.update(sequences);
    expect(roleDeviceCalls.update).toBe(updates + 1);
    expect(update.skipped).toEqual([]);
    expect(update.gradNorm).toBeGreaterThan(0);
    const moved = [...coder.lora!.modules.values()].some((p, i) =>
      p.b.dataSync().some((v, j) => v !== adapterBefore[i]![j]),
    );
    expect(moved).toBe(true);

    // A snapshot carries the device's Adam state (its moments come back into tfjs's optimizer
    // after each device update), and a resumed trainer holds it again: the device takes it at
    // its next update where tfjs moved the adapter.
    const state = await trainer.exportState();
    expect(state.iterations).toBe(1);
    expect(state.moments).toHaveLength(4 * coder.lora!.modules.size);
    const secondMoments = state.moments.slice(2 * coder.lora!.modules.size);
    expect(secondMoments.some((m) => m.data.some((x) => x > 0))).toBe(true);
    const resumed = new RoleTrainer(coder, options);
    await resumed.importState(state);
    const again = await resumed.exportState();
    expect(again.iterations).toBe(1);
    again.moments.forEach((m, i) => {
      expect(m.name).toBe(state.moments[i]!.name);
      expect(Array.from(m.data)).toEqual(Array.from(state.moments[i]!.data));
    });

    // A resume lands where the run would have: the second update straight on, then that
    // snapshot's adapter and moments put back (the device's moved on meanwhile) and the same
    // second update again — the same adapter.
    const snapshot = [...coder.lora!.modules.values()].map((p) => [p.a.dataSync(), p.b.dataSync()]);
    await trainer.update(sequences);
    const straight = [...coder.lora!.modules.values()].map((p) => p.b.dataSync().slice());
    [...coder.lora!.modules.values()].forEach((p, i) => {
      p.a.assign(tf.tensor(snapshot[i]![0]!, p.a.shape));
      p.b.assign(tf.tensor(snapshot[i]![1]!, p.b.shape));
    });
    await resumed.update(sequences);
    [...coder.lora!.modules.values()].forEach((p, i) => {
      expect(Array.from(p.b.dataSync()), `adapter ${i}`).toEqual(Array.from(straight[i]!));
    });
    resumed.dispose();
    trainer.dispose();
  }, 300_000);

  it('a device lost after an update: sampling and the next update go on on tfjs, from the adapter and Adam state the device last wrote back', async () => {
    // As a kernels run loads it: tfjs makes a base weight only when a forward first reads it.
    const { roles, coder, options } = await coderOnKernels(true);
    const rng = new Rng(12);
    const prompt = roles.prompts.coder(
      { statement: 'Return the larger of a and b.', entryPoint: 'larger' },
      '1. compare them',
    );
    const sequences: PolicySequence[] = [0.75, -0.25, -0.5].map((advantage) => {
      const completion = Array.from({ length: 6 }, () => 1 + rng.below(200));
      return { prompt, completion, oldLogProbs: completion.map(() => -5 + rng.next()), advantage };
    });
    const trainer = new RoleTrainer(coder, options);
    const updates = roleDeviceCalls.update;
    await trainer.update(sequences);
    expect(roleDeviceCalls.update).toBe(updates + 1);
    const adapter = () =>
      [...coder.lora!.modules.values()].map((p) => [
        p.a.dataSync().slice(),
        p.b.dataSync().slice(),
      ]);
    const afterDevice = adapter();
    const state = await trainer.exportState();

    expect(destroyKernelDevice()).toBe(true);
    await expect.poll(() => kernelEngineReport().enabled).toBe(false);
    const samples = roleDeviceCalls.sample;
    const sampling = {
      maxNewTokens: 4,
      temperature: 1,
      topK: 0,
      seed: 5,
      stopId: roles.prompts.stopId,
    };
    const drawn = await new KvCacheSampler(coder).sample([prompt, prompt], sampling);
    expect(drawn.tokens.map((t) => t.length)).toEqual([4, 4]);
    expect(roleDeviceCalls.sample).toBe(samples); // on tfjs: the lost device answered nothing
    const fallBack = await trainer.update(sequences);
    expect(roleDeviceCalls.update).toBe(updates + 1);
    expect(fallBack.skipped).toEqual([]);
    expect((await trainer.exportState()).iterations).toBe(2);
    const afterFallBack = adapter();
    expect(afterFallBack.some(([, b], i) => b!.some((v, j) => v !== afterDevice[i]![1]![j]))).toBe(
      true,
    );

    // The same second update from that adapter and Adam state, on tfjs from the start: the
    // same adapter, to the bit.
    [...coder.lora!.modules.values()].forEach((p, i) => {
      p.a.assign(tf.tensor(afterDevice[i]![0]!, p.a.shape));
      p.b.assign(tf.tensor(afterDevice[i]![1]!, p.b.shape));
    });
    const resumed = new RoleTrainer(coder, options);
    await resumed.importState(state);
    await resumed.update(sequences);
    adapter().forEach(([a, b], i) => {
      expect(Array.from(a!), `A ${i}`).toEqual(Array.from(afterFallBack[i]![0]!));
      expect(Array.from(b!), `B ${i}`).toEqual(Array.from(afterFallBack[i]![1]!));
    });
    resumed.dispose();
    trainer.dispose();
    await initBackend('cpu');
  }, 300_000);
});

describe('train -- grpo --base --backend kernels', () => {
  it('runs two MBXP steps on the kernels with per-role metrics, both adapters, judged samples', () => {
    const out = join(root, 'run-kernels');
    const run = spawnSync(
      'npm',
      [
        'run',
        '--silent',
        'train',
        '--',
        'grpo',
        '--base',
        base,
        '--lora-rank',
        '4',
        '--task-set',
        'mbxp',
        '--steps',
        '2',
        '--backend',
        'kernels',
        '--tasks-per-step',
        '1',
        '--plans',
        '2',
        '--programs',
        '2',
        '--eval-every',
        '0',
        // Random weights never stop: every sample runs to its cap, and two steps of what is
        // checked here (metrics, adapters, judged samples) need no long ones.
        '--plan-tokens',
        '16',
        '--program-tokens',
        '24',
        '--out',
        out,
      ],
      { encoding: 'utf8', timeout: 600_000 },
    );
    expect(run.status, run.stderr + run.stdout).toBe(0);
    const config = JSON.parse(readFileSync(join(out, 'config.json'), 'utf8'));
    expect(config.backend.kernels).toBe(true);
    // The start event carries the kernels' self-check (issue 21): what was checked, in how long.
    const start = run.stdout
      .trim()
      .split('\n')
      .map(
        (line) =>
          JSON.parse(line) as {
            event: string;
            selfCheck?: Record<string, unknown>;
            backend?: string;
            adapter?: string;
            fallback?: string;
          },
      )
      .find((e) => e.event === 'start');
    // It names where the run runs (issue 33): the kernels that sample and update, on their
    // adapter, and apart from them the tfjs backend kept for the fall-back.
    expect(start?.backend).toBe('kernels');
    expect(start?.adapter).toBe(config.backend.adapter);
    expect(start?.adapter).toMatch(/swiftshader/i);
    expect(start?.fallback).toBe(`tfjs ${config.backend.backend}`);
    const selfCheck = start?.selfCheck as
      | { checked: number; failed: string[]; ms: number; compileMs: number }
      | undefined;
    expect(selfCheck?.checked).toBeGreaterThanOrEqual(10);
    // Over a base, the kernels its config needs are checked before the start event, and counted
    // in it: RMSNorm, RoPE, SwiGLU, 16-bit weights, LoRA, attention at its heads of 8 (not Qwen3's
    // q/k norm, nor GELU).
    const needed = checksFor(
      llamaTransformerConfig(
        parseLlamaConfig(JSON.parse(readFileSync(join(base, 'config.json'), 'utf8'))),
      ),
    ).map((c) => c.name);
    expect(needed).toEqual(
      expect.arrayContaining([
        'rmsnorm/forward+backward',
        'rope/forward+inverse',
        'swiglu/forward+backward',
        'lora/up+grads',
        'attention/gqa (heads of 8)',
      ]),
    );
    expect(needed).not.toContain('rmsnorm/per-head (q/k norm)');
    expect(needed).not.toContain('gelu/forward+backward');
    expect(selfCheck?.checked).toBe(kernelChecks().length + needed.length);
    expect(selfCheck?.failed).toEqual([]);
    expect(selfCheck?.compileMs).toBeGreaterThan(0);
    expect(selfCheck?.compileMs).toBeLessThanOrEqual(selfCheck?.ms ?? 0);
    const metrics = readFileSync(join(out, 'metrics.jsonl'), 'utf8')
      .trim()
      .split('\n')
      .map((line) => JSON.parse(line) as Record<string, number>);
    expect(metrics.map((m) => m.step)).toEqual([1, 2]);
    for (const m of metrics)
      for (const role of ['planner', 'coder'])
        for (const name of ['reward', 'reward_std', 'loss', 'grad_norm', 'completions/mean_length'])
          expect(Number.isFinite(m[`${role}/${name}`]), `${role}/${name}`).toBe(true);
    const samples = readFileSync(join(out, 'samples.jsonl'), 'utf8').trim().split('\n');
    expect(samples.length).toBeGreaterThan(0);
    for (const line of samples) {
      const group = JSON.parse(line);
      expect(group.family).toBe('mbxp');
      for (const plan of group.plans)
        for (const program of plan.programs) expect(program.total).toBe(group.tests.length);
    }
    for (const role of ['planner', 'coder']) {
      const dir = join(out, 'adapters', role);
      const cfg = JSON.parse(readFileSync(join(dir, 'adapter_config.json'), 'utf8'));
      expect(cfg).toMatchObject({ peft_type: 'LORA', base_model_name_or_path: base, r: 4 });
      const tensors = decodeSafetensors(
        readFileSync(join(dir, 'adapter_model.safetensors')),
      ).tensors;
      const names = [...tensors.keys()];
      expect(names).toContain(`${PEFT_PREFIX}model.layers.0.self_attn.q_proj.lora_A.weight`);
      // (A random base rarely passes a test: zero advantages leave B at zero, as on wasm.)
      for (const t of tensors.values())
        expect(Array.from(t.data).every(Number.isFinite)).toBe(true);
    }
  }, 600_000);
});
