// Checkpoints as three files with GPT-2's names: model.safetensors, config.json (GPT-2
// fields plus the lab's), tokenizer.json. Works on bytes, so the browser (fetch) and Node
// (disk, see checkpointNode.ts) share it.
import type { CharTokenizer, TokenizerJson } from '../tokenizer';
import { fromTokenizerJson, toTokenizerJson } from '../tokenizer';
import { isPresetName, type ModelConfig, type ModelRole } from './config';
import { parseGpt2Config } from './families/hfConfig';
import type { GPT } from './gpt';
import { makeVariables, parameterSpecs, readValues } from './params';
import { decodeSafetensors, encodeSafetensors, type NamedTensor } from './safetensors';

export interface CheckpointFiles {
  'model.safetensors': Uint8Array;
  'config.json': string;
  'tokenizer.json': string;
}

export const CHECKPOINT_FILES = ['model.safetensors', 'config.json', 'tokenizer.json'] as const;

export interface Gpt2ConfigJson {
  model_type: 'gpt2';
  architectures: ['GPT2LMHeadModel'];
  vocab_size: number;
  n_positions: number;
  n_ctx: number;
  n_embd: number;
  n_layer: number;
  n_head: number;
  n_inner: number;
  activation_function: 'gelu_new';
  layer_norm_epsilon: number;
  tie_word_embeddings: true;
  bos_token_id: number;
  eos_token_id: number;
  pad_token_id: number;
  /** Lab fields. */
  preset: string;
  role: ModelRole;
  lab?: Record<string, unknown>;
}

export function toGpt2Config(
  config: ModelConfig,
  tokenizer: CharTokenizer,
  lab?: Record<string, unknown>,
): Gpt2ConfigJson {
  return {
    model_type: 'gpt2',
    architectures: ['GPT2LMHeadModel'],
    vocab_size: config.vocabSize,
    n_positions: config.nCtx,
    n_ctx: config.nCtx,
    n_embd: config.nEmbd,
    n_layer: config.nLayer,
    n_head: config.nHead,
    n_inner: config.nInner,
    activation_function: 'gelu_new',
    layer_norm_epsilon: config.layerNormEps,
    tie_word_embeddings: true,
    bos_token_id: tokenizer.eosId,
    eos_token_id: tokenizer.eosId,
    pad_token_id: tokenizer.padId,
    preset: config.preset,
    role: config.role,
    ...(lab ? { lab } : {}),
  };
}

/** The lab's model config from its config.json: GPT-2's fields as any GPT-2's, and the lab's own. */
export function fromGpt2Config(json: Partial<Gpt2ConfigJson>): ModelConfig {
  if (json?.model_type !== 'gpt2')
    throw new Error(`config.json: model_type must be "gpt2", got ${String(json?.model_type)}`);
  const preset = String(json.preset);
  if (!isPresetName(preset)) throw new Error(`config.json: unknown preset "${preset}"`);
  const role = json.role ?? 'shared';
  if (!['planner', 'coder', 'shared'].includes(role))
    throw new Error(`config.json: unknown role "${role}"`);
  const c = parseGpt2Config(json);
  return {
    preset,
    role,
    vocabSize: c.vocabSize,
    nCtx: c.maxPositionEmbeddings,
    nEmbd: c.hiddenSize,
    nLayer: c.numLayers,
    nHead: c.numHeads,
    nInner: c.intermediateSize,
    layerNormEps: c.layerNormEps,
  };
}

export async function saveCheckpoint(
  model: GPT,
  tokenizer: CharTokenizer,
  lab?: Record<string, unknown>,
): Promise<CheckpointFiles> {
  const values = await readValues(model.params);
  const tensors = new Map<string, NamedTensor>();
  for (const spec of parameterSpecs(model.config)) {
    tensors.set(spec.name, { shape: spec.shape, data: values.get(spec.name)! });
  }
  return {
    'model.safetensors': encodeSafetensors(tensors, { format: 'pt' }),
    'config.json': `${JSON.stringify(toGpt2Config(model.config, tokenizer, lab), null, 2)}\n`,
    'tokenizer.json': JSON.stringify(toTokenizerJson(tokenizer)),
  };
}

export interface LoadedCheckpoint {
  model: GPT;
  tokenizer: CharTokenizer;
  /** The lab fields stored in config.json (training provenance). */
  lab: Record<string, unknown>;
}

/** Validates everything before creating variables; every refusal says what is wrong. */
export function loadCheckpoint(files: CheckpointFiles, trainable = true): LoadedCheckpoint {
  const configJson = parseJson<Gpt2ConfigJson>(files['config.json'], 'config.json');
  const config = fromGpt2Config(configJson);
  const tokenizer = fromTokenizerJson(
    parseJson<TokenizerJson>(files['tokenizer.json'], 'tokenizer.json'),
  );
  if (tokenizer.vocabSize !== config.vocabSize) {
    throw new Error(
      `tokenizer.json has ${tokenizer.vocabSize} tokens but config.json says vocab_size ${config.vocabSize}`,
    );
  }
  const { tensors } = decodeSafetensors(files['model.safetensors']);
  const values = new Map<string, Float32Array>();
  for (const spec of parameterSpecs(config)) {
    const t = tensors.get(spec.name);
    if (!t) throw new Error(`model.safetensors has no ${spec.name}`);
    if (t.shape.join(',') !== spec.shape.join(',')) {
      throw new Error(
        `shape mismatch for ${spec.name}: file has [${t.shape}], config.json implies [${spec.shape}]`,
      );
    }
    values.set(spec.name, t.data);
  }
  const expected = new Set(parameterSpecs(config).map((s) => s.name));
  const extra = [...tensors.keys()].filter((name) => !expected.has(name));
  if (extra.length)
    throw new Error(`model.safetensors has unexpected tensors: ${extra.slice(0, 3).join(', ')}`);
  return {
    model: { config, params: makeVariables(config, values, trainable) },
    tokenizer,
    lab: configJson.lab ?? {},
  };
}

/** Browser: fetch the three files from a folder URL. */
export async function fetchCheckpoint(
  baseUrl: string,
  trainable = true,
): Promise<LoadedCheckpoint> {
  const base = baseUrl.endsWith('/') ? baseUrl : `${baseUrl}/`;
  const get = async (name: string) => {
    const res = await fetch(base + name);
    if (!res.ok) throw new Error(`fetch ${base + name}: HTTP ${res.status}`);
    return res;
  };
  const [weights, config, tokenizer] = await Promise.all(CHECKPOINT_FILES.map(get));
  return loadCheckpoint(
    {
      'model.safetensors': new Uint8Array(await weights!.arrayBuffer()),
      'config.json': await config!.text(),
      'tokenizer.json': await tokenizer!.text(),
    },
    trainable,
  );
}

function parseJson<T>(text: string, file: string): T {
  try {
    return JSON.parse(text) as T;
  } catch (err) {
    throw new Error(`${file} is not valid JSON: ${(err as Error).message}`);
  }
}
