// `npm run bench -- peers`: the lab beside llama.cpp (@wllama/wllama's wasm in headless Chromium)
// on the same random weights, F16, in SmolLM2-135M's and Qwen2.5-0.5B's published shapes: prompt
// tokens per second (a 128-token prompt) and decode tokens per second for one sequence (64
// tokens), on WebGPU (the lab's kernels; llama.cpp's WebGPU backend where it takes the adapter)
// and on the CPU (llama.cpp's multi-threaded wasm, cross-origin isolated; the lab's tfjs wasm
// backend), then the lab's kernels decoding a GRPO group's rows together (4 and 8 rows of one
// prompt) beside llama.cpp's one sequence. Each row gives lab ÷ llama.cpp. llama.cpp's figures are its own timings; the lab's
// are wall time around prefill and the decode loop (host argmax). The lab's rows run in Node
// (Dawn over the same Vulkan driver the page's Chromium uses; tfjs-wasm), llama.cpp's in the page.
// PEERS_MODELS=smollm2,qwen05b (default both), PEERS_PROMPT (128), PEERS_DECODE (64),
// PEERS_LAYERS cuts each model's depth for a quick check (widths and vocabulary stay),
// PEERS_THREADS (2) llama.cpp's CPU threads, PEERS_KERNELS=0 leaves the lab's kernels out (the
// CPU rows at full depth, which SwiftShader would take hours over).
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import * as tf from '@tensorflow/tfjs-core';
import { initBackend } from '../src/gpu/backend';
import { getKernelDevice } from '../src/gpu/kernels/device';
import { folderSource } from '../src/model/families/folderSourceNode';
import { disposeHubModel } from '../src/model/families/hubModel';
import { loadHubModel } from '../src/model/families/load';
import type { KvLayerCache } from '../src/model/policy';
import {
  type LlamaCpp,
  type LlamaCppLoad,
  startLlamaCpp,
  writeRenderableLlamaGguf,
} from '../tests/unit/llamaCpp-harness';
import {
  argmax,
  envInt,
  GROUP_SIZES,
  labKernels,
  peersSettings,
  type Speeds,
  writePeerModel,
} from './peersLab';
import type { BenchSection, BenchTable } from './table';

/**
 * The lab's tfjs path on its wasm backend: the same cached forward and decode step its sampler
 * runs; then a GRPO group of G rows of the same prompt decoded together (the prompt's cache
 * repeated for each row, as the sampler shares a prefilled prompt), for each group size.
 */
async function labWasm(
  dir: string,
  ids: number[],
  decode: number,
): Promise<Speeds & { batched: Map<number, number> }> {
  await initBackend('wasm');
  const loaded = await loadHubModel(folderSource(dir));
  const lm = loaded.lm;
  const dispose = (cache: readonly KvLayerCache[]) => {
    for (const c of cache) tf.dispose([c.k, c.v]);
  };
  const once = async () => {
    let start = performance.now();
    const prefill = lm.forwardCached(tf.tensor2d([ids], [1, ids.length], 'int32'), 0, null);
    let next = argmax((await prefill.lastLogits.data()) as Float32Array);
    prefill.lastLogits.dispose();
    const prefillS = (performance.now() - start) / 1000;
    let cache = prefill.cache;
    start = performance.now();
    for (let i = 0; i < decode; i++) {
      const pos = ids.length + i;
      const step = lm.decodeStep([next], [pos], [0], pos, cache);
      dispose(cache);
      cache = step.cache;
      next = argmax((await step.logits.data()) as Float32Array);
      step.logits.dispose();
    }
    const single = decode / ((performance.now() - start) / 1000);
    const batched = new Map<number, number>();
    for (const G of GROUP_SIZES) {
      let rows = cache.map(({ k, v }) => ({
        k: tf.tile(k, [G, 1, 1]) as tf.Tensor3D,
        v: tf.tile(v, [G, 1, 1]) as tf.Tensor3D,
      }));
      let tokens = new Array<number>(G).fill(next);
      const past = ids.length + decode;
      start = performance.now();
      for (let i = 0; i < decode; i++) {
        const pos = past + i;
        const step = lm.decodeStep(
          tokens,
          tokens.map(() => pos),
          tokens.map(() => 0),
          pos,
          rows,
        );
        dispose(rows);
        rows = step.cache;
        const all = (await step.logits.data()) as Float32Array;
        step.logits.dispose();
        tokens = tokens.map((_, r) =>
          argmax(all.subarray(r * lm.vocabSize, (r + 1) * lm.vocabSize)),
        );
      }
      batched.set(G, (G * decode) / ((performance.now() - start) / 1000));
      dispose(rows);
    }
    dispose(cache);
    return { prefill: ids.length / prefillS, decode: single, batched };
  };
  try {
    await once(); // kernels and buffers warm
    return await once();
  } finally {
    disposeHubModel(loaded.model);
  }
}

async function llamaCppSpeeds(
  cpp: LlamaCpp,
  file: string,
  prompt: string,
  tokens: number,
  decode: number,
  load: LlamaCppLoad,
): Promise<Speeds & { buffers: string[] }> {
  const n_ctx = tokens + decode + 8;
  await cpp.greedy(file, prompt.slice(0, 8), 2, 1, { ...load, n_ctx });
  const run = await cpp.greedy(file, prompt, decode, 1, { ...load, n_ctx });
  if (run.timings.prompt_n !== tokens)
    throw new Error(`llama.cpp read the prompt as ${run.timings.prompt_n} tokens, not ${tokens}`);
  return {
    prefill: run.timings.prompt_per_second,
    decode: run.timings.predicted_per_second,
    buffers: run.buffers,
  };
}

