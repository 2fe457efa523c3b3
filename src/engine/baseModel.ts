// A run's pretrained base (RunConfig.base) read from any checkpoint source — a folder in the CLI,
// the Hub through its cache in the CLI and the page's Worker — with its size stated and checked
// before the weights are fetched: config.json (and the shard index when there is one) are small,
// the weights are not, so a base that cannot fit in tfjs is refused before its download.

import { kernelEngine } from '../gpu/engine/kernelEngine';
import {
  type CheckpointSource,
  INDEX_FILE,
  parseJsonFile,
  readConfig,
} from '../model/families/hfCheckpoint';
import {
  type HubConfig,
  hubParameterCount,
  hubTransformerConfig,
} from '../model/families/hubConfig';
import { loadHubModel } from '../model/families/load';
import { loraModules } from '../model/lora';
import { loraSettingsOf } from '../model/loraSettings';
import { trainingBytes } from '../model/memory';
import type { SafetensorsDtype } from '../model/safetensors';
import { usesPlanner } from '../rl/config';
import type { BaseModel } from './baseRoles';
import { CODER_PROMPT_TOKENS, samplingStages } from './suggestedModels';
import type { RunConfig } from './types';

/**
 * The most float32 bytes tfjs is asked to hold for a base and its adapters: a wasm heap is
 * 32-bit (4 GiB at most), and a step's activations need the other half.
 */
export const MAX_BASE_FLOAT32_BYTES = 2 * 1024 ** 3;

export interface BaseSize {
  modelType: string;
  parameters: number;
  /** The weight files' bytes: the index's total_size when it says, else parameters × 2 (16-bit). */
  fileBytes: number;
  /** What tfjs holds: every weight widened to float32. */
  float32Bytes: number;
  /** The run's role adapters in tfjs: each float32 with its gradient and Adam's two moments. */
  adapterBytes: number;
  /** Sampling's KV cache (float32) for the run's largest stage: the Planner's N plans a task or the Coder's programs. */
  kvCacheBytes: number;
  /** A forward + backward of one Coder sequence; the trainer micro-batches to its memory budget. */
  trainingSequenceBytes: number;
}

const MB = 1024 * 1024;

/**
 * "qwen2 · 1.2M parameters · 2.4 MB to download · 4.9 MB as float32 in tfjs", or where the lab's
 * kernels will hold it (`onDevice`), the weights as the device keeps them: tfjs then holds none.
 */
export function describeBaseSize(size: BaseSize, onDevice = false): string {
  const params =
    size.parameters >= 1e9
      ? `${(size.parameters / 1e9).toFixed(2)}B`
      : `${(size.parameters / 1e6).toFixed(1)}M`;
  const adapters =
    size.adapterBytes > 0
      ? ` + ${(size.adapterBytes / MB).toFixed(1)} MB of adapters with Adam`
      : '';
  // tfjs's count (memory.ts) says what a wasm update holds; the device counts its own buffers.
  const activations = onDevice
    ? 'activations micro-batched to the memory budget on the device'
    : `${(size.trainingSequenceBytes / MB).toFixed(1)} MB of activations per training sequence on tfjs (micro-batched to the memory budget)`;
  const step =
    size.kvCacheBytes > 0
      ? ` · a step needs about ${(size.kvCacheBytes / MB).toFixed(1)} MB of KV cache to sample and ${activations}`
      : '';
  const held = onDevice
    ? `held on the GPU as stored (tfjs makes its ${(size.float32Bytes / MB).toFixed(1)} MB of float32 only if it runs the model)`
    : `${(size.float32Bytes / MB).toFixed(1)} MB as float32 in tfjs`;
  return `${size.modelType} · ${params} parameters · ${(size.fileBytes / MB).toFixed(1)} MB to download · ${held}${adapters}${step}`;
}

/** The base's size from config.json and the shard index, before any weight file is read. */
export async function baseSize(
  source: CheckpointSource,
  name: string,
  /** The run, for its adapters' size (none without it). */
  run?: RunConfig,
): Promise<BaseSize> {
  const { json, config } = await readConfig(source);
  // The lab's own checkpoints (a preset in config.json, the lab's tokenizer) train as themselves.
  if (typeof json.preset === 'string')
    throw new Error(
      `base ${name}: a folder of the lab's own GPT-2; it trains as itself with --checkpoint DIR (--lora-rank R for adapters)`,
    );
  const parameters = hubParameterCount(config);
  const index = await source.read(INDEX_FILE);
  let fileBytes = parameters * 2;
  if (index) {
    const total = parseJsonFile<{ metadata?: { total_size?: unknown } } | null>(
      index,
      INDEX_FILE,
      source.label,
    )?.metadata?.total_size;
    if (typeof total === 'number' && total > 0) fileBytes = total;
  }
  const lora = run ? loraSettingsOf(run, config.family) : null;
  const perRole = lora
    ? loraModules(hubTransformerConfig(config), lora.targets).reduce(
        (n, m) => n + lora.rank * (m.inn + m.out),
        0,
      )
    : 0;
  const roles = run && usesPlanner(run.grpo.mode) ? 2 : 1;
  return {
    modelType: config.modelType,
    parameters,
    fileBytes,
    float32Bytes: parameters * 4,
    adapterBytes: perRole * roles * 4 * 4,
    kvCacheBytes: run ? kvCacheBytes(config, run) : 0,
    trainingSequenceBytes: run
      ? trainingBytes(
          hubTransformerConfig(config),
          1,
          CODER_PROMPT_TOKENS + run.grpo.maxProgramTokens,
          run.grpo.maxProgramTokens,
        )
      : 0,
  };
}

/** Keys and values of every layer, float32, for the largest batch the run samples at once. */
function kvCacheBytes(config: HubConfig, run: RunConfig): number {
  const perToken = config.numLayers * 2 * config.numKvHeads * config.headDim * 4;
  return perToken * Math.max(...samplingStages(run).map((s) => s.sequences * s.tokens));
}

/** Refuses, in words, a base whose float32 weights tfjs cannot hold. */
export function checkBaseFits(size: BaseSize, name: string): void {
  if (size.float32Bytes + size.adapterBytes <= MAX_BASE_FLOAT32_BYTES) return;
  throw new Error(
    `base ${name} cannot fit: ${describeBaseSize(size)}, but tfjs holds at most ${MAX_BASE_FLOAT32_BYTES / MB} MB of base weights and adapters (a 4 GiB wasm heap, half kept for a step's activations); choose a smaller model`,
  );
}

/**
 * Reads, checks and loads the base (frozen) with its tokenizer: float32 in tfjs, or, where the
 * lab's kernels are on and will hold it (16-bit, on the device), each weight made in tfjs only
 * if tfjs comes to run the model (a fall-back off the device), so tfjs holds no second copy.
 */
export async function loadBaseModel(
  source: CheckpointSource,
  name: string,
  run?: RunConfig,
): Promise<{ base: BaseModel; size: BaseSize; dtypes: SafetensorsDtype[] }> {
  const size = await baseSize(source, name, run);
  checkBaseFits(size, name);
  const loaded = await loadHubModel(source, undefined, { onDemand: kernelEngine() !== null });
  return {
    base: { id: name, model: loaded.model, tokenizer: loaded.tokenizer },
    size,
    dtypes: loaded.dtypes,
  };
}
