// GPT-2 on the kernels' one model (gpu/engine/deviceLlama.ts, configured by gptTransformerConfig:
// LayerNorm with bias, learned positions, GELU in fc's epilogue, a bias on every projection,
// Conv1D weights transposed as they are uploaded): a shipped checkpoint's logits against the
// independent numpy GPT-2 (tests/reference/hf_llama.py), through `npm run model -- logits
// --backend kernels` as a user runs it; and a GPT-2 wider than the fused kernels hold (320 wide,
// heads of 64), a LoRA adapter merged in, its prefill and decode steps against tfjs's forward,
// which applies the adapter in the forward instead.
import { execFileSync, spawnSync } from 'node:child_process';
import { join } from 'node:path';
import * as tf from '@tensorflow/tfjs-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { initBackend } from '../../src/gpu/backend';
import { DeviceLlama } from '../../src/gpu/engine/deviceLlama';
import { deviceHoldsModel } from '../../src/gpu/engine/deviceModel';
import { gptForDevice } from '../../src/gpu/engine/llamaKernels';
import { makeConfig } from '../../src/model/config';
import { createModel, disposeModel, forward, type GPT } from '../../src/model/gpt';
import { createLora } from '../../src/model/gptLora';
import { Rng } from '../../src/tasks/random';
import { kernelRuntime, needRuntime } from './kernels-harness';

const h = kernelRuntime();
const REFERENCE = join(__dirname, '../reference/hf_llama.py');
const SHIPPED = 'public/checkpoints/tiny/coder';

/** max |a − b| over the largest |b|. */
function relativeError(a: ArrayLike<number>, b: ArrayLike<number>): number {
  let worst = 0;
  let largest = 0;
  for (let i = 0; i < b.length; i++) {
    worst = Math.max(worst, Math.abs((a[i] as number) - (b[i] as number)));
    largest = Math.max(largest, Math.abs(b[i] as number));
  }
  return worst / largest;
}

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
    const numpy = JSON.parse(
      execFileSync('python3', [REFERENCE, SHIPPED, '--ids', lab.ids.join(',')], {
        encoding: 'utf8',
      }),
    ) as { logits: number[] };
    expect(lab.logits).toHaveLength(numpy.logits.length);
    expect(relativeError(lab.logits, numpy.logits)).toBeLessThan(1e-5);
  });

  const models: GPT[] = [];
  beforeAll(async () => {
    await initBackend('cpu'); // tfjs's float32 forward is the comparison
  });
  afterAll(() => {
    for (const m of models) disposeModel(m);
  });

  it('a GPT-2 wider than the fused kernels hold, a LoRA adapter merged in: prefill and decode steps equal tfjs’s forward with the adapter applied', async (ctx) => {
    const rt = needRuntime(h, ctx);
    // 320 wide, 5 heads of 64, MLP 1280: past decode.wgsl's 256 (the fused path's limit).
    const config = makeConfig('tiny', 97, 'coder', { nEmbd: 320, nHead: 5, nLayer: 2, nCtx: 32 });
    expect(deviceHoldsModel(config)).toBe(false);
    const model = createModel(config, 5);
    models.push(model);
    model.lora = createLora(
      config,
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
    const device = new DeviceLlama(rt, tc, weights, { contextLength: 16 });
    const ids = [3, 17, 42, 8, 96, 0, 55];
    const want = await forward(model, tf.tensor2d([ids], [1, ids.length], 'int32')).data();
    const V = config.vocabSize;
    const at = (t: number) => want.subarray(t * V, (t + 1) * V);
    // A prompt of four, then three decode steps.
    expect(relativeError(await device.prefill(ids.slice(0, 4)), at(3))).toBeLessThan(1e-4);
    for (let t = 4; t < ids.length; t++)
      expect(
        relativeError(await device.step(ids[t] as number), at(t)),
        `position ${t}`,
      ).toBeLessThan(1e-4);
  });
});
