// The Llama family on tfjs against an independent numpy implementation of Hugging Face's
// semantics (tests/reference/hf_llama.py): small random checkpoints in the Hub's layout —
// Qwen2 (q/k/v bias, tied head, GQA, BF16), Llama (no bias, untied, GQA 4:1, F16), Qwen3
// (q/k norms, head_dim ≠ hidden/heads, F32, two shards + index) — give the reference's token
// ids and last-position logits, with and without a PEFT adapter; the KV-cache sampler gives
// what full recomputation gives; bad checkpoints are refused in words, leaving no tensors.

import {
  cpSync,
  existsSync,
  mkdtempSync,
  readdirSync,
  readFileSync,
  rmSync,
  truncateSync,
  writeFileSync,
} from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import * as tf from '@tensorflow/tfjs-core'; // first: its ops must load before register_all_gradients (backend.ts)
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { runHfCommand } from '../../src/cli/modelHf';
import { initBackend } from '../../src/gpu/backend';
import { createModel, disposeModel, makeConfig } from '../../src/model';
import { loadCheckpointDir } from '../../src/model/checkpointNode';
import { folderSource } from '../../src/model/families/folderSourceNode';
import { hubForward } from '../../src/model/families/hubModel';
import { loadHubModel } from '../../src/model/families/load';
import { KvCacheSampler } from '../../src/rollout';
import { gptCausalLM } from '../../src/rollout/gptPolicy';
import { HfTokenizer } from '../../src/tokenizer/hfTokenizer';
import {
  byteLevelTokenizerJson,
  CHAT_TEMPLATE,
  type FixtureName,
  fixtureSpec,
  relativeError,
  writeHfCheckpoint,
  writeLoraAdapter,
} from './hf-fixtures';
import { referenceIds, referenceLogits } from './hf-reference';

const TEXT = "the fun is in the rest, isn't it? 42 <|im_end|>";
const FIXTURES: FixtureName[] = ['qwen2', 'llama', 'qwen3'];

let root: string;
const dir = (name: string) => join(root, name);

beforeAll(async () => {
  await initBackend('cpu');
  root = mkdtempSync(join(tmpdir(), 'hf-llama-'));
  FIXTURES.forEach((name, i) => {
    const config = writeHfCheckpoint(dir(name), fixtureSpec(name), 100 + i);
    writeLoraAdapter(dir(`${name}-lora`), config, { r: 4, alpha: 8 }, 200 + i);
    writeLoraAdapter(
      dir(`${name}-rslora`),
      config,
      { r: 4, alpha: 3, rslora: true, targets: ['q_proj', 'v_proj', 'down_proj'] },
      300 + i,
    );
  });
});

afterAll(() => rmSync(root, { recursive: true, force: true }));

const command = (checkpoint: string, adapter?: string, text = TEXT) =>
  runHfCommand({
    command: 'logits',
    checkpoint,
    adapter,
    text,
    chat: false,
    maxNewTokens: 8,
    temperature: 0,
    topK: 0,
    seed: 1,
  }) as Promise<{ ids: number[]; logits: number[] }>;

describe.each(FIXTURES)('%s checkpoint on tfjs cpu', (name) => {
  it('tokenizes as byte-level BPE does and gives the reference logits', async () => {
    const out = await command(dir(name));
    expect(out.ids).toEqual(referenceIds(dir(name), TEXT));
    const ref = referenceLogits(dir(name), out.ids);
    expect(out.logits).toHaveLength(280);
    expect(relativeError(out.logits, ref)).toBeLessThan(2e-3);
  });

  it.each(['lora', 'rslora'])('with a PEFT %s adapter gives the reference logits', async (kind) => {
    const adapter = dir(`${name}-${kind}`);
    const plain = await command(dir(name));
    const out = await command(dir(name), adapter);
    const ref = referenceLogits(dir(name), out.ids, adapter);
    expect(relativeError(out.logits, ref)).toBeLessThan(2e-3);
    expect(relativeError(plain.logits, ref)).toBeGreaterThan(1e-2); // the adapter matters
  });
});

