// `npm run bench -- llama-lora`: a forward + backward of LoRA adapters (every target, rank 8)
// over a random BF16 checkpoint of Qwen2.5-Coder-0.5B's shape (24 layers, hidden 896, MLP 4864,
// 14/2 heads × 64, vocabulary 151,936, tied, q/k/v bias) on the kernels
// (gpu/engine/devicePolicy.ts): seconds for log-probs, forward + backward and the AdamW step,
// peak resident memory, then every dispatch of the forward + backward timed alone, summed by
// kernel, with a projection for a GPU from each dispatch's FLOPs and bytes — an estimate, labelled
// as one, until a lent GPU measures it. LLAMA_LORA_T (default 8) and LLAMA_LORA_B (default 1) set
// the batch; LLAMA_BENCH_LAYERS (default 24) cuts the depth for a quick check;
// LLAMA_LORA_SHAPE=fixture runs the tests' random Qwen2 instead (tests/unit/hf-fixtures.ts:
// 2 layers, hidden 32, MLP 64, 4/2 heads × 8, vocabulary 280), where the kernels' fixed costs
// show rather than their arithmetic; LLAMA_LORA_SHAPE=gpt2 the lab's tiny GPT-2 (random F32
// weights; LoRA on c_attn, both c_proj and c_fc), as `train --lora-rank 8` updates it on the
// kernels' one model. Any other value is refused in words.

import { float32Tensors, type WeightTensors } from '../src/gpu/engine/deviceCheckpoint';
import { DevicePolicy, LORA_TARGETS } from '../src/gpu/engine/devicePolicy';
import { DeviceTransformer } from '../src/gpu/engine/deviceTransformer';
import { GPT2_DEVICE_TARGETS } from '../src/gpu/engine/loraAdapters';
import { SHADERS } from '../src/gpu/engine/ops';
import { asSlice, type DispatchSpec, GpuRuntime } from '../src/gpu/engine/runtime';
import { getKernelDevice } from '../src/gpu/kernels/device';
import { gptTransformerConfig, makeConfig } from '../src/model/config';
import type { LlamaConfig } from '../src/model/families/llamaConfig';
import { llamaTransformerConfig } from '../src/model/families/llamaConfig';
import { initialValues, parameterSpecs } from '../src/model/params';
import type { TransformerConfig } from '../src/model/transformerConfig';
import { llamaConfig, randomLlama } from '../tests/unit/llama-device-fixtures';
import { benchLayers } from './llama';
import type { BenchSection, BenchTable } from './table';

/** GPU classes for the projection: achieved f32 FLOP/s, bytes/s, seconds per dispatch. */
const GPUS: [string, number, number, number][] = [
  ['laptop-class GPU (4 TFLOP/s, 200 GB/s, 20 µs a dispatch)', 4e12, 200e9, 20e-6],
  ['desktop-class GPU (15 TFLOP/s, 600 GB/s, 10 µs a dispatch)', 15e12, 600e9, 10e-6],
];

/** Qwen2.5-Coder-0.5B's published shape (random weights stand in for its own). */
export const QWEN05B_SHAPE = llamaConfig({
  modelType: 'qwen2',
  vocabSize: 151936,
  hiddenSize: 896,
  intermediateSize: 4864,
  numLayers: 24,
  numHeads: 14,
  numKvHeads: 2,
  headDim: 64,
  ropeTheta: 1000000,
  attentionBias: true,
  tieWordEmbeddings: true,
  maxPositionEmbeddings: 32768,
});

/** The tests' random Qwen2 (tests/unit/hf-fixtures.ts' chat fixture). */
const FIXTURE_SHAPE = llamaConfig({
  modelType: 'qwen2',
  vocabSize: 280,
  hiddenSize: 32,
  intermediateSize: 64,
  numLayers: 2,
  numHeads: 4,
  numKvHeads: 2,
  headDim: 8,
  ropeTheta: 1000000,
  attentionBias: true,
  tieWordEmbeddings: true,
  maxPositionEmbeddings: 4096,
});

/**
 * A base on the device with rank-8 adapters on every target (B ≠ 0, so every path carries
 * gradient; PEFT starts it at 0) and a batch of B × T tokens with its ∂loss/∂logπ. With a
 * `grpo` shape, GRPO's: each `group` sequences share a prompt and score only their last
 * `completion` tokens (the update packs each group in one row); without, every position.
 */
