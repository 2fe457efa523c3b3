// GPT-2 on the kernels' one model (gpu/engine/deviceTransformer.ts, configured by gptTransformerConfig:
// LayerNorm with bias, learned positions, GELU in fc's epilogue, a bias on every projection,
// Conv1D weights transposed as they are uploaded): a shipped checkpoint's logits against the
// independent numpy GPT-2 (tests/reference/hf_llama.py), through `npm run model -- logits
// --backend kernels` as a user runs it; and a GPT-2 wider than the tiny presets (320 wide,
// heads of 64), a LoRA adapter merged in, its prefill and decode steps against tfjs's forward,
// which applies the adapter in the forward instead; and LoRA training over a GPT-2 base on the
// kernels (devicePolicy.ts with GPT-2's switches: LayerNorm's backward, GELU on its own after
// fc's adapter, learned positions per packed row): log-probs and every adapter gradient against
// tfjs's autodiff of the same model.
import { spawnSync } from 'node:child_process';
import { readFileSync } from 'node:fs';
import * as tf from '@tensorflow/tfjs-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { initBackend } from '../../src/gpu/backend';
import { gptForDevice, logitsOnDevice } from '../../src/gpu/engine/deviceCalls';
import { float32Tensors } from '../../src/gpu/engine/deviceCheckpoint';
import { DevicePolicy } from '../../src/gpu/engine/devicePolicy';
import { DeviceTransformer } from '../../src/gpu/engine/deviceTransformer';
import {
  type Adapters,
  adapterKey,
  GPT2_DEVICE_TARGETS,
  type LoraTarget,
} from '../../src/gpu/engine/loraAdapters';
import { setShaderOverridesForTest } from '../../src/gpu/engine/selfCheck/testHook';
import { gptTransformerConfig, type ModelConfig, makeConfig } from '../../src/model/config';
import {
  createModel,
  disposeModel,
  forward,
  type GPT,
  sequenceLogProbs,
} from '../../src/model/gpt';
import { createLora } from '../../src/model/lora';
import { readValues } from '../../src/model/params';
import { Rng } from '../../src/tasks/random';
import { randomBatch, tfjsGradients, tfjsLogProbs } from './gpt-gradients';
import { referenceLogits } from './hf-reference';
import { kernelRuntime, needRuntime } from './kernels-harness';
import { relativeToLargest } from './llama-device-fixtures';

const h = kernelRuntime();
const SHIPPED = 'public/checkpoints/tiny/coder';

