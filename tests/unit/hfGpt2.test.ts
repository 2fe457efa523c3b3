// GPT-2 as the Hub holds it (issue 31: "GPT-2 … and Llama/Qwen2/Qwen3 are configs of it, read by
// one loader per file format"): random checkpoints in openai-community/gpt2's layout — its
// original names without `transformer.` and the attention-mask buffers beside them, or the
// prefixed names with a tied head's copy, F32 or BF16 — load through the same Hugging Face
// loader as the Llama family and give the independent numpy reference's ids and logits
// (tests/reference/hf_llama.py's gpt2_logits) on tfjs and on the kernels, a PEFT adapter on its
// Conv1D layers (fan_in_fan_out) included. What GPT2LMHeadModel would not run as the lab does is
// refused by name.
import { spawnSync } from 'node:child_process';
import { mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import * as tf from '@tensorflow/tfjs-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { runHfCommand } from '../../src/cli/modelHf';
import { putBaseAdapters } from '../../src/engine/baseRoles';
import type { FileMap } from '../../src/engine/types';
import { initBackend } from '../../src/gpu/backend';
import { roleDeviceCalls } from '../../src/gpu/engine/kernelRoles';
import { adapterGradientsOnDevice } from '../../src/gpu/engine/kernelRoleTraining';
import { parseGpt2Config } from '../../src/model/families/hfConfig';
import { hubParameterCount } from '../../src/model/families/hubConfig';
import { decodeSafetensors, encodeSafetensors } from '../../src/model/safetensors';
import { type PolicySequence, RoleTrainer } from '../../src/rl/trainer';
import { KvCacheSampler } from '../../src/rollout';
import { baseRolesOf, expectDeviceGradients, randomizeB } from './base-roles-fixtures';
import {
  type Gpt2HubOptions,
  relativeError,
  writeGpt2HubCheckpoint,
  writeGpt2LoraAdapter,
} from './hf-fixtures';
import { referenceIds, referenceLogits } from './hf-reference';

const TEXT = "the fun is in the rest, isn't it? 42 <|endoftext|>";
const SHAPE = { nEmbd: 32, nLayer: 2, nHead: 4, nPositions: 64 };
const CASES: [string, Gpt2HubOptions][] = [
  ['original names and mask buffers, F32', { ...SHAPE, original: true }],
  [
    'prefixed names with the head copied, BF16',
    { ...SHAPE, original: false, headCopy: true, dtype: 'BF16' },
  ],
  [
    'a head of its own (tie_word_embeddings false), F16',
    { ...SHAPE, original: true, untied: true, dtype: 'F16' },
  ],
];

let root: string;
const dir = (name: string) => join(root, name);

beforeAll(async () => {
  await initBackend('cpu');
  root = mkdtempSync(join(tmpdir(), 'hf-gpt2-'));
  for (const [i, [, options]] of CASES.entries())
    writeGpt2HubCheckpoint(dir(`gpt2-${i}`), options, 40 + i);
  writeGpt2LoraAdapter(dir('gpt2-lora'), SHAPE, { r: 4, alpha: 8 }, 50);
  // Room for the lab's Coder prompts (a few hundred byte-level tokens) as a base.
  writeGpt2HubCheckpoint(dir('gpt2-base'), { ...SHAPE, nPositions: 1024, original: true }, 70);
});

afterAll(() => rmSync(root, { recursive: true, force: true }));

const command = (
  checkpoint: string,
  extra: { adapter?: string; backend?: string; command?: 'logits' | 'info' } = {},
) =>
  runHfCommand({
    command: extra.command ?? 'logits',
    checkpoint,
    ...(extra.adapter ? { adapter: extra.adapter } : {}),
    ...(extra.backend ? { backend: extra.backend } : {}),
    text: TEXT,
    chat: false,
    maxNewTokens: 8,
    temperature: 0,
    topK: 0,
    seed: 1,
  }) as Promise<{ ids: number[]; logits: number[] }>;

describe.each(CASES.map(([name], i) => [name, i] as const))('a Hub GPT-2: %s', (_, i) => {
  const folder = () => dir(`gpt2-${i}`);

  it('tokenizes as byte-level BPE does and gives the reference logits on tfjs', async () => {
    const out = await command(folder());
    expect(out.ids).toEqual(referenceIds(folder(), TEXT));
    const ref = referenceLogits(folder(), out.ids);
    expect(out.logits).toHaveLength(270);
    expect(relativeError(out.logits, ref)).toBeLessThan(1e-5);
  });

  it('gives the reference logits on the kernels, the weights as stored', async () => {
    const out = await command(folder(), { backend: 'kernels' });
    const ref = referenceLogits(folder(), out.ids);
    expect(relativeError(out.logits, ref)).toBeLessThan(1e-5);
  });

  it('with a PEFT adapter on its Conv1D layers gives the reference logits, on tfjs and the kernels', async () => {
    const adapter = dir('gpt2-lora');
    const plain = await command(folder());
    for (const backend of [undefined, 'kernels']) {
      const out = await command(folder(), { adapter, ...(backend ? { backend } : {}) });
      const ref = referenceLogits(folder(), out.ids, adapter);
      expect(relativeError(out.logits, ref), backend ?? 'tfjs').toBeLessThan(1e-5);
      expect(relativeError(plain.logits, ref)).toBeGreaterThan(1e-2); // the adapter matters
    }
  });
});

describe('a Hub GPT-2 config', () => {
  it('counts the parameters GPT2LMHeadModel has (the tied head once, the buffers not at all)', async () => {
    const info = (await command(dir('gpt2-0'), { command: 'info' })) as unknown as {
      parameters: number;
    };
    const d = SHAPE.nEmbd;
    const perLayer =
      4 * d + (d * 3 * d + 3 * d) + (d * d + d) + (d * 4 * d + 4 * d) + (4 * d * d + d);
    expect(info.parameters).toBe(270 * d + SHAPE.nPositions * d + SHAPE.nLayer * perLayer + 2 * d);
  });

  it('refuses in words what the lab would run differently', () => {
    const base = JSON.parse(readFileSync(join(dir('gpt2-0'), 'config.json'), 'utf8'));
    for (const [change, why] of [
      [{ activation_function: 'gelu' }, /activation_function "gelu" is not implemented/],
      [
        { scale_attn_by_inverse_layer_idx: true },
        /scale_attn_by_inverse_layer_idx true is not implemented/,
      ],
      [{ scale_attn_weights: false }, /scale_attn_weights false is not implemented/],
      [{ add_cross_attention: true }, /add_cross_attention true is not implemented/],
      [{ n_head: 5 }, /n_embd 32 is not a multiple of n_head 5/],
      [{ n_layer: 1e6 }, /n_layer 1000000 is over the 1024 the lab reads/],
      // A learned-positions table past what one tensor holds, refused before anything is read.
      [{ n_positions: 2 ** 27 }, /a weight of 4294967296 elements .* is over the 2147483647/],
      [{ layer_norm_epsilon: -1 }, /layer_norm_epsilon must be a positive number, got -1/],
    ] as const)
      expect(() => parseGpt2Config({ ...base, ...change }), JSON.stringify(change)).toThrow(why);
    expect(hubParameterCount(parseGpt2Config({ ...base, n_inner: 64 }))).toBeLessThan(
      hubParameterCount(parseGpt2Config(base)),
    );
  });

  it('refuses a checkpoint that holds a tensor under both names', async () => {
    const folder = dir('gpt2-twice');
    writeGpt2HubCheckpoint(folder, { ...SHAPE, original: true }, 60);
    const file = join(folder, 'model.safetensors');
    const { tensors } = decodeSafetensors(readFileSync(file));
    const wte = tensors.get('wte.weight')!;
    tensors.set('transformer.wte.weight', wte);
    writeFileSync(file, encodeSafetensors(tensors, { format: 'pt' }));
    await expect(command(folder)).rejects.toThrow(
      /model\.safetensors and model\.safetensors both hold transformer\.wte\.weight/,
    );
  });
});

/** The GPT-2 base's roles (β > 0: the KL term runs), the Coder, its update options, a batch. */
async function coderOverGpt2(backend: 'cpu' | 'kernels') {
  expect((await initBackend(backend)).kernels === true).toBe(backend === 'kernels');
  const base = dir('gpt2-base');
  const { loaded, roles, coder, options } = await baseRolesOf(base, backend === 'kernels');
  const prompt = roles.prompts.coder(
    { statement: 'Return the sum of a and b.', entryPoint: 'add' },
    '1. add them',
  );
  const drawn = await new KvCacheSampler(coder).sample([prompt, prompt, prompt, prompt], {
    maxNewTokens: 6,
    temperature: 1,
    topK: 0,
    seed: 4,
    stopId: roles.prompts.stopId,
  });
  const sequences: PolicySequence[] = drawn.tokens.map((completion, i) => ({
    prompt,
    completion,
    oldLogProbs: drawn.logProbs[i]!,
    advantage: [1, -1, 0.5, -0.5][i]!,
  }));
  return { base, loaded, roles, coder, options, sequences };
}

describe('a Hub GPT-2 as a base: role adapters on its Conv1D layers', () => {
  it('an update moves the Coder adapter only; its PEFT files load to the reference logits', async () => {
    const { base, loaded, roles, coder, options, sequences } = await coderOverGpt2('cpu');
    const before = new Map([...loaded.model.weights].map(([n, t]) => [n, t.dataSync().slice()]));
    const trainer = new RoleTrainer(coder, options);
    const update = await trainer.update(sequences);
    expect(update.gradNorm).toBeGreaterThan(0);
    expect(update.metrics.kl).not.toBeNull();
    for (const [name, t] of loaded.model.weights)
      expect(Array.from(t.dataSync()), name).toEqual(Array.from(before.get(name)!));
    const bSum = (role: 'coder' | 'planner') =>
      [...roles.roles.get(role)!.lora!.modules.values()].reduce(
        (s, { b }) => s + tf.sum(tf.abs(b)).dataSync()[0]!,
        0,
      );
    expect(bSum('coder')).toBeGreaterThan(0);
    expect(bSum('planner')).toBe(0);
    trainer.dispose();

    const files: FileMap = {};
    await putBaseAdapters(files, roles);
    const adapter = dir('gpt2-base-coder');
    mkdirSync(adapter, { recursive: true });
    for (const file of ['adapter_config.json', 'adapter_model.safetensors'])
      writeFileSync(join(adapter, file), files[`adapters/coder/${file}`]!);
    expect(JSON.parse(readFileSync(join(adapter, 'adapter_config.json'), 'utf8'))).toMatchObject({
      r: 4,
      fan_in_fan_out: true,
      target_modules: ['c_attn', 'c_proj', 'c_fc'],
    });
    const out = await command(base, { adapter });
    const ref = referenceLogits(base, out.ids, adapter);
    expect(relativeError(out.logits, ref)).toBeLessThan(1e-5);
    const plain = referenceLogits(base, out.ids);
    expect(relativeError(plain, ref)).toBeGreaterThan(1e-5); // the trained adapter is not a no-op
    for (const t of loaded.model.weights.values()) t.dispose();
  }, 120_000);

  it("one update's adapter gradients on the kernels equal tfjs's, and the update runs there", async () => {
    const { loaded, coder, options, sequences } = await coderOverGpt2('kernels');
    randomizeB(coder, 11);
    const trainer = new RoleTrainer(coder, options);
    const host = await trainer.gradients(sequences);
    const device = await adapterGradientsOnDevice(
      coder,
      options,
      trainer.batchLossOptions(sequences),
      sequences,
    );
    expectDeviceGradients(coder, host.grads, device.grads);
    tf.dispose([...host.grads.values()]);
    const updates = roleDeviceCalls.update;
    expect((await trainer.update(sequences)).gradNorm).toBeGreaterThan(0);
    expect(roleDeviceCalls.update).toBe(updates + 1);
    trainer.dispose();
    for (const t of loaded.model.weights.values()) t.dispose();
    await initBackend('cpu');
  }, 300_000);

  it('train -- grpo --base runs two steps on wasm and on the kernels: the same samples, both adapters', () => {
    const samples = ['wasm', 'kernels'].map((backend) => {
      const out = dir(`run-${backend}`);
      const run = spawnSync(
        'npm',
        [
          ...['run', '--silent', 'train', '--', 'grpo', '--base', dir('gpt2-base')],
          ...['--lora-rank', '4', '--steps', '2', '--seed', '1', '--eval-every', '0'],
          ...['--tasks-per-step', '1', '--plans', '2', '--programs', '2'],
          ...['--plan-tokens', '16', '--program-tokens', '24', '--backend', backend, '--out', out],
        ],
        { encoding: 'utf8', timeout: 300_000 },
      );
      expect(run.status, run.stderr + run.stdout).toBe(0);
      const start = run.stdout.split('\n').find((line) => line.includes('"event":"start"'))!;
      expect(JSON.parse(start).backend).toBe(backend);
      for (const role of ['planner', 'coder'])
        expect(
          JSON.parse(readFileSync(join(out, 'adapters', role, 'adapter_config.json'), 'utf8')),
        ).toMatchObject({ fan_in_fan_out: true });
      return readFileSync(join(out, 'samples.jsonl'), 'utf8');
    });
    expect(samples[1]).toBe(samples[0]);
  }, 600_000);
});
