// The lab's side of `npm run bench -- peers` that runs on its kernels alone: the two models'
// shapes (SmolLM2-135M's and Qwen2.5-0.5B's published configs, random F16 weights) and the
// kernels' prompt, single-sequence and batched decode speeds. bench/peers.ts sets them beside
// llama.cpp's; bench/gpu carries this part as its `peers` section, so a lent GPU measures the
// lab's rows the same way (llama.cpp's run in a browser page, which the GPU bundle cannot carry).

import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { checkpointTensors } from '../src/gpu/engine/deviceCheckpoint';
import { DeviceTransformer } from '../src/gpu/engine/deviceTransformer';
import { sampleOnModel } from '../src/gpu/engine/modelSampling';
import { SHADERS } from '../src/gpu/engine/ops';
import { GpuRuntime } from '../src/gpu/engine/runtime';
import { getKernelDevice } from '../src/gpu/kernels/device';
import { folderSource } from '../src/model/families/folderSourceNode';
import { readHfCheckpoint } from '../src/model/families/hfCheckpoint';
import { hubTransformerConfig } from '../src/model/families/hubConfig';
import { type FixtureSpec, qwen05bSpec, writeHfCheckpoint } from '../tests/unit/hf-fixtures';
import type { BenchSection, BenchTable } from './table';

/** SmolLM2-135M's published config.json (Llama: 30 layers, 576 wide, 9 q / 3 kv heads, tied). */
function smollm2Spec(): FixtureSpec {
  return {
    dtype: 'F16',
    shards: 1,
    config: {
      architectures: ['LlamaForCausalLM'],
      model_type: 'llama',
      vocab_size: 49152,
      hidden_size: 576,
      intermediate_size: 1536,
      num_hidden_layers: 30,
      num_attention_heads: 9,
      num_key_value_heads: 3,
      hidden_act: 'silu',
      max_position_embeddings: 8192,
      rope_theta: 100000,
      rms_norm_eps: 1e-5,
      tie_word_embeddings: true,
      torch_dtype: 'float16',
    },
  };
}

export const MODELS: Record<string, { label: string; spec: () => FixtureSpec }> = {
  smollm2: { label: 'SmolLM2-135M shape', spec: smollm2Spec },
  qwen05b: {
    label: 'Qwen2.5-0.5B shape',
    spec: () => ({ ...qwen05bSpec(), dtype: 'F16' as const }),
  },
};

export function envInt(name: string, fallback: number): number {
  const v = Number(process.env[name] ?? fallback);
  if (!Number.isInteger(v) || v < 1) throw new Error(`${name} must be a positive integer`);
  return v;
}

export function argmax(v: Float32Array): number {
  let best = 0;
  for (let i = 1; i < v.length; i++) if (v[i]! > v[best]!) best = i;
  return best;
}

export interface Speeds {
  prefill: number;
  decode: number;
}

/** GRPO's group sizes: the pair's plans per task, and its programs per task (4 × 2). */
export const GROUP_SIZES = [4, 8] as const;

/**
 * The lab's kernels: prefill the prompt, then `decode` greedy steps (logits read back, argmax on
 * the host); then a GRPO group of G rows of the same prompt sampled as a run samples them
 * (prefilled once, copied to the other rows, drawn on the device; tokens per second over all
 * rows), for each group size.
 */
