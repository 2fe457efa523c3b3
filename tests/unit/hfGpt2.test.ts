// GPT-2 as the Hub holds it (issue 31: "GPT-2 … and Llama/Qwen2/Qwen3 are configs of it, read by
// one loader per file format"): random checkpoints in openai-community/gpt2's layout — its
// original names without `transformer.` and the attention-mask buffers beside them, or the
// prefixed names with a tied head's copy, F32 or BF16 — load through the same Hugging Face
// loader as the Llama family and give the independent numpy reference's ids and logits
// (tests/reference/hf_llama.py's gpt2_logits) on tfjs and on the kernels, a PEFT adapter on its
// Conv1D layers (fan_in_fan_out) included. What GPT2LMHeadModel would not run as the lab does is
// refused by name.
import { execFileSync } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { runHfCommand } from '../../src/cli/modelHf';
import { initBackend } from '../../src/gpu/backend';
import { parseGpt2Config } from '../../src/model/families/hfConfig';
import { hubParameterCount } from '../../src/model/families/hubConfig';
import { decodeSafetensors, encodeSafetensors } from '../../src/model/safetensors';
import {
  type Gpt2HubOptions,
  relativeError,
  writeGpt2HubCheckpoint,
  writeGpt2LoraAdapter,
} from './hf-fixtures';

const REFERENCE = join(__dirname, '../reference/hf_llama.py');
const TEXT = "the fun is in the rest, isn't it? 42 <|endoftext|>";
const SHAPE = { nEmbd: 32, nLayer: 2, nHead: 4, nPositions: 64 };
const CASES: [string, Gpt2HubOptions][] = [
  ['original names and mask buffers, F32', { ...SHAPE, original: true }],
  [
    'prefixed names with the head copied, BF16',
    { ...SHAPE, original: false, headCopy: true, dtype: 'BF16' },
  ],
];

function reference(args: string[]): { logits?: number[]; ids?: number[] } {
  return JSON.parse(execFileSync('python3', [REFERENCE, ...args], { encoding: 'utf8' }));
}

let root: string;
const dir = (name: string) => join(root, name);

beforeAll(async () => {
  await initBackend('cpu');
  root = mkdtempSync(join(tmpdir(), 'hf-gpt2-'));
  CASES.forEach(([, options], i) => writeGpt2HubCheckpoint(dir(`gpt2-${i}`), options, 40 + i));
  writeGpt2LoraAdapter(dir('gpt2-lora'), SHAPE, { r: 4, alpha: 8 }, 50);
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
    expect(out.ids).toEqual(reference([folder(), '--encode', TEXT]).ids);
    const ref = reference([folder(), '--ids', out.ids.join(',')]).logits!;
    expect(out.logits).toHaveLength(270);
    expect(relativeError(out.logits, ref)).toBeLessThan(1e-5);
  });

  it('gives the reference logits on the kernels, the weights as stored', async () => {
    const out = await command(folder(), { backend: 'kernels' });
    const ref = reference([folder(), '--ids', out.ids.join(',')]).logits!;
    expect(relativeError(out.logits, ref)).toBeLessThan(1e-5);
  });

  it('with a PEFT adapter on its Conv1D layers gives the reference logits, on tfjs and the kernels', async () => {
    const adapter = dir('gpt2-lora');
    const plain = await command(folder());
    for (const backend of [undefined, 'kernels']) {
      const out = await command(folder(), { adapter, ...(backend ? { backend } : {}) });
      const ref = reference([folder(), '--ids', out.ids.join(','), '--adapter', adapter]).logits!;
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
