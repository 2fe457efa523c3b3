// Benchmark section "models": training and sampling tokens/s of the tiny preset on every
// backend present (cpu, wasm, webgpu), as ratios to cpu measured in the same run.
import * as tf from '@tensorflow/tfjs-core';
import { type BackendName, type BackendReport, initBackend } from '../src/gpu/backend';
import { AdamW } from '../src/model/adamw';
import { makeConfig, parameterCount } from '../src/model/config';
import { type GPT, maskedLoss } from '../src/model/gpt';
import { initialValues, makeVariables } from '../src/model/params';
import { optimizerStep } from '../src/model/train';
import { KvCacheSampler } from '../src/rollout/kvSampler';
import { Rng } from '../src/tasks/random';
import { CharTokenizer } from '../src/tokenizer';
import type { BenchSection, BenchTable } from './table';

const VOCAB = new CharTokenizer().vocabSize;
const TRAIN = { batch: 8, length: 96, steps: 2 };
const SAMPLE = { batch: 16, prompt: 24, newTokens: 32 };

interface Measured {
  report: BackendReport;
  trainTps: number;
  sampleTps: number;
}

async function measure(backend: BackendName): Promise<Measured> {
  const report = await initBackend(backend);
  const config = makeConfig('tiny', VOCAB, 'coder');
  const model: GPT = { config, params: makeVariables(config, initialValues(config, 1)) };
  const prng = new Rng(2);
  const ids = tf.tensor2d(
    Array.from({ length: TRAIN.batch * TRAIN.length }, () => prng.below(VOCAB)),
    [TRAIN.batch, TRAIN.length],
    'int32',
  );
  const mask = tf.ones([TRAIN.batch, TRAIN.length - 1]) as tf.Tensor2D;
  const optimizer = new AdamW(model);
  const step = () => optimizerStep(model, optimizer, () => maskedLoss(model, ids, mask), 1e-3);
  await step(); // warm-up: kernel compilation, allocation
  // Software WebGPU (SwiftShader) is ~100× slower: one timed step and fewer tokens there.
  const slow = backend === 'webgpu' && /swiftshader|llvmpipe|lavapipe/i.test(report.adapter);
  const steps = slow ? 1 : TRAIN.steps;
  let start = performance.now();
  for (let i = 0; i < steps; i++) await step();
  const trainTps = (steps * TRAIN.batch * TRAIN.length) / ((performance.now() - start) / 1000);

  const prompts = Array.from({ length: SAMPLE.batch }, () =>
    Array.from({ length: SAMPLE.prompt }, () => 8 + prng.below(90)),
  );
  const sampler = new KvCacheSampler(model);
  // stopId −1 never matches: every row generates exactly newTokens.
  const newTokens = slow ? 8 : SAMPLE.newTokens;
  const opts = { maxNewTokens: newTokens, temperature: 1, topK: 0, seed: 3, stopId: -1 };
  await sampler.sample(prompts.slice(0, 2), { ...opts, maxNewTokens: 2 });
  start = performance.now();
  await sampler.sample(prompts, opts);
  const sampleTps = (SAMPLE.batch * newTokens) / ((performance.now() - start) / 1000);

  optimizer.dispose();
  ids.dispose();
  mask.dispose();
  for (const v of model.params.values()) v.dispose();
  return { report, trainTps, sampleTps };
}

export const modelBench: BenchSection = async (): Promise<BenchTable> => {
  const rows: Measured[] = [];
  const skipped: string[] = [];
  for (const backend of ['cpu', 'wasm', 'webgpu'] as BackendName[]) {
    try {
      rows.push(await measure(backend));
    } catch (err) {
      skipped.push(`${backend}: ${(err as Error).message}`);
    }
  }
  await initBackend('cpu');
  const cpu = rows.find((r) => r.report.backend === 'cpu');
  const config = makeConfig('tiny', VOCAB, 'coder');
  return {
    title: 'Models: training and sampling speed (tfjs)',
    environment:
      `preset tiny (${parameterCount(config)} parameters, d=${config.nEmbd}, ${config.nLayer} layers, ${config.nHead} heads); ` +
      `training batch ${TRAIN.batch}×${TRAIN.length} tokens, AdamW; sampling batch ${SAMPLE.batch}, ` +
      `prompt ${SAMPLE.prompt}, ${SAMPLE.newTokens} new tokens, KV cache`,
    columns: ['backend', 'adapter', 'train tok/s', 'train ×cpu', 'sample tok/s', 'sample ×cpu'],
    rows: rows.map((r) => [
      r.report.backend,
      r.report.adapter,
      r.trainTps,
      cpu ? r.trainTps / cpu.trainTps : '—',
      r.sampleTps,
      cpu ? r.sampleTps / cpu.sampleTps : '—',
    ]),
    notes: [
      'Ratios are to the cpu backend in the same run (shared machines drift).',
      ...skipped.map((s) => `skipped ${s}`),
    ],
  };
};
