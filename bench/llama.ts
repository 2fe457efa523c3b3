// `npm run bench -- llama`: the Llama family's kernels against their f32 / GPT-2 counterparts
// (RMSNorm vs LayerNorm, grouped-query vs multi-head attention, 16-bit vs f32 weights in the
// matmul), then a random checkpoint of Qwen2.5-Coder-0.5B's shape (24 layers, hidden 896,
// 14 q / 2 kv heads, head_dim 64, MLP 4864, vocabulary 151,936, tied, BF16, q/k/v bias) on the
// kernels: load, prefill, decode tokens/s, resident memory, and its logits against the float64
// reference (tests/unit/llama-device-fixtures.ts). Times: median of several submissions.
// LLAMA_BENCH_05B=0 skips the 0.5B part, LLAMA_BENCH_KERNELS=0 the kernel rows;
// LLAMA_BENCH_LAYERS (default 24) cuts its depth for a quick check (widths and vocabulary stay).

import { DeviceTransformer } from '../src/gpu/engine/deviceTransformer';
import {
  attentionForward,
  layerNormForward,
  MATMUL_VERSIONS,
  matmul,
  matmul16,
  rmsNormBackward,
  rmsNormForward,
  rope,
  SHADERS,
  swigluBackward,
  swigluForward,
} from '../src/gpu/engine/ops';
import { type DispatchSpec, GpuRuntime } from '../src/gpu/engine/runtime';
import { getKernelDevice } from '../src/gpu/kernels/device';
import { llamaTransformerConfig } from '../src/model/families/llamaConfig';
import { ropeInverseFrequencies, ropeTable } from '../src/model/families/rope';
import {
  llamaConfig,
  llamaReferenceLogits,
  randomLlama,
  relativeToLargest,
} from '../tests/unit/llama-device-fixtures';
import type { BenchSection, BenchTable } from './table';

const median = (v: number[]) => [...v].sort((a, b) => a - b)[Math.floor(v.length / 2)] ?? NaN;

async function timeSpecs(rt: GpuRuntime, specs: DispatchSpec[], calls = 5): Promise<number> {
  const program = rt.program(specs);
  const once = async () => {
    const start = performance.now();
    rt.submit([program]);
    await rt.device.queue.onSubmittedWorkDone();
    return performance.now() - start;
  };
  await once();
  const times: number[] = [];
  for (let i = 0; i < calls; i++) times.push(await once());
  rt.destroyProgram(program);
  return median(times);
}

const rand = (n: number, seed: number) => {
  const out = new Float32Array(n);
  let s = seed;
  for (let i = 0; i < n; i++) {
    s = (Math.imul(s, 1664525) + 1013904223) >>> 0;
    out[i] = s / 2 ** 31 - 1;
  }
  return out;
};

/** The 0.5B model's sizes: T rows, hidden 896, 14/2 heads of 64, MLP 4864. */
const [D, H, KVH, HD, I] = [896, 14, 2, 64, 4864];

/** Qwen2.5-Coder-0.5B's 24 layers, or fewer (LLAMA_BENCH_LAYERS) where a CPU driver only checks that it runs. */
export function benchLayers(): { layers: number; label: string } {
  const layers = Number(process.env.LLAMA_BENCH_LAYERS ?? 24);
  if (!Number.isInteger(layers) || layers < 1 || layers > 24)
    throw new Error(`LLAMA_BENCH_LAYERS must be 1 to 24, got ${process.env.LLAMA_BENCH_LAYERS}`);
  const label =
    layers === 24 ? 'Qwen2.5-Coder-0.5B shape' : `Qwen2.5-Coder-0.5B shape, ${layers} of 24 layers`;
  return { layers, label };
}