export async function labKernels(
  dir: string,
  ids: number[],
  decode: number,
): Promise<Speeds & { batched: Map<number, number> }> {
  const opened = await getKernelDevice();
  if (!opened.ok) throw new Error(`no WebGPU adapter for the lab: ${opened.why}`);
  const rt = new GpuRuntime(opened.gpu.device);
  await rt.load([...SHADERS]);
  const checkpoint = await readHfCheckpoint(folderSource(dir));
  const weights = checkpointTensors(checkpoint.weights);
  const model = new DeviceTransformer(rt, hubTransformerConfig(checkpoint.config), weights, {
    contextLength: ids.length + decode + 1,
  });
  // One short prefill first: pipelines compile outside the timed runs.
  await model.prefill(ids.slice(0, 2));
  let start = performance.now();
  let next = argmax(await model.prefill(ids));
  const prefillS = (performance.now() - start) / 1000;
  start = performance.now();
  for (let i = 0; i < decode; i++) next = argmax(await model.step(next));
  const single = decode / ((performance.now() - start) / 1000);
  // A GRPO group as the lab samples it (kernelRoles.ts): one prompt prefilled once, its G
  // rows drawn and fed back on the device (greedy here), tokens read once every 16 steps. The
  // decode rate: the rows' tokens past the first over the time past a one-token call.
  const batched = new Map<number, number>();
  const threads = opened.gpu.software ? 16 : 64;
  for (const G of GROUP_SIZES) {
    const group = Array.from({ length: G }, () => ids);
    const options = (maxNewTokens: number) => ({
      maxNewTokens,
      temperature: 0,
      topK: 0,
      seed: 1,
      stopId: 0xffffffff,
    });
    await sampleOnModel(model, group, options(2), threads); // compiles the G-row program
    start = performance.now();
    await sampleOnModel(model, group, options(1), threads);
    const one = performance.now() - start;
    start = performance.now();
    await sampleOnModel(model, group, options(decode), threads);
    batched.set(G, (G * (decode - 1)) / ((performance.now() - start - one) / 1000));
  }
  return { prefill: ids.length / prefillS, decode: single, batched };
}

/** The settings both halves read: PEERS_MODELS, PEERS_PROMPT, PEERS_DECODE, PEERS_LAYERS. */
export function peersSettings() {
  const names = (process.env.PEERS_MODELS ?? 'smollm2,qwen05b').split(',');
  for (const n of names) if (!MODELS[n]) throw new Error(`PEERS_MODELS: unknown model ${n}`);
  return {
    names,
    promptTokens: envInt('PEERS_PROMPT', 128),
    decode: envInt('PEERS_DECODE', 64),
    layers: process.env.PEERS_LAYERS ? envInt('PEERS_LAYERS', 1) : null,
  };
}

/** Writes model `name`'s random checkpoint (cut to `layers` if given) under root; its label. */
export function writePeerModel(
  root: string,
  name: string,
  layers: number | null,
): { dir: string; label: string } {
  const model = MODELS[name]!;
  const spec = model.spec();
  if (layers) spec.config = { ...spec.config, num_hidden_layers: layers };
  const dir = join(root, name);
  writeHfCheckpoint(dir, spec, 7);
  return { dir, label: layers ? `${model.label}, ${layers} layers` : model.label };
}

/**
 * The GPU bundle's `peers` section: the lab's kernel rows of `npm run bench -- peers` for each
 * model (PEERS_MODELS, PEERS_PROMPT, PEERS_DECODE, PEERS_LAYERS as there), without llama.cpp.
 */
export const peersKernelsBench: BenchSection = async (): Promise<BenchTable> => {
  const { names, promptTokens, decode, layers } = peersSettings();
  const opened = await getKernelDevice();
  if (!opened.ok) throw new Error(`no WebGPU adapter for the lab: ${opened.why}`);
  const root = mkdtempSync(join(tmpdir(), 'peers-lab-'));
  const rows: (string | number)[][] = [];
  try {
    for (const name of names) {
      const { dir, label } = writePeerModel(root, name, layers);
      // The same prompt as beside llama.cpp: byte 0x78's token, promptTokens times.
      const speeds = await labKernels(dir, new Array<number>(promptTokens).fill(120), decode);
      rows.push([label, `prompt (${promptTokens} tokens)`, speeds.prefill]);
      rows.push([label, `decode (${decode} tokens, batch 1)`, speeds.decode]);
      for (const [G, speed] of speeds.batched)
        rows.push([
          label,
          `decode (${decode} tokens, batch ${G}: a GRPO group, rows together)`,
          speed,
        ]);
      rmSync(dir, { recursive: true, force: true });
    }
  } finally {
    rmSync(root, { recursive: true, force: true });
  }
  return {
    title: "The lab's kernels at the peers bench's shapes (tokens per second)",
    environment: `adapter: ${opened.gpu.adapter}; weights random F16`,
    columns: ['model', 'phase', 'lab kernels tok/s'],
    rows,
    notes: [
      "llama.cpp's rows (`npm run bench -- peers`) run in a headless Chromium page, which the GPU bundle cannot carry: set these beside that table's CPU rows, or run `npm run bench -- peers` where the GPU has a browser.",
    ],
  };
};
