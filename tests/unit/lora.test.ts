// LoRA on the lab's GPT-2 (model/lora.ts): the forward with an adapter equals the base with
// PEFT's merged Conv1D weights W + (alpha/r)·(B·A)ᵀ computed in plain TypeScript, on fresh random
// adapters; a fresh adapter (B = 0) changes nothing; an update moves only the adapter (the base
// bit for bit, Adam moments for the adapter only, the KL reference the base); the PEFT files
// round-trip; the settings refuse what cannot run.
import * as tf from '@tensorflow/tfjs-core';
import { beforeAll, describe, expect, it } from 'vitest';
import { runConfigProblems } from '../../src/engine/runConfig';
import { defaultRunConfig } from '../../src/engine/session';
import { initBackend } from '../../src/gpu/backend';
import { createModel, forward, type GPT, makeConfig, readValues } from '../../src/model';
import { gptTransformerConfig } from '../../src/model/config';
import { createLora, loraModules } from '../../src/model/lora';
import { adapterFiles, memorySource, readLora } from '../../src/model/loraFiles';
import { makeVariables } from '../../src/model/params';
import { RoleTrainer } from '../../src/rl/trainer';
import { Rng } from '../../src/tasks/random';
import { filesToRun, runToFiles } from '../../src/ui/persist/runFiles';
import { readZip, writeZip } from '../../src/ui/persist/zip';
import type { RunRecord } from '../../src/ui/state/labStore';

const micro = () => makeConfig('tiny', 13, 'coder', { nEmbd: 8, nLayer: 2, nHead: 2, nCtx: 8 });
const SETTINGS = { rank: 3, alpha: 5, targets: ['c_attn', 'c_proj', 'c_fc'] };

function ids(B: number, T: number, V: number, seed: number): tf.Tensor2D {
  const prng = new Rng(seed);
  return tf.tensor2d(
    Array.from({ length: B * T }, () => prng.below(V)),
    [B, T],
    'int32',
  );
}

/** Random B (a fresh adapter's is zero, which would test nothing). */
function randomizeB(model: GPT, seed: number): void {
  const prng = new Rng(seed);
  for (const { b } of model.lora!.modules.values()) {
    const values = Array.from({ length: b.size }, () => prng.normal() * 0.3);
    b.assign(tf.tensor(values, b.shape));
  }
}

/** PEFT's merge in plain TypeScript: Conv1D W [in, out] += scale · (B·A)ᵀ. */
async function mergedValues(model: GPT): Promise<Map<string, Float32Array>> {
  const values = await readValues(model.params);
  const { scale, settings } = model.lora!;
  for (const { module, inn, out } of loraModules(
    gptTransformerConfig(model.config),
    settings.targets,
  )) {
    const pair = model.lora!.modules.get(module)!;
    const a = (await pair.a.data()) as Float32Array;
    const b = (await pair.b.data()) as Float32Array;
    const w = Float32Array.from(values.get(`${module}.weight`)!);
    for (let i = 0; i < inn; i++)
      for (let o = 0; o < out; o++) {
        let sum = 0;
        for (let k = 0; k < settings.rank; k++) sum += b[o * settings.rank + k]! * a[k * inn + i]!;
        w[i * out + o]! += scale * sum;
      }
    values.set(`${module}.weight`, w);
  }
  return values;
}

