import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { beforeAll, describe, expect, it } from 'vitest';
import { completionText, plannerPrompt } from '../../src/agents/format';
import { initBackend } from '../../src/gpu/backend';
import {
  type CheckpointFiles,
  createModel,
  decodeSafetensors,
  encodeSafetensors,
  loadCheckpoint,
  makeConfig,
  readValues,
  saveCheckpoint,
} from '../../src/model';
import { loadCheckpointDir, saveCheckpointDir } from '../../src/model/checkpointNode';
import { KvCacheSampler } from '../../src/rollout';
import { DEFAULT_MERGES, fitTaskTokenizer } from '../../src/sft/warmStart';
import { CharTokenizer } from '../../src/tokenizer';

const tokenizer = new CharTokenizer();
const config = () =>
  makeConfig('tiny', tokenizer.vocabSize, 'planner', { nEmbd: 16, nLayer: 2, nHead: 2, nCtx: 32 });

async function files(): Promise<CheckpointFiles> {
  return saveCheckpoint(createModel(config(), 11), tokenizer, { seed: 11 });
}

describe('checkpoints', () => {
  beforeAll(async () => {
    await initBackend('cpu');
  });

  it('round-trips bit-exactly through bytes and through disk, with GPT-2 names and layouts', async () => {
    const model = createModel(config(), 11);
    const saved = await saveCheckpoint(model, tokenizer, { seed: 11 });
    const { tensors } = decodeSafetensors(saved['model.safetensors']);
    expect(tensors.get('transformer.h.0.attn.c_attn.weight')!.shape).toEqual([16, 48]);
    expect(tensors.get('transformer.h.1.mlp.c_proj.weight')!.shape).toEqual([64, 16]);
    expect(tensors.has('transformer.ln_f.bias')).toBe(true);
    const cfg = JSON.parse(saved['config.json']);
    expect(cfg).toMatchObject({
      model_type: 'gpt2',
      n_embd: 16,
      n_layer: 2,
      n_head: 2,
      n_positions: 32,
      n_inner: 64,
    });
    expect(cfg).toMatchObject({
      activation_function: 'gelu_new',
      architectures: ['GPT2LMHeadModel'],
      preset: 'tiny',
      role: 'planner',
    });

    const original = await readValues(model.params);
    const fromBytes = loadCheckpoint(saved);
    expect(fromBytes.lab).toEqual({ seed: 11 });
    const dir = await mkdtemp(join(tmpdir(), 'ckpt-'));
    try {
      await saveCheckpointDir(dir, model, tokenizer);
      const fromDisk = await loadCheckpointDir(dir);
      for (const loaded of [fromBytes, fromDisk]) {
        expect(loaded.model.config).toEqual(model.config);
        const values = await readValues(loaded.model.params);
        for (const [name, data] of original) {
          expect(Buffer.from(values.get(name)!.buffer).equals(Buffer.from(data.buffer)), name).toBe(
            true,
          );
        }
      }
    } finally {
      await rm(dir, { recursive: true });
    }
  });

  it('refuses truncated and corrupt files with a clear message', async () => {
    const good = await files();
    const bytes = good['model.safetensors'];
    const withBytes = (b: Uint8Array) => ({ ...good, 'model.safetensors': b });
    expect(() => loadCheckpoint(withBytes(bytes.subarray(0, bytes.length - 10)))).toThrow(
      /truncated/,
    );
    expect(() => loadCheckpoint(withBytes(bytes.subarray(0, 5)))).toThrow(
      /shorter than the 8-byte/,
    );
    expect(() => loadCheckpoint(withBytes(bytes.subarray(0, 40)))).toThrow(/truncated/);
    const garbled = Uint8Array.from(bytes);
    garbled[9] = 0x7b; // '{' inside the header → invalid JSON
    garbled[10] = 0x7b;
    expect(() => loadCheckpoint(withBytes(garbled))).toThrow(/corrupt/);
    const padded = new Uint8Array(bytes.length + 4);
    padded.set(bytes);
    expect(() => loadCheckpoint(withBytes(padded))).toThrow(/belong to no tensor/);
    expect(() => loadCheckpoint({ ...good, 'config.json': '{"model_type": "gpt2"' })).toThrow(
      /config.json is not valid JSON/,
    );
  });

  it('refuses shape mismatches and unknown presets', async () => {
    const good = await files();
    const cfg = JSON.parse(good['config.json']);
    const wider = JSON.stringify({ ...cfg, n_embd: 32, n_inner: 128 });
    expect(() => loadCheckpoint({ ...good, 'config.json': wider })).toThrow(
      /shape mismatch for transformer.wte.weight/,
    );
    const unknown = JSON.stringify({ ...cfg, preset: 'huge' });
    expect(() => loadCheckpoint({ ...good, 'config.json': unknown })).toThrow(
      /unknown preset "huge"/,
    );
    const { tensors } = decodeSafetensors(good['model.safetensors']);
    const bad = tensors.get('transformer.h.0.ln_1.weight')!;
    tensors.set('transformer.h.0.ln_1.weight', { shape: [bad.data.length / 2, 2], data: bad.data });
    expect(() =>
      loadCheckpoint({ ...good, 'model.safetensors': encodeSafetensors(tensors) }),
    ).toThrow(/shape mismatch for transformer.h.0.ln_1.weight/);
  });

  it('the shipped tiny warm start loads, names its roles and writes a numbered plan', async () => {
    // The default's tokenizer is the BPE one the train split gives; the first shipped (char)
    // model is kept beside it with the character vocabulary.
    const bpe = fitTaskTokenizer(DEFAULT_MERGES);
    for (const [folder, expected] of [
      ['tiny', bpe],
      ['tiny-char', tokenizer],
    ] as const) {
      for (const role of ['planner', 'coder'] as const) {
        const {
          model,
          tokenizer: tk,
          lab,
        } = await loadCheckpointDir(`public/checkpoints/${folder}/${role}`, false);
        expect(model.config).toMatchObject({
          preset: 'tiny',
          role,
          nEmbd: 64,
          nLayer: 2,
          nHead: 4,
        });
        expect(tk.vocab).toEqual(expected.vocab);
        expect(lab.seed).toBe(1);
        expect(String(lab.command)).toContain('--preset tiny --seed 1');
      }
      const { model } = await loadCheckpointDir(`public/checkpoints/${folder}/planner`, false);
      const prompt = plannerPrompt(expected, 'Keep the even numbers of the array.');
      const out = await new KvCacheSampler(model).sample([prompt], {
        maxNewTokens: 60,
        temperature: 0,
        topK: 0,
        seed: 1,
        stopId: expected.eosId,
      });
      expect(completionText(expected, out.tokens[0]!)).toMatch(/^1\. /);
    }
  });
});