async function kernelRows(rt: GpuRuntime, T: number): Promise<(string | number)[][]> {
  const buf = (n: number, seed = 1) => {
    const b = rt.buffer(n);
    rt.write(b, rand(n, seed));
    return b;
  };
  const x = buf(T * D);
  const y = rt.buffer(T * D);
  const w = buf(D, 2);
  const stats = rt.buffer(2 * T * H);
  const dy = buf(T * D, 3);
  const dx = rt.buffer(T * D);
  const dw = rt.buffer(D);
  const rows: (string | number)[][] = [];
  const rms = await timeSpecs(rt, [rmsNormForward(x, w, y, stats, T, D, 1e-6, rt.dummy)]);
  const ln = await timeSpecs(rt, [layerNormForward(x, w, w, y, stats, T, D, 1e-5)]);
  rows.push([`rmsnorm forward [${T}, ${D}]`, rms, 'layernorm', ln, rms / ln]);
  const rmsB = await timeSpecs(rt, rmsNormBackward(x, w, dy, stats, dx, dw, T, D, false));
  rows.push([`rmsnorm backward (dx, dw)`, rmsB, '', '', '']);
  const W = (H + 2 * KVH) * HD;
  const qkv = buf(T * W, 4);
  const table = rt.buffer(T * HD);
  rt.write(table, ropeTable(T, ropeInverseFrequencies({ headDim: HD, ropeTheta: 1e6 })));
  const shape = { R: T, T, H, kvH: KVH, hd: HD };
  rows.push([
    `rope q+k [${T}, ${H}+${KVH} heads × ${HD}]`,
    await timeSpecs(rt, [rope(shape, table, qkv, 0, rt.dummy)]),
    '',
    '',
    '',
  ]);
  const gu = buf(T * 2 * I, 5);
  const hm = rt.buffer(T * I);
  const dgu = rt.buffer(T * 2 * I);
  rows.push([
    `swiglu forward [${T}, ${I}]`,
    await timeSpecs(rt, [swigluForward(gu, hm, T, I)]),
    '',
    '',
    '',
  ]);
  rows.push([
    `swiglu backward`,
    await timeSpecs(rt, [swigluBackward(gu, hm, dgu, T, I)]),
    '',
    '',
    '',
  ]);
  const att = rt.buffer(T * H * HD);
  const lse = rt.buffer(T * H);
  const gqa = await timeSpecs(rt, [
    attentionForward({ B: 1, T, H, hd: HD, kvH: KVH }, qkv, att, lse),
  ]);
  const mhaQkv = buf(T * 3 * H * HD, 6);
  const mha = await timeSpecs(rt, [attentionForward({ B: 1, T, H, hd: HD }, mhaQkv, att, lse)]);
  rows.push([`attention forward GQA ${H}/${KVH} heads, T ${T}`, gqa, 'MHA 14/14', mha, gqa / mha]);
  // 16-bit weights against f32 (v4_vec4 reading W [N, K] along K) at the MLP's gate|up shape.
  const a = buf(T * D, 7);
  const c = rt.buffer(T * 2 * I);
  const w16 = buf((2 * I * D) / 2, 8);
  const w32 = buf(2 * I * D, 9);
  const f32 = await timeSpecs(rt, [
    matmul({
      M: T,
      N: 2 * I,
      K: D,
      a,
      b: w32,
      bStride: [1, D],
      c,
      version: MATMUL_VERSIONS[3],
      dummy: rt.dummy,
    }),
  ]);
  for (const dtype of ['BF16', 'F16'] as const) {
    const t = await timeSpecs(rt, [
      matmul16({ M: T, N: 2 * I, K: D, a, w: w16, dtype, c, dummy: rt.dummy }),
    ]);
    rows.push([
      `matmul ${dtype} weights [${T}×${D}]·[${2 * I}×${D}]ᵀ`,
      t,
      'f32 v4_vec4',
      f32,
      t / f32,
    ]);
  }
  return rows;
}

function rssGb(): number {
  return process.memoryUsage().rss / 2 ** 30;
}

