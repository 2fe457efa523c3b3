// A Hugging Face checkpoint of any family the lab runs (hubConfig.ts), read from any source of files (a folder in
// Node, the Hub through its cache, a fetch in the browser): config.json, the weights
// (model.safetensors, or the shards model.safetensors.index.json names), the tokenizer files.
// Every file is untrusted input and is checked before anything is built — config.json's sizes
// against each other and the budget before any weight is asked for, the tokenizer and its chat
// template (hfTokenizer.ts) before the weights too, then each safetensors header, names and
// shapes against config.json — so a bad checkpoint is refused in words naming the file, nothing
// is left half-loaded, and a source with a cache forgets what it served (a later good download is
// not poisoned). Weights stay as the files hold them (16-bit views); the tfjs path widens them,
// the WGSL engine can upload the raw words.
import { HfTokenizer } from '../../tokenizer/hfTokenizer';
import type { StoredTensor } from '../safetensors';
import { MAX_SAFETENSORS_HEADER_BYTES, readSafetensors, readSafetensorsAt } from '../safetensors';
import { parseHubConfig } from './hfConfig';
import { type HubConfig, hubParameterCount, hubWeightSpecs } from './hubConfig';

export interface CheckpointSource {
  /** The folder or Hub id, for messages. */
  label: string;
  /** The file's bytes, or null when the checkpoint has no such file; one over `maxBytes` is refused. */
  read(file: string, maxBytes?: number): Promise<Uint8Array | null>;
  /** Drops whatever a cache kept of this checkpoint: its files were refused. */
  forget?(): Promise<void>;
  /**
   * Files on a local disk (Node's folders): their sizes, and bytes read at an offset. The weights
   * are then read a tensor at a time as a loader asks for them, never the whole file at once.
   */
  local?: {
    size(file: string): Promise<number | null>;
    readAt(file: string, offset: number, length: number): Uint8Array;
  };
}

/** A failure to fetch (network, server), not a verdict on the files: the cache keeps them. */
export class TransferError extends Error {}

/** Runs `load`; when it refuses the files (not a transfer failure), the source's cache forgets them. */
async function forgettingOnRefusal<T>(
  source: CheckpointSource,
  load: () => Promise<T>,
): Promise<T> {
  try {
    return await load();
  } catch (err) {
    if (!(err instanceof TransferError)) await source.forget?.().catch(() => undefined);
    throw err;
  }
}

export interface HfCheckpoint {
  label: string;
  config: HubConfig;
  /** config.json as parsed (fields the lab does not use included). */
  configJson: Record<string, unknown>;
  /** Every weight hubWeightSpecs names, as the file holds it (F32, F16 or BF16). */
  weights: Map<string, StoredTensor>;
  /** tokenizer.json with tokenizer_config.json and generation_config.json, checked. */
  tokenizer: HfTokenizer;
  /** The same files as parsed (a GGUF export copies them). */
  tokenizerJson: unknown;
  tokenizerConfig: Record<string, unknown> | null;
  generationConfig: Record<string, unknown> | null;
}

export const INDEX_FILE = 'model.safetensors.index.json';

/**
 * A stored tensor's name as the config's names read it. GPT-2's original checkpoints name the
 * base model's tensors without `transformer.` (`h.0.attn.c_attn.weight`); transformers adds its
 * base_model_prefix when GPT2LMHeadModel loads them, and so does the lab.
 */
function canonicalName(config: HubConfig, name: string): string {
  return config.family === 'gpt2' && !name.startsWith('transformer.') && name !== 'lm_head.weight'
    ? `transformer.${name}`
    : name;
}

export function parseJsonFile<T>(bytes: Uint8Array, file: string, label: string): T {
  try {
    return JSON.parse(new TextDecoder('utf-8', { fatal: true }).decode(bytes)) as T;
  } catch (err) {
    throw new Error(`${label}: ${file} is not valid JSON (${(err as Error).message})`);
  }
}

async function required(source: CheckpointSource, file: string): Promise<Uint8Array> {
  const bytes = await source.read(file);
  if (!bytes) throw new Error(`${source.label}: ${file} is missing`);
  return bytes;
}

async function optionalJson<T>(source: CheckpointSource, file: string): Promise<T | null> {
  const bytes = await source.read(file);
  return bytes ? parseJsonFile<T>(bytes, file, source.label) : null;
}

/** The weight files a checkpoint has: the index's shards, or model.safetensors. */
export function shardFiles(index: unknown, label: string): string[] {
  const map = (index as { weight_map?: unknown })?.weight_map;
  if (typeof map !== 'object' || map === null || Array.isArray(map))
    throw new Error(`${label}: ${INDEX_FILE} has no weight_map`);
  const files = [...new Set(Object.values(map as Record<string, unknown>))];
  if (files.some((f) => typeof f !== 'string' || f.includes('/') || !f.endsWith('.safetensors')))
    throw new Error(`${label}: ${INDEX_FILE} names a shard that is not a .safetensors file`);
  return files as string[];
}

/**
 * The config alone, parsed and checked (its family's fields, sizes that fit together and within
 * the budget), before any other file is read.
 */