export function loraPass(
  rt: GpuRuntime,
  config: LlamaConfig | TransformerConfig,
  weights: WeightTensors,
  B: number,
  T: number,
  grpo?: { group: number; completion: number },
) {
  const tc = 'hiddenSize' in config ? llamaTransformerConfig(config) : config;
  const model = new DeviceTransformer(rt, tc, weights, { contextLength: T });
  // Every projection of the config: the Llama family's seven, or GPT-2's four.
  const targets = tc.fusedQkv ? GPT2_DEVICE_TARGETS : LORA_TARGETS;
  const policy = new DevicePolicy(rt, model, { rank: 8, alpha: 16, targets }, undefined, 5);
  const adapters = policy.initialAdapters(5);
  for (const a of adapters.values()) a.B.fill(0.01);
  policy.importAdapters(adapters);
  const prompt = grpo ? T - grpo.completion : 0;
  const sequences = Array.from({ length: B }, (_, b) =>
    Array.from({ length: T }, (_, t) => {
      const source = t < prompt && grpo ? Math.floor(b / grpo.group) : b;
      return (source * 7919 + t * 104729) % config.vocabSize;
    }),
  );
  const dlogp = sequences.map((s) => Float32Array.from({ length: s.length - 1 }, () => -1 / T));
  const scoredFrom = grpo ? sequences.map(() => prompt - 1) : undefined;
  return { model, policy, batch: { sequences, ...(scoredFrom ? { scoredFrom } : {}) }, dlogp };
}

/** A dispatch's arithmetic and memory traffic, from its kernel and uniforms. */
function cost(spec: DispatchSpec): { flops: number; bytes: number } {
  const u = new Uint32Array(spec.uniforms);
  const [a = 0, b = 0, c = 0, d = 0] = u;
  const label = spec.label ?? '';
  if (label.startsWith('matmul16'))
    return { flops: 2 * a * b * c, bytes: b * c * 2 + 4 * a * (b + c) };
  if (label.startsWith('matmul') || label.startsWith('lora_d'))
    return { flops: 2 * a * b * c, bytes: 4 * (a * c + c * b + a * b) };
  if (label.startsWith('lora_')) return { flops: 2 * a * b * c, bytes: 8 * a * b };
  if (label.startsWith('attention'))
    return { flops: 2 * a * c * b * b * d, bytes: 4 * a * b * c * d * 4 };
  let bytes = 0;
  for (const [, binding] of spec.bindings) {
    const s = asSlice(binding);
    const n = s.length !== undefined ? s.length * 4 : s.buffer.size - (s.offset ?? 0) * 4;
    if (n <= 64 * 2 ** 20) bytes += n;
  }
  return { flops: 0, bytes };
}

