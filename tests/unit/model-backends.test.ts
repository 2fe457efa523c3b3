// Forward outputs of the cpu, wasm and webgpu backends agree on random weights. webgpu
// runs on Dawn for Node; on a machine without a GPU it uses SwiftShader's Vulkan.
import * as tf from '@tensorflow/tfjs-core';
import { afterAll, describe, expect, it } from 'vitest';
import { type BackendName, initBackend } from '../../src/gpu/backend';
import {
  AdamW,
  forward,
  type GPT,
  initialValues,
  makeConfig,
  makeVariables,
  maskedLoss,
  optimizerStep,
} from '../../src/model';
import { KvCacheSampler } from '../../src/rollout';

const SWIFTSHADER = '/usr/lib/chromium/vk_swiftshader_icd.json';
process.env.VK_ICD_FILENAMES ??= SWIFTSHADER;

const config = makeConfig('tiny', 29, 'coder', { nEmbd: 32, nLayer: 2, nHead: 4, nCtx: 24 });
const values = initialValues(config, 123);
// Larger than initialisation so the comparison is not trivially near zero.
for (const [name, data] of values)
  if (!name.includes('ln_')) for (let i = 0; i < data.length; i++) data[i]! *= 10;
const ids = Array.from({ length: 3 * 20 }, (_, i) => (i * 7 + 3) % 29);

interface Outputs {
  logits: Float32Array;
  tokens: number[][];
  loss: number;
  gradNorm: number;
  updated: Float32Array;
}

async function run(backend: BackendName): Promise<Outputs> {
  const report = await initBackend(backend);
  expect(report.backend).toBe(backend);
  const model: GPT = { config, params: makeVariables(config, values) };
  const logits = forward(model, tf.tensor2d(ids, [3, 20], 'int32'));
  const data = (await logits.data()) as Float32Array;
  const sampled = await new KvCacheSampler(model).sample([ids.slice(0, 5), ids.slice(5, 8)], {
    maxNewTokens: 6,
    temperature: 0,
    topK: 0,
    seed: 1,
    stopId: 1,
  });
  // One AdamW step: gradients and the update agree too.
  const input = tf.tensor2d(ids, [3, 20], 'int32');
  const mask = tf.ones([3, 19]) as tf.Tensor2D;
  const optimizer = new AdamW(model);
  const { loss, gradNorm } = await optimizerStep(
    model,
    optimizer,
    () => maskedLoss(model, input, mask),
    1e-2,
  );
  const updated = (await model.params
    .get('transformer.h.0.attn.c_attn.weight')!
    .data()) as Float32Array;
  return { logits: data, tokens: sampled.tokens, loss, gradNorm, updated };
}

function maxDiff(a: Float32Array, b: Float32Array): number {
  let worst = 0;
  for (let i = 0; i < a.length; i++) worst = Math.max(worst, Math.abs(a[i]! - b[i]!));
  return worst;
}

function expectAgree(a: Outputs, b: Outputs): void {
  expect(maxDiff(a.logits, b.logits)).toBeLessThan(1e-3);
  expect(b.tokens).toEqual(a.tokens);
  expect(b.loss).toBeCloseTo(a.loss, 4);
  expect(b.gradNorm).toBeCloseTo(a.gradNorm, 3);
  expect(maxDiff(a.updated, b.updated)).toBeLessThan(1e-4);
}

async function webgpuAdapter(): Promise<string | null> {
  try {
    await initBackend('webgpu');
    return null;
  } catch (err) {
    return (err as Error).message;
  }
}

describe('backends agree', () => {
  afterAll(async () => {
    await initBackend('cpu');
  });

  it('cpu and wasm agree: forward, greedy samples, one AdamW step', async () => {
    const cpu = await run('cpu');
    expectAgree(cpu, await run('wasm'));
  });

  it('webgpu (Dawn in Node) agrees with cpu: forward, greedy samples, one AdamW step', async (ctx) => {
    const missing = await webgpuAdapter();
    if (missing) {
      ctx.skip(`no WebGPU adapter: ${missing}`);
      return;
    }
    const cpu = await run('cpu');
    expectAgree(cpu, await run('webgpu'));
  });
});