describe('LoRA on GPT-2', () => {
  beforeAll(async () => {
    await initBackend('cpu');
  });

  it('targets every c_attn, c_proj and c_fc with PEFT shapes; A kaiming-uniform, B zero', async () => {
    const config = micro();
    const modules = loraModules(gptTransformerConfig(config), SETTINGS.targets);
    expect(modules.map((m) => m.module)).toEqual([
      'transformer.h.0.attn.c_attn',
      'transformer.h.0.attn.c_proj',
      'transformer.h.0.mlp.c_fc',
      'transformer.h.0.mlp.c_proj',
      'transformer.h.1.attn.c_attn',
      'transformer.h.1.attn.c_proj',
      'transformer.h.1.mlp.c_fc',
      'transformer.h.1.mlp.c_proj',
    ]);
    expect(loraModules(gptTransformerConfig(config), ['c_fc']).map((m) => m.module)).toEqual([
      'transformer.h.0.mlp.c_fc',
      'transformer.h.1.mlp.c_fc',
    ]);
    const lora = createLora(gptTransformerConfig(config), SETTINGS, 1);
    for (const { module, inn, out } of modules) {
      const { a, b } = lora.modules.get(module)!;
      expect(a.shape).toEqual([3, inn]);
      expect(b.shape).toEqual([out, 3]);
      const av = await a.data();
      expect(Math.max(...av.map(Math.abs))).toBeLessThanOrEqual(1 / Math.sqrt(inn));
      expect(new Set(av).size).toBe(av.length);
      expect(Array.from(await b.data()).every((v) => v === 0)).toBe(true);
    }
    expect(lora.scale).toBeCloseTo(5 / 3, 12);
  });

  it('a fresh adapter leaves the logits exactly as the base gives them', async () => {
    const base = createModel(micro(), 11);
    const adapted: GPT = {
      ...base,
      lora: createLora(gptTransformerConfig(base.config), SETTINGS, 2),
    };
    const x = ids(2, 8, 13, 3);
    expect(Array.from(await forward(adapted, x).data())).toEqual(
      Array.from(await forward(base, x).data()),
    );
  });

  for (const targets of [['c_attn', 'c_proj', 'c_fc'], ['c_proj'], ['c_attn', 'c_fc']]) {
    it(`the forward equals the base with PEFT's merged weights (targets ${targets})`, async () => {
      for (const seed of [1, 2]) {
        const base = createModel(micro(), 20 + seed);
        const model: GPT = {
          ...base,
          lora: createLora(gptTransformerConfig(base.config), { ...SETTINGS, targets }, seed),
        };
        randomizeB(model, 100 + seed);
        const merged: GPT = {
          config: base.config,
          params: makeVariables(base.config, await mergedValues(model)),
        };
        const x = ids(2, 8, 13, seed);
        const got = await forward(model, x).data();
        const want = await forward(merged, x).data();
        const largest = Math.max(...want.map(Math.abs));
        for (let i = 0; i < want.length; i++)
          expect(Math.abs(got[i]! - want[i]!)).toBeLessThan(1e-5 * largest);
      }
    });
  }

  it('an update moves the adapter only: the base bit for bit, Adam on the adapter, reference = base', async () => {
    const base = createModel(micro(), 31);
    const model: GPT = {
      ...base,
      lora: createLora(gptTransformerConfig(base.config), SETTINGS, 4),
    };
    const before = await readValues(base.params);
    const trainer = new RoleTrainer(model, {
      learningRate: 1e-2,
      temperature: 1,
      numIterations: 1,
      maxGradNorm: 1,
      loss: { lossType: 'grpo', epsilonLow: 0.2, epsilonHigh: 0.2, beta: 0.04 },
      padId: 0,
    });
    const sequences = [
      { prompt: [1, 2, 3], completion: [4, 5], oldLogProbs: [-2.5, -2.5], advantage: 1 },
      { prompt: [1, 2, 3], completion: [6, 7, 8], oldLogProbs: [-2.5, -2.5, -2.5], advantage: -1 },
    ];
    await trainer.update(sequences);
    const after = await readValues(base.params);
    for (const [name, values] of before) expect(after.get(name)).toEqual(values);
    const bs = await Promise.all([...model.lora!.modules.values()].map((p) => p.b.data()));
    expect(bs.some((b) => b.some((v) => v !== 0))).toBe(true);
    const state = await trainer.exportState();
    // Two moments per adapter tensor (A and B of 8 modules), none for the base's 26 tensors.
    expect(state.moments.length).toBe(2 * 2 * 8);
    expect(state.moments[0]!.name).toBe(
      'base_model.model.transformer.h.0.attn.c_attn.lora_A.weight/m',
    );
    expect(state.reference).toBeNull(); // the base is the reference: nothing to save twice
    trainer.dispose();
    expect(base.params.get('transformer.wte.weight')!.isDisposed).toBe(false);
  });

  it("PEFT's files round-trip: names, shapes, config, and the same logits", async () => {
    const base = createModel(micro(), 41);
    const model: GPT = {
      ...base,
      lora: createLora(gptTransformerConfig(base.config), SETTINGS, 5),
    };
    randomizeB(model, 7);
    const files = await adapterFiles(
      model.lora!,
      'public/checkpoints/tiny/coder',
      gptTransformerConfig(base.config),
    );
    const config = JSON.parse(files['adapter_config.json']);
    expect(config).toMatchObject({
      peft_type: 'LORA',
      task_type: 'CAUSAL_LM',
      r: 3,
      lora_alpha: 5,
      target_modules: ['c_attn', 'c_proj', 'c_fc'],
      fan_in_fan_out: true,
      base_model_name_or_path: 'public/checkpoints/tiny/coder',
    });
    const store = {
      'a/adapter_config.json': files['adapter_config.json'],
      'a/adapter_model.safetensors': files['adapter_model.safetensors'],
    };
    const read: GPT = {
      ...base,
      lora: await readLora(memorySource(store, 'a'), gptTransformerConfig(base.config)),
    };
    const x = ids(1, 8, 13, 9);
    expect(Array.from(await forward(read, x).data())).toEqual(
      Array.from(await forward(model, x).data()),
    );
    // An adapter for another shape is refused in words.
    const other = makeConfig('tiny', 13, 'coder', { nEmbd: 16, nLayer: 2, nHead: 2, nCtx: 8 });
    await expect(readLora(memorySource(store, 'a'), gptTransformerConfig(other))).rejects.toThrow(
      /a: transformer\.h\.0\.attn\.c_attn: A and B do not fit/,
    );
  });

  it("the page's run ZIP carries the adapters: adapters/<role>/ at the top and in the snapshot", async () => {
    const base = createModel(micro(), 51);
    const lora = createLora(gptTransformerConfig(base.config), SETTINGS, 6);
    const written = await adapterFiles(
      lora,
      'public/checkpoints/tiny/coder',
      gptTransformerConfig(base.config),
    );
    const config = defaultRunConfig({ loraRank: 3, loraAlpha: 5 });
    const snapshot = {
      step: 1,
      config,
      files: {
        'coder/model.safetensors': new Uint8Array(8).fill(1),
        'adapters/coder/adapter_config.json': new TextEncoder().encode(
          written['adapter_config.json'],
        ),
        'adapters/coder/adapter_model.safetensors': written['adapter_model.safetensors'],
      },
    };
    const run: RunRecord = { id: 'r', name: 'r', config, createdAt: 1, visible: true, points: [] };
    const zipped = readZip(writeZip(runToFiles(run, [], snapshot)));
    expect(zipped['adapters/coder/adapter_model.safetensors']).toEqual(
      written['adapter_model.safetensors'],
    );
    expect(zipped['snapshot/adapters/coder/adapter_config.json']).toBeDefined();
    expect(filesToRun(zipped).snapshot).toEqual(snapshot);
  });

  it('settings: rank, alpha and targets checked (LoRA runs on the kernels too)', () => {
    expect(runConfigProblems(defaultRunConfig({ loraRank: 8 }))).toEqual([]);
    const problems = (c: Parameters<typeof defaultRunConfig>[0]) =>
      runConfigProblems(defaultRunConfig(c)).map((p) => `${p.field}: ${p.message}`);
    expect(problems({ loraRank: 8, backend: 'kernels' })).toEqual([]);
    expect(problems({ loraRank: 0, backend: 'kernels' })).toEqual([]);
    expect(problems({ loraRank: 1.5 })).toEqual([
      'loraRank: loraRank must be a whole number >= 0, got 1.5',
    ]);
    expect(problems({ loraRank: 8, loraAlpha: 0 })[0]).toMatch(/^loraAlpha: /);
    expect(problems({ loraRank: 8, loraTargets: ['nonsense'] })[0]).toMatch(
      /^loraTargets: loraTargets must be some of c_attn, c_proj, c_fc/,
    );
  });
});