export const peersBench: BenchSection = async (): Promise<BenchTable> => {
  const { names, promptTokens, decode, layers } = peersSettings();
  const threads = envInt('PEERS_THREADS', 2);
  const kernelsFlag = process.env.PEERS_KERNELS ?? '1';
  if (kernelsFlag !== '0' && kernelsFlag !== '1')
    throw new Error(`PEERS_KERNELS must be 0 or 1, got ${JSON.stringify(kernelsFlag)}`);
  const withKernels = kernelsFlag === '1';
  const root = mkdtempSync(join(tmpdir(), 'peers-'));
  const cpp = await startLlamaCpp(root);
  const rows: (string | number)[][] = [];
  const notes: string[] = [];
  try {
    const gpu = await cpp.webgpu();
    const opened = await getKernelDevice();
    const labAdapter = opened.ok ? opened.gpu.adapter : `none (${opened.why})`;
    const llamaGpu = gpu?.shaderF16 === true;
    if (!withKernels)
      notes.push("PEERS_KERNELS=0: the lab's kernels were left out (their rows read —).");
    if (!llamaGpu)
      notes.push(
        gpu
          ? `llama.cpp's WebGPU backend needs shader-f16, which this adapter (${gpu.adapter}) lacks: its WebGPU rows wait for a GPU; the lab's WebGPU rows are set against llama.cpp's CPU build.`
          : "the page has no WebGPU adapter: llama.cpp's WebGPU rows wait for a GPU.",
      );
    // "x" is one byte token with no merges: the prompt is exactly promptTokens tokens in both.
    const prompt = 'x'.repeat(promptTokens);
    for (const name of names) {
      const { dir, label } = writePeerModel(root, name, layers);
      const file = `${name}.gguf`;
      await writeRenderableLlamaGguf(dir, null, join(root, file), 'f16');
      // The fixture's vocabulary is byte-level: "x" is byte 0x78's token, id 120.
      const ids = new Array<number>(promptTokens).fill(120);
      const say = (what: string) => process.stderr.write(`peers: ${label}: ${what}\n`);
      say('llama.cpp CPU');
      const cpuLoad = { n_gpu_layers: 0, n_threads: threads };
      const cppCpu = await llamaCppSpeeds(cpp, file, prompt, ids.length, decode, cpuLoad);
      const cppGpu = llamaGpu
        ? await llamaCppSpeeds(cpp, file, prompt, ids.length, decode, {
            n_gpu_layers: 999,
            n_threads: threads,
          })
        : null;
      say('lab kernels');
      const kernels = opened.ok && withKernels ? await labKernels(dir, ids, decode) : null;
      say('lab wasm');
      const wasm = await labWasm(dir, ids, decode);
      const row = (phase: keyof Speeds, what: string, lab: number | null, peer: number | null) =>
        rows.push([
          label,
          `${phase === 'prefill' ? `prompt (${ids.length} tokens)` : `decode (${decode} tokens, batch 1)`}`,
          what,
          lab === null ? '—' : lab,
          peer === null ? '—' : peer,
          lab === null || peer === null ? '—' : lab / peer,
        ]);
      for (const phase of ['prefill', 'decode'] as const) {
        row(
          phase,
          cppGpu ? 'lab kernels ÷ llama.cpp WebGPU' : 'lab kernels (WebGPU) ÷ llama.cpp CPU',
          kernels?.[phase] ?? null,
          (cppGpu ?? cppCpu)[phase],
        );
        row(
          phase,
          `lab wasm ÷ llama.cpp CPU (${threads} thread${threads === 1 ? '' : 's'})`,
          wasm[phase],
          cppCpu[phase],
        );
      }
      // llama.cpp's wllama build serves one sequence: its batch-1 decode is the peer here.
      const batchedRow = (G: number, what: string, speed: number, peer: number) =>
        rows.push([
          label,
          `decode (${decode} tokens, batch ${G}: a GRPO group)`,
          what,
          speed,
          peer,
          speed / peer,
        ]);
      for (const [G, speed] of kernels?.batched ?? [])
        batchedRow(
          G,
          `lab kernels, rows together ÷ llama.cpp ${cppGpu ? 'WebGPU' : 'CPU'} batch 1`,
          speed,
          (cppGpu ?? cppCpu).decode,
        );
      for (const [G, speed] of wasm.batched)
        batchedRow(G, 'lab wasm, rows together ÷ llama.cpp CPU batch 1', speed, cppCpu.decode);
      notes.push(`${label}: llama.cpp CPU ${cppCpu.buffers.join('; ')}`);
    }
    notes.push(
      "The lab's batched rows: a GRPO group's samples of one prompt decoded together, on the kernels and on wasm (tokens per second over all rows); llama.cpp's wllama build serves one sequence at a time, so its batch-1 decode is set beside them.",
    );
    return {
      title:
        'The lab beside llama.cpp (tokens per second; ratio lab ÷ llama.cpp, above 1: the lab is faster)',
      environment: `lab WebGPU adapter: ${labAdapter}; page adapter: ${gpu ? `${gpu.adapter}, shader-f16 ${gpu.shaderF16 ? 'yes' : 'no'}` : 'none'}; weights random F16; llama.cpp via @wllama/wllama (wasm), CPU threads ${threads}; lab CPU: tfjs wasm in Node`,
      columns: ['model', 'phase', 'engines', 'lab tok/s', 'llama.cpp tok/s', 'lab ÷ llama.cpp'],
      rows,
      notes,
    };
  } finally {
    await cpp.close();
    rmSync(root, { recursive: true, force: true });
  }
};
