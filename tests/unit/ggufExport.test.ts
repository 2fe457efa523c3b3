// The GGUF writer and export read back by an independent reader (gguf-reader.ts, from the
// specification): every value type, the alignment, llama.cpp's keys and tensor names for each
// family, the q/k row permutation for `llama` only (checked against convert_hf_to_gguf.py's
// reshape/swap written out here), the LoRA merge W + (alpha/r)·B·A, the tokenizer metadata, and
// the refusals (a missing adapter folder, an adapter for another base, an unsupported dtype), each
// one line naming the file, with nothing written.

import { execFileSync } from 'node:child_process';
import { existsSync, mkdtempSync, readdirSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { exportGguf } from '../../src/cli/modelGguf';
import { roleGguf } from '../../src/engine/roleGguf';
import type { RunSnapshot } from '../../src/engine/types';
import { folderSource } from '../../src/model/families/folderSourceNode';
import { ggufParts } from '../../src/model/gguf/ggufFile';
import { readSafetensors, toFloat32 } from '../../src/model/safetensors';
import { gpt2LastLogProbs } from './gguf-gpt2-reference';
import { readGguf } from './gguf-reader';
import {
  type FixtureName,
  fixtureSpec,
  writeGpt2HubCheckpoint,
  writeGpt2LoraAdapter,
  writeHfCheckpoint,
  writeLoraAdapter,
} from './hf-fixtures';
import { referenceLogits } from './hf-reference';

const TINY = join(__dirname, '../../public/checkpoints/tiny/coder');
let root: string;

function concat(parts: Uint8Array[]): Uint8Array {
  const out = new Uint8Array(parts.reduce((n, p) => n + p.length, 0));
  let at = 0;
  for (const p of parts) {
    out.set(p, at);
    at += p.length;
  }
  return out;
}

/** A weight of the fixture's safetensors, widened. */
function hfWeight(dir: string, name: string): { shape: number[]; values: Float32Array } {
  const { tensors } = readSafetensors(readFileSync(join(dir, 'model.safetensors')), dir);
  const t = tensors.get(name)!;
  return { shape: t.shape, values: toFloat32(t) };
}

beforeAll(() => {
  root = mkdtempSync(join(tmpdir(), 'gguf-export-'));
  const names: FixtureName[] = ['qwen2', 'llama', 'qwen3'];
  names.forEach((name, i) => {
    const config = writeHfCheckpoint(join(root, name), fixtureSpec(name), 100 + i);
    writeLoraAdapter(join(root, `${name}-lora`), config, { r: 4, alpha: 8 }, 200 + i);
  });
  const gpt2 = { nEmbd: 32, nLayer: 2, nHead: 4, nPositions: 64 };
  writeGpt2HubCheckpoint(join(root, 'gpt2-hub'), { ...gpt2, original: true }, 300);
  writeGpt2LoraAdapter(join(root, 'gpt2-hub-lora'), gpt2, { r: 4, alpha: 8 }, 301);
  writeGpt2HubCheckpoint(join(root, 'gpt2-untied'), { ...gpt2, original: true, untied: true }, 302);
});

afterAll(() => rmSync(root, { recursive: true, force: true }));

describe('the GGUF writer', () => {
  it('writes every value type, 32-byte aligned tensors, and reads back the same', () => {
    const bytes = concat(
      ggufParts({
        metadata: [
          ['a.u32', { type: 'u32', value: 7 }],
          ['a.i32', { type: 'i32', value: -3 }],
          ['a.f32', { type: 'f32', value: 0.5 }],
          ['a.bool', { type: 'bool', value: true }],
          ['a.string', { type: 'string', value: 'héllo' }],
          ['a.u64', { type: 'u64', value: 2 ** 40 }],
          ['a.strings', { type: 'array-string', value: ['x', '', 'Ġy'] }],
          ['a.ints', { type: 'array-i32', value: [1, -2, 3] }],
          ['a.floats', { type: 'array-f32', value: [1.5, -2] }],
        ],
        tensors: [
          {
            name: 'odd',
            dims: [3],
            type: 'F32',
            data: new Uint8Array(new Float32Array([1, 2, 3]).buffer),
          },
          {
            name: 'half',
            dims: [2, 1],
            type: 'F16',
            data: new Uint8Array(new Uint16Array([0x3c00, 0xc000]).buffer),
          },
        ],
      }),
    );
    const g = readGguf(bytes);
    expect(g.version).toBe(3);
    expect(Object.fromEntries(g.metadata)).toEqual({
      'a.u32': 7,
      'a.i32': -3,
      'a.f32': 0.5,
      'a.bool': true,
      'a.string': 'héllo',
      'a.u64': 2n ** 40n,
      'a.strings': ['x', '', 'Ġy'],
      'a.ints': [1, -2, 3],
      'a.floats': [1.5, -2],
    });
    expect(g.dataStart % 32).toBe(0);
    expect([...g.tensors.values()].map((t) => t.offset)).toEqual([0, 32]);
    expect(Array.from(g.tensors.get('odd')!.values)).toEqual([1, 2, 3]);
    expect(Array.from(g.tensors.get('half')!.values)).toEqual([1, -2]);
    expect(bytes.length).toBe(g.dataStart + 32 + 32);
  });

  it('refuses a tensor whose bytes do not fit its dims, and a key written twice', () => {
    const t = { name: 'x', dims: [2], type: 'F32' as const, data: new Uint8Array(4) };
    expect(() => ggufParts({ metadata: [], tensors: [t] })).toThrow(/x has 4 bytes/);
    const k = ['k', { type: 'u32', value: 1 }] as const;
    expect(() => ggufParts({ metadata: [[...k], [...k]], tensors: [] })).toThrow(/twice/);
  });
});

describe('export-gguf', () => {
  it('writes a Llama in llama.cpp conventions: keys, names, q/k rows permuted per head, tokenizer', async () => {
    const out = join(root, 'llama.gguf');
    const r = await exportGguf({ checkpoint: join(root, 'llama'), out });
    expect(r).toMatchObject({ architecture: 'llama', dtype: 'f16' });
    const g = readGguf(readFileSync(out));
    const m = g.metadata;
    expect(m.get('general.architecture')).toBe('llama');
    expect(m.get('general.file_type')).toBe(1);
    expect(m.get('llama.block_count')).toBe(2);
    expect(m.get('llama.embedding_length')).toBe(32);
    expect(m.get('llama.feed_forward_length')).toBe(48);
    expect(m.get('llama.attention.head_count')).toBe(8);
    expect(m.get('llama.attention.head_count_kv')).toBe(2);
    expect(m.get('llama.context_length')).toBe(256);
    expect(m.get('llama.rope.freq_base')).toBe(10000);
    expect(m.get('llama.attention.layer_norm_rms_epsilon')).toBeCloseTo(1e-5, 10);
    expect(m.has('llama.attention.key_length')).toBe(false);
    // Tokenizer: 280 rows, 272 tokens the tokenizer has, the rest padding.
    const tokens = m.get('tokenizer.ggml.tokens') as string[];
    const types = m.get('tokenizer.ggml.token_type') as number[];
    expect(m.get('tokenizer.ggml.model')).toBe('gpt2');
    expect(m.get('tokenizer.ggml.pre')).toBe('gpt-2');
    expect(tokens).toHaveLength(280);
    expect(tokens[256]).toBe('Ġt');
    expect(tokens[269]).toBe('<|endoftext|>');
    expect(types[269]).toBe(3);
    expect(types[100]).toBe(1);
    expect(tokens[279]).toBe('[PAD279]');
    expect(types[279]).toBe(5);
    expect((m.get('tokenizer.ggml.merges') as string[])[2]).toBe('Ġt he');
    expect(m.get('tokenizer.ggml.bos_token_id')).toBe(269);
    expect(m.get('tokenizer.ggml.eos_token_id')).toBe(271);
    expect(m.get('tokenizer.chat_template')).toMatch(/im_start/);
    expect([...g.tensors.keys()]).toEqual([
      'token_embd.weight',
      ...[0, 1].flatMap((i) =>
        [
          'attn_norm',
          'attn_q',
          'attn_k',
          'attn_v',
          'attn_output',
          'ffn_norm',
          'ffn_gate',
          'ffn_up',
          'ffn_down',
        ].map((n) => `blk.${i}.${n}.weight`),
      ),
      'output_norm.weight',
      'output.weight',
    ]);
    expect(g.tensors.get('blk.0.attn_q.weight')!.dims).toEqual([32, 32]);
    expect(g.tensors.get('blk.0.attn_k.weight')!.dims).toEqual([32, 8]);
    expect(g.tensors.get('blk.0.attn_norm.weight')!.type).toBe(0);
    // convert_hf_to_gguf.py: w.reshape(heads, 2, rows/heads/2, cols).swapaxes(1, 2).reshape(w.shape).
    for (const [hf, gg, heads] of [
      ['q_proj', 'attn_q', 8],
      ['k_proj', 'attn_k', 2],
    ] as const) {
      const w = hfWeight(join(root, 'llama'), `model.layers.1.self_attn.${hf}.weight`);
      const [rows, cols] = w.shape as [number, number];
      const half = rows / heads / 2;
      const got = g.tensors.get(`blk.1.${gg}.weight`)!.values;
      for (let h = 0; h < heads; h++)
        for (let i = 0; i < half; i++)
          for (let j = 0; j < 2; j++)
            for (let c = 0; c < cols; c++)
              expect(got[((h * half + i) * 2 + j) * cols + c]).toBe(
                w.values[((h * 2 + j) * half + i) * cols + c],
              );
    }
  });

  it('keeps Qwen2 rows as they are (NeoX RoPE) and writes its biases; Qwen3 its q/k norms and head width', async () => {
    await exportGguf({ checkpoint: join(root, 'qwen2'), out: join(root, 'qwen2.gguf') });
    const q2 = readGguf(readFileSync(join(root, 'qwen2.gguf')));
    expect(q2.metadata.get('general.file_type')).toBe(32);
    expect(q2.tensors.has('output.weight')).toBe(false);
    expect(q2.tensors.has('blk.0.attn_q.bias')).toBe(true);
    const w = hfWeight(join(root, 'qwen2'), 'model.layers.0.self_attn.q_proj.weight');
    expect(Array.from(q2.tensors.get('blk.0.attn_q.weight')!.values)).toEqual(Array.from(w.values));
    await exportGguf({
      checkpoint: join(root, 'qwen3'),
      out: join(root, 'qwen3.gguf'),
      dtype: 'f16',
    });
    const q3 = readGguf(readFileSync(join(root, 'qwen3.gguf')));
    expect(q3.metadata.get('qwen3.attention.key_length')).toBe(16);
    expect(q3.metadata.get('qwen3.attention.value_length')).toBe(16);
    expect(q3.tensors.get('blk.2.attn_q_norm.weight')!.dims).toEqual([16]);
    expect(q3.tensors.get('blk.0.ffn_up.weight')!.type).toBe(1);
  });

  it('merges the adapter: W + (alpha/r)·B·A', async () => {
    const out = join(root, 'qwen2-lora.gguf');
    await exportGguf({
      checkpoint: join(root, 'qwen2'),
      adapter: join(root, 'qwen2-lora'),
      out,
      dtype: 'f32',
    });
    const g = readGguf(readFileSync(out));
    const { tensors } = readSafetensors(
      readFileSync(join(root, 'qwen2-lora', 'adapter_model.safetensors')),
      'a',
    );
    const prefix = 'base_model.model.model.layers.1.mlp.down_proj';
    const a = toFloat32(tensors.get(`${prefix}.lora_A.weight`)!);
    const b = toFloat32(tensors.get(`${prefix}.lora_B.weight`)!);
    const w = hfWeight(join(root, 'qwen2'), 'model.layers.1.mlp.down_proj.weight');
    const [rows, cols] = w.shape as [number, number];
    const got = g.tensors.get('blk.1.ffn_down.weight')!.values;
    for (const [o, i] of [
      [0, 0],
      [rows - 1, cols - 1],
      [5, 17],
    ] as const) {
      let ba = 0;
      for (let k = 0; k < 4; k++) ba += b[o * 4 + k]! * a[k * cols + i]!;
      expect(got[o * cols + i]).toBeCloseTo(w.values[o * cols + i]! + (8 / 4) * ba, 6);
    }
  });

  it("writes the lab's tiny GPT-2 as llama.cpp's gpt2: Conv1D weights transposed, tokens in GPT-2's byte alphabet", async () => {
    const out = join(root, 'tiny.gguf');
    await exportGguf({ checkpoint: TINY, out });
    const g = readGguf(readFileSync(out));
    expect(g.metadata.get('general.architecture')).toBe('gpt2');
    expect(g.metadata.get('gpt2.attention.layer_norm_epsilon')).toBeCloseTo(1e-5, 10);
    expect(g.tensors.get('blk.0.attn_qkv.weight')!.dims).toEqual([64, 192]);
    expect(g.tensors.get('position_embd.weight')!.dims).toEqual([64, 448]);
    const tokens = g.metadata.get('tokenizer.ggml.tokens') as string[];
    expect(tokens[8]).toBe('Ċ'); // '\n'
    expect(tokens[10]).toBe('Ġ'); // ' '
    expect(tokens[1]).toBe('<|endoftext|>');
    expect(g.metadata.get('tokenizer.ggml.pre')).toBe('default');
  });

  it("writes a Hub GPT-2 (its original names) with a PEFT adapter as llama.cpp's gpt2: the numpy reference's logits", async () => {
    const checkpoint = join(root, 'gpt2-hub');
    const adapter = join(root, 'gpt2-hub-lora');
    const out = join(root, 'gpt2-hub.gguf');
    expect(await exportGguf({ checkpoint, adapter, out })).toMatchObject({
      architecture: 'gpt2',
      dtype: 'f32',
      tensors: 4 + 2 * 12 + 1,
    });
    const g = readGguf(readFileSync(out));
    expect(g.metadata.get('gpt2.context_length')).toBe(64);
    expect(g.metadata.get('tokenizer.ggml.eos_token_id')).toBe(269);
    const ids = [116, 104, 101, 32, 102, 117, 110];
    // The file's last log-probs against the reference's, softmax-normalised.
    const gap = (values: Float64Array, logits: number[]) => {
      const top = Math.max(...logits);
      const norm = Math.log(logits.reduce((sum, v) => sum + Math.exp(v - top), 0)) + top;
      return Math.max(...logits.map((v, i) => Math.abs(v - norm - values[i]!)));
    };
    const reference = referenceLogits(checkpoint, ids, adapter);
    expect(gap(gpt2LastLogProbs(g, ids, 'exact'), reference)).toBeLessThan(1e-4); // measured 1.1e-6
    // The adapter is in the file: the base alone is far from the reference.
    const plainOut = join(root, 'gpt2-hub-plain.gguf');
    await exportGguf({ checkpoint, out: plainOut });
    const plain = gpt2LastLogProbs(readGguf(readFileSync(plainOut)), ids, 'exact');
    expect(gap(plain, reference)).toBeGreaterThan(1e-2);
    // An untied head (tie_word_embeddings false) is written as its own output.weight.
    const untied = join(root, 'gpt2-untied');
    const untiedOut = join(root, 'gpt2-untied.gguf');
    await exportGguf({ checkpoint: untied, out: untiedOut });
    const untiedLogProbs = gpt2LastLogProbs(readGguf(readFileSync(untiedOut)), ids, 'exact');
    expect(gap(untiedLogProbs, referenceLogits(untied, ids))).toBeLessThan(1e-4);
  });

  it('refuses a missing adapter folder and an adapter for another base in one line, writing nothing', async () => {
    const out = join(root, 'refused', 'x.gguf');
    await expect(
      exportGguf({
        checkpoint: join(root, 'llama'),
        adapter: join(root, 'nope'),
        out: join(root, 'x.gguf'),
      }),
    ).rejects.toThrow(/^--adapter .*nope: no such folder$/);
    await expect(
      exportGguf({
        checkpoint: join(root, 'llama'),
        adapter: join(root, 'qwen3-lora'),
        out: join(root, 'x.gguf'),
      }),
    ).rejects.toThrow(/qwen3-lora: .*(does not have|do not fit)/);
    await expect(exportGguf({ checkpoint: join(root, 'llama'), out })).rejects.toThrow(
      /does not exist/,
    );
    expect(readdirSync(root).filter((f) => f.startsWith('x.gguf'))).toEqual([]);
  });

  it("the page's export: a base run's role, its adapter from the snapshot, as the CLI writes it", async () => {
    const adapterDir = join(root, 'qwen2-lora');
    const files = Object.fromEntries(
      ['adapter_config.json', 'adapter_model.safetensors'].map((f) => [
        `adapters/coder/${f}`,
        new Uint8Array(readFileSync(join(adapterDir, f))),
      ]),
    );
    const snapshot = { config: { base: 'org/fixture' }, step: 3, files } as unknown as RunSnapshot;
    const source = folderSource(join(root, 'qwen2'));
    const page = await roleGguf(snapshot, 'coder', source);
    expect(page.name).toBe('org_fixture_coder.gguf');
    const fromPage = readGguf(concat(page.parts));
    await exportGguf({
      checkpoint: join(root, 'qwen2'),
      adapter: adapterDir,
      out: join(root, 'cli.gguf'),
    });
    const fromCli = readGguf(readFileSync(join(root, 'cli.gguf')));
    expect(fromPage.metadata.get('general.file_type')).toBe(32);
    for (const [name, t] of fromCli.tensors)
      expect(Array.from(fromPage.tensors.get(name)!.values)).toEqual(Array.from(t.values));
    await expect(roleGguf(snapshot, 'planner', source)).rejects.toThrow(
      /no adapter for the planner/,
    );
  });

  it('the CLI refuses an unsupported dtype with one line, exit 2', () => {
    let status = 0;
    let stderr = '';
    try {
      execFileSync(
        process.execPath,
        [
          'scripts/cli.mjs',
          'model',
          'export-gguf',
          '--checkpoint',
          TINY,
          '--out',
          join(root, 'y.gguf'),
          '--dtype',
          'q4',
        ],
        { cwd: join(__dirname, '../..'), stdio: 'pipe' },
      );
    } catch (err) {
      status = (err as { status: number }).status;
      stderr = String((err as { stderr: Buffer }).stderr);
    }
    expect(status).toBe(2);
    expect(stderr.trim().split('\n')).toHaveLength(1);
    expect(stderr).toMatch(/--dtype takes one of f32 \| f16 \| bf16, got "q4"/);
    expect(existsSync(join(root, 'y.gguf'))).toBe(false);
  });
});