export const llamaLoraBench: BenchSection = async (): Promise<BenchTable> => {
  const { layers, label } = benchLayers();
  const opened = await getKernelDevice();
  if (!opened.ok) throw new Error(`no WebGPU adapter: ${opened.why}`);
  const rt = new GpuRuntime(opened.gpu.device);
  await rt.load([...SHADERS]);
  const T = Number(process.env.LLAMA_LORA_T ?? 8);
  const B = Number(process.env.LLAMA_LORA_B ?? 1);
  // GRPO's batches: LLAMA_LORA_GROUP sequences per prompt, LLAMA_LORA_COMPLETION tokens scored.
  const group = Number(process.env.LLAMA_LORA_GROUP ?? 0);
  const grpo =
    group > 0 ? { group, completion: Number(process.env.LLAMA_LORA_COMPLETION ?? 24) } : undefined;
  try {
    const shape = process.env.LLAMA_LORA_SHAPE;
    if (shape !== undefined && !['fixture', 'gpt2', '05b'].includes(shape))
      throw new Error(`LLAMA_LORA_SHAPE=${shape}: one of fixture, gpt2, 05b (the default)`);
    const gpt2 = shape === 'gpt2' ? makeConfig('tiny', 617, 'coder', { nCtx: 448 }) : null;
    const config = gpt2
      ? gptTransformerConfig(gpt2)
      : shape === 'fixture'
        ? FIXTURE_SHAPE
        : { ...QWEN05B_SHAPE, numLayers: layers };
    const rows: (string | number)[][] = [];
    const secs = (what: string, ms: number) => rows.push([what, (ms / 1000).toPrecision(3), 's']);
    let start = performance.now();
    const weights = gpt2
      ? float32Tensors(
          initialValues(gpt2, 3),
          (name) => parameterSpecs(gpt2).find((p) => p.name === name)?.shape,
        )
      : randomLlama(config as LlamaConfig, 'BF16', 3, 0.05);
    secs(`random ${gpt2 ? 'F32' : 'BF16'} weights made (host)`, performance.now() - start);
    start = performance.now();
    const { model, policy, batch, dlogp } = loraPass(rt, config, weights, B, T, grpo);
    await rt.device.queue.onSubmittedWorkDone();
    secs('base and adapters onto the device', performance.now() - start);
    start = performance.now();
    await policy.logProbs(batch);
    secs(
      `log-probs (forward), ${B} × ${T} tokens (first call, pipelines compiled)`,
      performance.now() - start,
    );
    start = performance.now();
    await policy.logProbs(batch);
    secs(`log-probs (forward), ${B} × ${T} tokens`, performance.now() - start);
    // Once to compile the backward's pipelines, then timed.
    await policy.backwardOnDevice(batch, dlogp);
    start = performance.now();
    await policy.backwardOnDevice(batch, dlogp);
    const fbMs = performance.now() - start;
    secs(`forward + backward (adapters only), ${B} × ${T} tokens`, fbMs);
    start = performance.now();
    await policy.applyAdamW({ lr: 1e-4 });
    secs(`AdamW step over ${policy.size} adapter floats`, performance.now() - start);
    rows.push(['weights on the device', (model.weightBytes / 2 ** 30).toPrecision(3), 'GiB']);
    rows.push([
      'peak resident memory of the process',
      (process.resourceUsage().maxRSS / 2 ** 20).toPrecision(3),
      'GiB',
    ]);
    // Every dispatch alone (the activations hold the real batch's values).
    const byKernel = new Map<string, { n: number; ms: number; flops: number; bytes: number }>();
    const projected = GPUS.map(() => 0);
    let dispatches = 0;
    for (const part of policy.trainingParts(batch, dlogp)) {
      if (typeof part === 'function') continue;
      for (const spec of part) {
        const program = rt.program([spec]);
        rt.submit([program]);
        await rt.device.queue.onSubmittedWorkDone();
        const t0 = performance.now();
        rt.submit([program]);
        await rt.device.queue.onSubmittedWorkDone();
        const ms = performance.now() - t0;
        rt.destroyProgram(program);
        const name = (spec.label ?? spec.entry).split(' ')[0] as string;
        const { flops, bytes } = cost(spec);
        const k = byKernel.get(name) ?? { n: 0, ms: 0, flops: 0, bytes: 0 };
        byKernel.set(name, {
          n: k.n + 1,
          ms: k.ms + ms,
          flops: k.flops + flops,
          bytes: k.bytes + bytes,
        });
        GPUS.forEach(([, f, bw, o], i) => {
          projected[i] = (projected[i] as number) + Math.max(flops / f, bytes / bw) + o;
        });
        dispatches++;
      }
    }
    const total = [...byKernel.values()].reduce((s, k) => s + k.ms, 0);
    for (const [name, k] of [...byKernel].sort((x, y) => y[1].ms - x[1].ms))
      rows.push([
        `  ${name} × ${k.n}: alone, summed (GFLOP, GFLOP/s)`,
        (k.ms / 1000).toPrecision(3),
        `s (${(k.flops / 1e9).toPrecision(3)}, ${k.flops ? (k.flops / 1e6 / k.ms).toPrecision(3) : '–'})`,
      ]);
    rows.push([`all ${dispatches} dispatches alone, summed`, (total / 1000).toPrecision(3), 's']);
    GPUS.forEach(([gpu], i) => {
      rows.push([
        `ESTIMATE, not measured: forward + backward on a ${gpu}`,
        ((projected[i] as number) * 1000).toPrecision(3),
        'ms',
      ]);
    });
    policy.free();
    return {
      title: `LoRA forward + backward on the kernels, ${gpt2 ? "the lab's tiny GPT-2 (random F32)" : shape === 'fixture' ? "the tests' random Qwen2 (2 layers, hidden 32) (random BF16)" : `${label} (random BF16)`}`,
      environment: `adapter: ${opened.gpu.adapter}; rank 8, alpha 16, ${gpt2 ? 'c_attn/c_proj/c_fc/c_proj' : 'q/k/v/o/gate/up/down'}, batch ${B} × ${T}${grpo ? ` (GRPO: ${grpo.group} per prompt, the last ${grpo.completion} scored, a group packed in one row)` : ''}`,
      columns: ['what', 'value', 'unit'],
      rows,
      notes: [
        'The projection sums, per dispatch, max(FLOPs / FLOP/s, bytes / bandwidth) + a fixed cost a dispatch, with FLOPs and bytes from its shape (16-bit weights read once per matmul); an estimate until bench/gpu measures it on a lent GPU.',
      ],
    };
  } finally {
    rt.destroy();
  }
};