export async function readConfig(
  source: CheckpointSource,
): Promise<{ json: Record<string, unknown>; config: HubConfig }> {
  return forgettingOnRefusal(source, async () => {
    const json = parseJsonFile<Record<string, unknown>>(
      await required(source, 'config.json'),
      'config.json',
      source.label,
    );
    return { json, config: parseHubConfig(json, `${source.label}: config.json`) };
  });
}

/**
 * A weight file's tensors, checked: from its header alone where the source is a local disk
 * (each tensor's bytes read when a loader asks), else from the whole file; null if absent.
 */
async function weightFile(
  source: CheckpointSource,
  file: string,
  maxBytes: number,
): Promise<Map<string, StoredTensor> | null> {
  const { label, local } = source;
  if (!local) {
    const bytes = await source.read(file, maxBytes);
    return bytes ? readSafetensors(bytes, `${label}: ${file}`).tensors : null;
  }
  const size = await local.size(file);
  if (size === null) return null;
  if (size > maxBytes)
    throw new Error(
      `${label}: ${file} is ${size} bytes, over the ${maxBytes} its checkpoint can need`,
    );
  return readSafetensorsAt(
    (offset, length) => local.readAt(file, offset, length),
    size,
    `${label}: ${file}`,
  );
}

/** Reads and checks a checkpoint. */
export function readHfCheckpoint(source: CheckpointSource): Promise<HfCheckpoint> {
  return forgettingOnRefusal(source, () => readChecked(source));
}

async function readChecked(source: CheckpointSource): Promise<HfCheckpoint> {
  const { label } = source;
  const { json: configJson, config } = await readConfig(source);
  // The tokenizer before the weights: a hostile one is refused before the big download.
  const tokenizerJson = parseJsonFile<unknown>(
    await required(source, 'tokenizer.json'),
    'tokenizer.json',
    label,
  );
  const tokenizerConfig = await optionalJson<Record<string, unknown>>(
    source,
    'tokenizer_config.json',
  );
  const generationConfig = await optionalJson<Record<string, unknown>>(
    source,
    'generation_config.json',
  );
  const tokenizer = new HfTokenizer(
    tokenizerJson,
    tokenizerConfig,
    generationConfig,
    label,
    config.vocabSize,
  );

  const indexBytes = await source.read(INDEX_FILE);
  const index = indexBytes ? parseJsonFile<unknown>(indexBytes, INDEX_FILE, label) : null;
  const files = index ? shardFiles(index, label) : ['model.safetensors'];
  const found = new Map<string, { tensor: StoredTensor; file: string }>();
  // No weight file can be larger than every weight at 4 bytes and the largest header.
  const maxWeightFileBytes = hubParameterCount(config) * 4 + MAX_SAFETENSORS_HEADER_BYTES + 8;
  for (const file of files) {
    const tensors = await weightFile(source, file, maxWeightFileBytes);
    if (!tensors) {
      throw new Error(
        index
          ? `${label}: ${file} (a shard ${INDEX_FILE} names) is missing`
          : `${label}: model.safetensors is missing (and there is no ${INDEX_FILE})`,
      );
    }
    for (const [stored, tensor] of tensors) {
      const map = (index as { weight_map: Record<string, string> } | null)?.weight_map;
      if (map && (!Object.hasOwn(map, stored) || map[stored] !== file))
        throw new Error(`${label}: ${file} holds ${stored}, which ${INDEX_FILE} places elsewhere`);
      const name = canonicalName(config, stored);
      const twice = found.get(name);
      if (twice) throw new Error(`${label}: ${file} and ${twice.file} both hold ${name}`);
      found.set(name, { tensor, file });
    }
  }
  if (index) {
    const map = (index as { weight_map: Record<string, string> }).weight_map;
    const absent = Object.keys(map).find((name) => !found.has(canonicalName(config, name)));
    if (absent)
      throw new Error(`${label}: ${map[absent]} has no ${absent} (${INDEX_FILE} says it does)`);
  }

  const weights = new Map<string, StoredTensor>();
  for (const spec of hubWeightSpecs(config)) {
    const hit = found.get(spec.name);
    if (!hit)
      throw new Error(`${label}: the weights have no ${spec.name} (config.json implies it)`);
    if (hit.tensor.shape.join(',') !== spec.shape.join(',')) {
      throw new Error(
        `${label}: ${hit.file} has ${spec.name} of shape [${hit.tensor.shape}], config.json implies [${spec.shape}]`,
      );
    }
    weights.set(spec.name, hit.tensor);
  }
  // A tied head's copy, old rotary buffers and GPT-2's attention masks are harmless (buffers,
  // not weights); anything else means another model.
  const ignorable = (name: string) =>
    name.endsWith('.rotary_emb.inv_freq') ||
    (config.family === 'gpt2' && /\.attn\.(bias|masked_bias)$/.test(name)) ||
    (config.tieWordEmbeddings && name === 'lm_head.weight');
  const extra = [...found.keys()].filter((name) => !weights.has(name) && !ignorable(name));
  if (extra.length)
    throw new Error(
      `${label}: unexpected tensors for ${config.modelType}: ${extra.slice(0, 3).join(', ')}`,
    );

  return {
    label,
    config,
    configJson,
    weights,
    tokenizer,
    tokenizerJson,
    tokenizerConfig,
    generationConfig,
  };
}