describe('GPT-2 on the kernels’ one model', () => {
  it('model logits --backend kernels on a shipped checkpoint gives the numpy reference’s logits', () => {
    const run = spawnSync(
      'npm',
      [
        'run',
        '--silent',
        'model',
        '--',
        'logits',
        '--checkpoint',
        SHIPPED,
        '--backend',
        'kernels',
      ].concat(['--text', 'function solve(xs) { return xs']),
      { encoding: 'utf8', timeout: 120_000 },
    );
    expect(run.status, run.stderr).toBe(0);
    const lab = JSON.parse(run.stdout) as { ids: number[]; logits: number[] };
    const numpy = referenceLogits(SHIPPED, lab.ids);
    expect(lab.logits).toHaveLength(numpy.length);
    expect(relativeToLargest(lab.logits, numpy)).toBeLessThan(1e-5);
  });

  const models: GPT[] = [];
  beforeAll(async () => {
    await initBackend('cpu'); // tfjs's float32 forward is the comparison
  });
  afterAll(() => {
    for (const m of models) disposeModel(m);
  });

  it('model logits on the kernels checks the start’s kernels too: a wrong LayerNorm refuses a GPT-2, in words', async (ctx) => {
    needRuntime(h, ctx);
    const model = createModel(makeConfig('tiny', 31, 'coder', { nCtx: 16 }), 4);
    models.push(model);
    const { config, weights } = await gptForDevice(model);
    const LAYERNORM = readFileSync(
      new URL('../../shaders/layernorm.wgsl', import.meta.url),
      'utf8',
    );
    const wrong = LAYERNORM.replace(
      'rstd * gamma[j] + beta[j]',
      'rstd * gamma[j] * 1.01 + beta[j]',
    );
    expect(wrong).not.toBe(LAYERNORM);
    setShaderOverridesForTest({ 'layernorm.wgsl': wrong });
    try {
      await expect(logitsOnDevice(config, weights, [3, 4, 5])).rejects.toThrow(
        /self-check on this device: layernorm\/forward\+backward at start: \w+\[\d+\] off by/,
      );
    } finally {
      setShaderOverridesForTest({});
    }
    expect((await logitsOnDevice(config, weights, [3, 4, 5])).length).toBe(31);
  });

  it('a GPT-2 wider than the tiny presets, a LoRA adapter merged in: prefill and decode steps equal tfjs’s forward with the adapter applied', async (ctx) => {
    const rt = needRuntime(h, ctx);
    // 320 wide, 5 heads of 64, MLP 1280: wider than the tiny presets.
    const config = makeConfig('tiny', 97, 'coder', { nEmbd: 320, nHead: 5, nLayer: 2, nCtx: 32 });
    const model = createModel(config, 5);
    models.push(model);
    model.lora = createLora(
      gptTransformerConfig(config),
      { rank: 4, alpha: 8, targets: ['c_attn', 'c_proj', 'c_fc'] },
      6,
    );
    const rng = new Rng(7);
    for (const pair of model.lora.modules.values())
      pair.b.assign(
        tf.tensor(
          Float32Array.from({ length: pair.b.size }, () => rng.next() - 0.5),
          pair.b.shape,
        ),
      );
    const { config: tc, weights } = await gptForDevice(model);
    const device = new DeviceTransformer(rt, tc, weights, { contextLength: 16 });
    const ids = [3, 17, 42, 8, 96, 0, 55];
    const want = await forward(model, tf.tensor2d([ids], [1, ids.length], 'int32')).data();
    const V = config.vocabSize;
    const at = (t: number) => want.subarray(t * V, (t + 1) * V);
    // A prompt of four, then three decode steps.
    expect(relativeToLargest(await device.prefill(ids.slice(0, 4)), at(3))).toBeLessThan(1e-4);
    for (let t = 4; t < ids.length; t++)
      expect(
        relativeToLargest(await device.step(ids[t] as number), at(t)),
        `position ${t}`,
      ).toBeLessThan(1e-4);
  });

  /** A GPT-2 with an adapter on every projection, B random (a fresh one's B is 0). */
  function adaptedGpt(config: ModelConfig, seed: number): GPT {
    const model = createModel(config, seed);
    models.push(model);
    model.lora = createLora(
      gptTransformerConfig(config),
      { rank: 4, alpha: 8, targets: ['c_attn', 'c_proj', 'c_fc'] },
      seed + 1,
    );
    const rng = new Rng(seed + 2);
    for (const pair of model.lora.modules.values())
      pair.b.assign(
        tf.tensor(
          Float32Array.from({ length: pair.b.size }, () => rng.next() - 0.5),
          pair.b.shape,
        ),
      );
    return model;
  }

  /** The policy over the base (the adapter not merged), holding the model's adapter. */
  async function devicePolicy(rt: ReturnType<typeof needRuntime>, model: GPT) {
    const values = await readValues(model.params);
    const weights = float32Tensors(values, (name) => model.params.get(name)?.shape);
    const base = new DeviceTransformer(rt, gptTransformerConfig(model.config), weights, {
      contextLength: 24,
    });
    const adapters: Adapters = new Map();
    for (const [module, pair] of model.lora?.modules ?? []) {
      const [, layer, target] = /\.h\.(\d+)\.(.+)$/.exec(module) as RegExpExecArray;
      adapters.set(adapterKey(Number(layer), target as LoraTarget), {
        A: (await pair.a.data()) as Float32Array,
        B: (await pair.b.data()) as Float32Array,
      });
    }
    const lora = { rank: 4, alpha: 8, targets: GPT2_DEVICE_TARGETS };
    return { policy: new DevicePolicy(rt, base, lora, adapters), adapters };
  }

  for (const [label, shape] of [
    ['heads of 16', { nEmbd: 64, nHead: 4 }],
    ['heads of 64', { nEmbd: 128, nHead: 2 }],
  ] as const)
    it(`LoRA over a GPT-2 base (${label}): log-probs and every adapter gradient equal tfjs’s autodiff`, async (ctx) => {
      const rt = needRuntime(h, ctx);
      const config = makeConfig('tiny', 61, 'coder', { ...shape, nLayer: 2, nCtx: 24 });
      const model = adaptedGpt(config, 11);
      const { policy } = await devicePolicy(rt, model);
      const { sequences, dlogp } = randomBatch(config.vocabSize, [9, 14, 6], 13);
      const { logp, grads } = await policy.adapterGradients({ sequences }, dlogp);
      // tfjs: Σ dlogp·logπ over each sequence, differentiated w.r.t. the adapter's A and B.
      const lora = model.lora as NonNullable<GPT['lora']>;
      const variables = [...lora.modules.values()].flatMap((p) => [p.a, p.b]);
      const want = tfjsGradients(model, sequences, dlogp, variables);
      for (const [i, q] of sequences.entries())
        expect(
          relativeToLargest(logp[i] as Float32Array, await tfjsLogProbs(model, q)),
          `log-probs ${i}`,
        ).toBeLessThan(1e-5);
      for (const [module, pair] of lora.modules) {
        const [, layer, target] = /\.h\.(\d+)\.(.+)$/.exec(module) as RegExpExecArray;
        const got = grads.get(adapterKey(Number(layer), target as LoraTarget));
        expect(got, module).toBeDefined();
        const a = await (want[pair.a.name] as tf.Tensor).data();
        const b = await (want[pair.b.name] as tf.Tensor).data();
        expect(relativeToLargest(got?.A as Float32Array, a), `${module} dA`).toBeLessThan(1e-4);
        expect(relativeToLargest(got?.B as Float32Array, b), `${module} dB`).toBeLessThan(1e-4);
      }
      tf.dispose(Object.values(want));
      policy.free();
    });

  it('sampling with the adapter attached to a GPT-2 base (GELU after fc’s adapter): prefill and decode steps equal tfjs’s forward', async (ctx) => {
    const rt = needRuntime(h, ctx);
    const config = makeConfig('tiny', 61, 'coder', { nEmbd: 64, nHead: 4, nLayer: 2, nCtx: 24 });
    const model = adaptedGpt(config, 31);
    const { policy } = await devicePolicy(rt, model);
    policy.attach();
    const ids = [4, 8, 15, 16, 23, 42];
    const want = await forward(model, tf.tensor2d([ids], [1, ids.length], 'int32')).data();
    const V = config.vocabSize;
    const at = (t: number) => want.subarray(t * V, (t + 1) * V);
    expect(relativeToLargest(await policy.model.prefill(ids.slice(0, 3)), at(2))).toBeLessThan(
      1e-5,
    );
    for (let t = 3; t < ids.length; t++)
      expect(relativeToLargest(await policy.model.step(ids[t] as number), at(t))).toBeLessThan(
        1e-5,
      );
    policy.detach();
    policy.free();
  });

  it('a GRPO group over a GPT-2 base shares its prompt in one row (learned positions per segment): each completion’s log-probs as alone', async (ctx) => {
    const rt = needRuntime(h, ctx);
    const config = makeConfig('tiny', 61, 'coder', { nEmbd: 64, nHead: 4, nLayer: 2, nCtx: 24 });
    const model = adaptedGpt(config, 21);
    const { policy } = await devicePolicy(rt, model);
    const prompt = [5, 9, 33, 2, 40];
    const sequences = [
      [...prompt, 7, 8, 9],
      [...prompt, 60, 1],
      [...prompt, 12, 13, 14, 15],
    ];
    const scoredFrom = sequences.map(() => prompt.length - 1);
    const logp = await policy.logProbs({ sequences, scoredFrom });
    for (const [i, q] of sequences.entries()) {
      const lp = await sequenceLogProbs(model, tf.tensor2d([q], [1, q.length], 'int32')).data();
      const from = prompt.length - 1;
      expect(
        relativeToLargest((logp[i] as Float32Array).subarray(from), lp.subarray(from)),
        `sequence ${i}`,
      ).toBeLessThan(1e-5);
    }
    policy.free();
  });
});