async function qwen05b(
  rt: GpuRuntime,
  layers: number,
): Promise<{ rows: (string | number)[][]; notes: string[] }> {
  const config = llamaConfig({
    modelType: 'qwen2',
    vocabSize: 151936,
    hiddenSize: D,
    intermediateSize: I,
    numLayers: layers,
    numHeads: H,
    numKvHeads: KVH,
    headDim: HD,
    ropeTheta: 1000000,
    attentionBias: true,
    tieWordEmbeddings: true,
    maxPositionEmbeddings: 32768,
  });
  let start = performance.now();
  const weights = randomLlama(config, 'BF16', 3, 0.05);
  const makeMs = performance.now() - start;
  start = performance.now();
  const model = new DeviceTransformer(rt, llamaTransformerConfig(config), weights, {
    contextLength: 64,
  });
  await rt.device.queue.onSubmittedWorkDone();
  const loadMs = performance.now() - start;
  const prompt = [151643, 8, 151000, 77];
  start = performance.now();
  const logits = await model.prefill(prompt);
  const prefillMs = performance.now() - start;
  const decodeTokens = 4;
  start = performance.now();
  let next = argmax(logits);
  const ids = [...prompt, next];
  for (let i = 0; i < decodeTokens; i++) {
    const step = await model.step(next);
    next = argmax(step);
    ids.push(next);
  }
  const decodeS = (performance.now() - start) / 1000;
  const rss = rssGb();
  // The prefill's logits against float64 (the reference runs in plain TypeScript).
  start = performance.now();
  const [want] = llamaReferenceLogits(config, weights, prompt);
  const refMs = performance.now() - start;
  const err = relativeToLargest(logits, want as Float64Array);
  return {
    rows: [
      ['random weights made (host, BF16)', makeMs / 1000, 's'],
      ['load onto the device', loadMs / 1000, 's'],
      ['weights on the device', model.weightBytes / 2 ** 30, 'GiB'],
      [`prefill, ${prompt.length} tokens → last logits`, prefillMs / 1000, 's'],
      [`decode (greedy, host argmax), ${decodeTokens} tokens`, decodeTokens / decodeS, 'tok/s'],
      ['process resident after load + decode', rss, 'GiB'],
      ['prefill logits vs float64 reference (max err / max |logit|)', err, ''],
      ['float64 TypeScript reference, the same prompt', refMs / 1000, 's'],
    ],
    notes: [`greedy continuation: ${ids.slice(prompt.length).join(' ')}`],
  };
}

function argmax(v: Float32Array): number {
  let best = 0;
  for (let i = 1; i < v.length; i++) if ((v[i] as number) > (v[best] as number)) best = i;
  return best;
}

export const llamaBench: BenchSection = async (): Promise<BenchTable> => {
  const opened = await getKernelDevice();
  if (!opened.ok) throw new Error(`no WebGPU adapter: ${opened.why}`);
  const rt = new GpuRuntime(opened.gpu.device);
  await rt.load([...SHADERS]);
  try {
    const rows: (string | number)[][] = [];
    for (const T of process.env.LLAMA_BENCH_KERNELS === '0' ? [] : [1, 64])
      for (const r of await kernelRows(rt, T))
        rows.push([
          ...r.slice(0, 2).map((v, i) => (i === 1 ? `${(v as number).toFixed(2)} ms` : v)),
          r[2] ?? '',
          typeof r[3] === 'number' ? `${r[3].toFixed(2)} ms` : '',
          typeof r[4] === 'number' ? r[4] : '',
        ]);
    const notes: string[] = [];
    if (process.env.LLAMA_BENCH_05B !== '0') {
      const { layers, label } = benchLayers();
      const big = await qwen05b(rt, layers);
      for (const [what, value, unit] of big.rows)
        rows.push([`${label}: ${what}`, `${(value as number).toPrecision(3)} ${unit}`, '', '', '']);
      notes.push(...big.notes);
    }
    return {
      title: 'Llama-family kernels (RMSNorm, RoPE, SwiGLU, GQA, 16-bit weights) and a 0.5B model',
      environment: `adapter: ${opened.gpu.adapter}; sizes of Qwen2.5-Coder-0.5B (hidden ${D}, ${H}/${KVH} heads × ${HD}, MLP ${I})`,
      columns: ['kernel', 'time', 'against', 'its time', 'ratio'],
      rows,
      notes,
    };
  } finally {
    rt.destroy();
  }
};
