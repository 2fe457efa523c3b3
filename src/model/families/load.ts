// A Llama-family checkpoint from any source (hfCheckpoint.ts), with its tokenizer and an
// optional PEFT adapter, as a tfjs model behind the policy interface. Everything is read and
// checked first (weights, tokenizer, chat template, the adapter's targets); only then are the
// weights widened to float32 one at a time and handed to tfjs, so a refusal leaves nothing behind;
// the files' bytes are let go at the end, so a 0.5B model holds its float32 weights and no more.
import * as tf from '@tensorflow/tfjs-core';
import type { HfTokenizer } from '../../tokenizer/hfTokenizer';
import type { CausalLM } from '../policy';
import { type SafetensorsDtype, toFloat32 } from '../safetensors';
import { type CheckpointSource, type HfCheckpoint, readHfCheckpoint } from './hfCheckpoint';
import { type LlamaModel, llamaCausalLM } from './llama';
import { addLora, checkLoraTargets, type LoraAdapter, readLoraAdapter } from './lora';

export interface LoadedLlama {
  checkpoint: HfCheckpoint;
  model: LlamaModel;
  lm: CausalLM;
  tokenizer: HfTokenizer;
  adapter: LoraAdapter | null;
  /** The weights' dtypes in the files (checkpoint.weights is emptied once tfjs holds them). */
  dtypes: SafetensorsDtype[];
}

export async function loadLlama(
  source: CheckpointSource,
  adapterSource?: CheckpointSource,
): Promise<LoadedLlama> {
  const checkpoint = await readHfCheckpoint(source);
  const { config, weights, tokenizer } = checkpoint;
  const adapter = adapterSource ? await readLoraAdapter(adapterSource) : null;
  if (adapter) checkLoraTargets(new Map([...weights].map(([n, t]) => [n, t.shape])), adapter);

  const model: LlamaModel = { config, weights: new Map() };
  try {
    for (const [name, stored] of weights) {
      const data = toFloat32(stored);
      const pair = adapter?.modules.get(name.replace(/\.weight$/, ''));
      if (pair && adapter) addLora(data, stored.shape, pair, adapter.scale);
      model.weights.set(name, tf.tensor(data, stored.shape, 'float32'));
    }
  } catch (err) {
    for (const t of model.weights.values()) t.dispose();
    throw err;
  }
  const dtypes = [...new Set([...weights.values()].map((t) => t.dtype))];
  // Let the files' bytes go: tfjs holds float32 copies now. (The WGSL engine, which keeps the
  // weights 16-bit, reads readHfCheckpoint's raw views instead of this.)
  weights.clear();
  return { checkpoint, model, lm: llamaCausalLM(model), tokenizer, adapter, dtypes };
}