describe('GPT-2, the lab family of its own models, against the same reference', () => {
  // Every shipped checkpoint's every model (issue 31: they all load as HF GPT-2 and match).
  const root = join(__dirname, '../../public/checkpoints');
  const shipped = readdirSync(root).flatMap((folder) =>
    readdirSync(join(root, folder))
      .filter((role) => existsSync(join(root, folder, role, 'model.safetensors')))
      .map((role) => `${folder}/${role}`),
  );
  it.each(shipped)('%s gives the reference GPT-2 logits', async (name) => {
    const dirPath = join(root, name);
    const { model, tokenizer } = await loadCheckpointDir(dirPath, false);
    const ids = tokenizer.encode('<|statement|>Keep the even numbers.<|plan|>');
    const logits = tf.tidy(() =>
      tf.reshape(
        gptCausalLM(model).logitsAt(
          tf.tensor2d([ids], [1, ids.length], 'int32'),
          tf.tensor1d([ids.length - 1], 'int32'),
        ),
        [-1],
      ),
    );
    const lab = Array.from(await logits.data());
    tf.dispose(logits);
    disposeModel(model);
    const ref = referenceLogits(dirPath, ids);
    expect(relativeError(lab, ref)).toBeLessThan(2e-3);
  });
});

describe('sampling the Llama family with a KV cache', () => {
  it('gives the tokens and log-probs of full recomputation, rows of different lengths together', async () => {
    const loaded = await loadHubModel(folderSource(dir('qwen3')));
    try {
      const prompts = [
        loaded.tokenizer.encode('the fun'),
        loaded.tokenizer.encode('is in the rest of it'),
      ];
      const out = await new KvCacheSampler(loaded.lm).sample(prompts, {
        maxNewTokens: 6,
        temperature: 0,
        topK: 0,
        seed: 3,
        stopId: -1,
      });
      prompts.forEach((prompt, r) => {
        const seq = [...prompt];
        for (let t = 0; t < 6; t++) {
          const row = tf.tidy(() => {
            const logits = hubForward(loaded.model, tf.tensor2d([seq], [1, seq.length], 'int32'));
            const last = tf.reshape(tf.slice(logits, [0, seq.length - 1, 0], [1, 1, -1]), [-1]);
            return tf.logSoftmax(last);
          });
          const logp = row.dataSync();
          row.dispose();
          const best = logp.indexOf(Math.max(...logp));
          expect(out.tokens[r]![t]).toBe(best);
          expect(out.logProbs[r]![t]).toBeCloseTo(logp[best]!, 4);
          seq.push(best);
        }
      });
    } finally {
      for (const t of loaded.model.weights.values()) t.dispose();
    }
  });

  it('logitsAt (the positions the GRPO update reads) equals the full forward at those rows, for both families', async () => {
    const loaded = await loadHubModel(folderSource(dir('llama')));
    const gpt = gptCausalLM(
      createModel(makeConfig('tiny', 40, 'coder', { nEmbd: 16, nLayer: 1, nHead: 2, nCtx: 16 }), 3),
    );
    try {
      for (const lm of [loaded.lm, gpt]) {
        const [picked, whole] = tf.tidy(() => {
          const ids = tf.tensor2d(
            [
              [1, 5, 9, 2, 7],
              [3, 3, 8, 1, 0],
            ],
            [2, 5],
            'int32',
          );
          const rows = tf.tensor1d([1, 4, 6, 8], 'int32'); // sequence 0: 1, 4; sequence 1: 1, 3
          const all = tf.reshape(lm.forward(ids), [10, lm.vocabSize]);
          return [lm.logitsAt(ids, rows), tf.reshape(tf.gather(all, rows), [2, 2, lm.vocabSize])];
        });
        expect(picked.shape).toEqual([2, 2, lm.vocabSize]);
        const [a, b] = [await picked.data(), await whole.data()];
        tf.dispose([picked, whole]);
        expect(Math.max(...a.map((v, i) => Math.abs(v - b[i]!)))).toBeLessThan(1e-5);
      }
    } finally {
      for (const t of loaded.model.weights.values()) t.dispose();
    }
  });

  it('sample --chat renders the chat template and stops at an end-of-turn id', async () => {
    const loaded = await loadHubModel(folderSource(dir('qwen2')));
    try {
      expect(loaded.tokenizer.applyChatTemplate([{ role: 'user', content: 'hi' }])).toBe(
        '<|im_start|>system\nYou are a helpful assistant.<|im_end|>\n<|im_start|>user\nhi<|im_end|>\n<|im_start|>assistant\n',
      );
      expect(loaded.tokenizer.stopIds).toEqual([271, 269]); // generation_config.json: <|im_end|>, <|endoftext|>
      const ids = loaded.tokenizer.encode('<|im_start|>user\nthe fun<|im_end|>');
      expect(ids[0]).toBe(270);
      expect(loaded.tokenizer.decode(ids)).toBe('<|im_start|>user\nthe fun<|im_end|>');
    } finally {
      for (const t of loaded.model.weights.values()) t.dispose();
    }
    const out = (await runHfCommand({
      command: 'sample',
      checkpoint: dir('qwen2'),
      text: 'the fun',
      chat: true,
      maxNewTokens: 5,
      temperature: 1,
      topK: 0,
      seed: 5,
    })) as { prompt: string; ids: number[]; text: string; finished: boolean };
    expect(out.prompt).toContain('<|im_start|>user\nthe fun<|im_end|>\n<|im_start|>assistant\n');
    expect(out.ids.length).toBeGreaterThan(0);
    expect(out.ids.length).toBeLessThanOrEqual(5);
    if (out.finished) expect([271, 269]).toContain(out.ids.at(-1));
    expect(CHAT_TEMPLATE).toContain('add_generation_prompt');
  });
});

