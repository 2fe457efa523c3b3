// rope_scaling (issue 22): a Llama 3.2-like random checkpoint with Llama 3's `llama3` scaling,
// and one with `linear`, give the numpy reference's last-position logits (tests/reference/
// hf_llama.py, written from transformers' modeling_rope_utils.py) within 2e-3 of the largest
// logit on tfjs cpu and on the lab's kernels (SwiftShader here), where leaving the scaling out
// would not; the inverse frequencies keep, blend and divide the bands as Hugging Face's do;
// the types not implemented, and a llama3 block missing a field, are refused by name.

import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import * as tf from '@tensorflow/tfjs-core'; // first: its ops must load before register_all_gradients (backend.ts)
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { runHfCommand } from '../../src/cli/modelHf';
import { initBackend } from '../../src/gpu/backend';
import { parseLlamaConfig } from '../../src/model/families/hfConfig';
import { llamaTransformerConfig } from '../../src/model/families/llamaConfig';
import { ropeInverseFrequencies, ropeTable } from '../../src/model/families/rope';
import { ropeTables } from '../../src/model/transformer';
import {
  LLAMA3_ROPE_SCALING,
  relativeError,
  ropeScaledLlamaSpec,
  writeHfCheckpoint,
} from './hf-fixtures';
import { referenceLogits } from './hf-reference';

process.env.VK_ICD_FILENAMES ??= '/usr/lib/chromium/vk_swiftshader_icd.json';
process.env.XDG_RUNTIME_DIR ??= '/tmp';

const TEXT = "the fun is in the rest, isn't it? 42";
const SCALINGS = {
  llama3: LLAMA3_ROPE_SCALING,
  linear: { rope_type: 'linear', factor: 4.0 },
  // The same weights with the default rope: what the scaling changes.
  none: null,
};
type Scaling = keyof typeof SCALINGS;

let root: string;
const dir = (name: Scaling) => join(root, name);

beforeAll(async () => {
  await initBackend('cpu');
  root = mkdtempSync(join(tmpdir(), 'hf-rope-scaling-'));
  // One seed: the weights depend only on the shapes, so the three differ only in rope_scaling.
  for (const [name, scaling] of Object.entries(SCALINGS))
    writeHfCheckpoint(join(root, name), ropeScaledLlamaSpec(scaling), 7);
});
afterAll(() => rmSync(root, { recursive: true, force: true }));

describe.each(['llama3', 'linear'] as const)('rope_scaling %s', (scaling) => {
  it.each(['cpu', 'kernels'])('gives the reference logits on %s', async (backend) => {
    const out = (await runHfCommand({
      command: 'logits',
      checkpoint: dir(scaling),
      text: TEXT,
      chat: false,
      maxNewTokens: 1,
      temperature: 0,
      topK: 0,
      seed: 1,
      backend,
    })) as { ids: number[]; logits: number[] };
    expect(out.ids.length).toBeGreaterThan(20); // positions far enough to turn the slow bands
    const ref = referenceLogits(dir(scaling), out.ids);
    expect(relativeError(out.logits, ref)).toBeLessThan(2e-3);
    // The scaling matters here: the default rope's logits are far from the scaled reference.
    expect(relativeError(referenceLogits(dir('none'), out.ids), ref)).toBeGreaterThan(1e-2);
  });
});