describe('a tokenizer that adds a BOS (post_processor TemplateProcessing)', () => {
  it('adds it to plain text, not to a rendered chat template (which holds its own)', () => {
    const { json } = byteLevelTokenizerJson();
    const bos = { id: '<|endoftext|>', type_id: 0 };
    const withBos = {
      ...json,
      post_processor: {
        type: 'TemplateProcessing',
        single: [{ SpecialToken: bos }, { Sequence: { id: 'A', type_id: 0 } }],
        pair: [
          { SpecialToken: bos },
          { Sequence: { id: 'A', type_id: 0 } },
          { Sequence: { id: 'B', type_id: 1 } },
        ],
        special_tokens: {
          '<|endoftext|>': { id: '<|endoftext|>', ids: [269], tokens: ['<|endoftext|>'] },
        },
      },
    };
    const tokenizer = new HfTokenizer(withBos, { chat_template: CHAT_TEMPLATE }, null);
    expect(tokenizer.encode('the')).toEqual([269, 116, 257]);
    expect(tokenizer.encode('the', false)).toEqual([116, 257]);
  });
});

describe('bad checkpoints are refused in words, with nothing left loaded', () => {
  /** A copy of a fixture with one change. */
  const broken = (name: FixtureName, label: string, change: (d: string) => void): string => {
    const d = dir(`broken-${label}`);
    cpSync(dir(name), d, { recursive: true });
    change(d);
    return d;
  };
  const editConfig = (d: string, edit: (c: Record<string, unknown>) => void) => {
    const c = JSON.parse(readFileSync(join(d, 'config.json'), 'utf8'));
    edit(c);
    writeFileSync(join(d, 'config.json'), JSON.stringify(c));
  };

  it.each([
    [
      'config.json is not JSON',
      () =>
        broken('qwen2', 'json', (d) => writeFileSync(join(d, 'config.json'), '{"model_type": ')),
      /config\.json is not valid JSON/,
    ],
    [
      'an unknown family',
      () =>
        broken('qwen2', 'family', (d) =>
          editConfig(d, (c) => {
            c.model_type = 'mamba';
          }),
        ),
      /model_type "mamba" is not a family the lab runs \(known: gpt2, llama, qwen2, qwen3\)/,
    ],
    [
      'a rope_scaling type not implemented',
      () =>
        broken('llama', 'rope', (d) =>
          editConfig(d, (c) => {
            c.rope_scaling = { rope_type: 'yarn', factor: 4 };
          }),
        ),
      /rope_scaling type "yarn" is not implemented/,
    ],
    [
      'a config that does not fit the weights',
      () =>
        broken('llama', 'shape', (d) =>
          editConfig(d, (c) => {
            c.intermediate_size = 40;
          }),
        ),
      /model\.safetensors has model\.layers\.0\.mlp\.gate_proj\.weight of shape \[48,32\], config\.json implies \[40,32\]/,
    ],
    [
      'a missing shard',
      () => broken('qwen3', 'shard', (d) => rmSync(join(d, 'model-00002-of-00002.safetensors'))),
      /model-00002-of-00002\.safetensors \(a shard model\.safetensors\.index\.json names\) is missing/,
    ],
    [
      'a truncated file',
      () => broken('qwen2', 'truncated', (d) => truncateSync(join(d, 'model.safetensors'), 30000)),
      /model\.safetensors is corrupt: .*truncated/,
    ],
    [
      'a missing folder file',
      () => broken('llama', 'tokenizer', (d) => rmSync(join(d, 'tokenizer.json'))),
      /tokenizer\.json is missing/,
    ],
  ])('%s', async (_, make, message) => {
    const d = make();
    const before = tf.memory().numTensors;
    await expect(command(d)).rejects.toThrow(message);
    expect(tf.memory().numTensors).toBe(before);
  });

  it('an adapter for another model is refused by name', async () => {
    await expect(command(dir('qwen2'), dir('qwen3-lora'))).rejects.toThrow(
      /qwen3-lora: model\.layers\.0\.self_attn\.q_proj: the adapter's shapes do not fit the weight \[32,32\]/,
    );
  });
});