describe('inverse frequencies', () => {
  it("llama3 at Llama 3.2's parameters: high frequencies kept, low ones ÷ factor, the band between blended", () => {
    const config = parseLlamaConfig({
      ...ropeScaledLlamaSpec(null).config,
      hidden_size: 2048,
      num_attention_heads: 32,
      num_key_value_heads: 8,
      head_dim: 64,
      max_position_embeddings: 131072,
      rope_scaling: { ...LLAMA3_ROPE_SCALING, original_max_position_embeddings: 8192 },
    });
    const plain = ropeInverseFrequencies({ headDim: 64, ropeTheta: 500000 });
    const scaled = ropeInverseFrequencies(config);
    const bands = { kept: 0, divided: 0, blended: 0 };
    plain.forEach((f, i) => {
      const wavelen = (2 * Math.PI) / f;
      const g = scaled[i]!;
      if (wavelen < 8192 / 4) {
        expect(g).toBe(f);
        bands.kept++;
      } else if (wavelen > 8192 / 1) {
        expect(g).toBeCloseTo(f / 32, 15);
        bands.divided++;
      } else {
        const smooth = (8192 / wavelen - 1) / (4 - 1);
        expect(g).toBeCloseTo((1 - smooth) * (f / 32) + smooth * f, 15);
        expect(g).toBeLessThan(f);
        expect(g).toBeGreaterThan(f / 32);
        bands.blended++;
      }
    });
    expect(bands).toEqual({ kept: 15, divided: 14, blended: 3 });
  });

  it('the default rope and rope_parameters (newer transformers) read as before', () => {
    const base = ropeScaledLlamaSpec(null).config;
    expect(parseLlamaConfig(base).ropeScaling).toBeUndefined();
    expect(
      parseLlamaConfig({ ...base, rope_scaling: { rope_type: 'default' } }).ropeScaling,
    ).toBeUndefined();
    const { rope_theta: _, rope_scaling: __, ...rest } = base;
    const v5 = parseLlamaConfig({
      ...rest,
      rope_parameters: { ...LLAMA3_ROPE_SCALING, rope_theta: 500000.0 },
    });
    expect(v5.ropeTheta).toBe(500000);
    expect(v5.ropeScaling).toEqual({
      type: 'llama3',
      factor: 32,
      lowFreqFactor: 1,
      highFreqFactor: 4,
      originalMaxPositionEmbeddings: 64,
    });
  });
});

describe('one table of angles', () => {
  it("the tfjs forward's cos/sin and the kernels' table are the same floats at every position, Hugging Face's float32 angle", () => {
    const c = llamaTransformerConfig(
      parseLlamaConfig(ropeScaledLlamaSpec(LLAMA3_ROPE_SCALING).config),
    );
    const P = 4096;
    const hd = c.headDim;
    const inv = ropeInverseFrequencies({
      headDim: hd,
      ropeTheta: c.rope!.theta,
      ropeScaling: c.rope!.scaling,
    });
    const table = ropeTable(P, inv);
    const positions = [Array.from({ length: P }, (_, p) => p)];
    const { cos, sin } = ropeTables(c, positions);
    const [tfCos, tfSin] = [cos.dataSync(), sin.dataSync()];
    tf.dispose([cos, sin]);
    let differ = 0;
    for (let p = 0; p < P; p++)
      for (let j = 0; j < hd; j++) {
        const i = j % (hd / 2);
        if (tfCos[p * hd + j] !== table[p * hd + i]) differ++;
        if (tfSin[p * hd + j] !== table[p * hd + hd / 2 + i]) differ++;
      }
    expect(differ).toBe(0);
    // The angle is a float32 product, as torch's inv_freq @ position_ids makes it.
    const p = 4001;
    const angle = Math.fround(p * Math.fround(inv[1]!));
    expect(table[p * hd + 1]).toBe(Math.fround(Math.cos(angle)));
  });
});

describe('refused by name', () => {
  const config = (ropeScaling: unknown) =>
    parseLlamaConfig({ ...ropeScaledLlamaSpec(null).config, rope_scaling: ropeScaling });
  it.each([
    [{ rope_type: 'yarn', factor: 4 }, /rope_scaling type "yarn" is not implemented/],
    [{ type: 'dynamic', factor: 2 }, /rope_scaling type "dynamic" is not implemented/],
    [{ rope_type: 'longrope' }, /rope_scaling type "longrope" is not implemented/],
    [
      { ...LLAMA3_ROPE_SCALING, low_freq_factor: undefined },
      /rope_scaling llama3 needs low_freq_factor a positive number, got null/,
    ],
    [
      { ...LLAMA3_ROPE_SCALING, high_freq_factor: 1 },
      /rope_scaling llama3 needs high_freq_factor \(1\) above low_freq_factor \(1\)/,
    ],
    [{ type: 'linear', factor: 0 }, /rope_scaling linear needs factor a positive number, got 0/],
  ])('%j', (scaling, message) => {
    expect(() => config(scaling)).toThrow(message);
  });
});
