// A Llama-family checkpoint from any source (hfCheckpoint.ts), with its tokenizer and an
// optional PEFT adapter, as a tfjs model behind the policy interface. Everything is read and
// checked first (weights, tokenizer, chat template, the adapter's targets); only then are the
// weights widened to float32 one at a time and handed to tfjs (llamaWeights.ts), so a refusal
// leaves nothing behind, and the files' bytes are let go, so a 0.5B model holds its float32
// weights and no more; or, for a base the kernels hold, each is made when tfjs first reads it.
import type { HfTokenizer } from '../../tokenizer/hfTokenizer';
import { checkLoraTargets, type LoraAdapter, mergeLora, readLoraAdapter } from '../peft';
import type { CausalLM } from '../policy';
import type { SafetensorsDtype } from '../safetensors';
import { type CheckpointSource, type HfCheckpoint, readHfCheckpoint } from './hfCheckpoint';
import { disposeLlamaModel, type LlamaModel, llamaCausalLM } from './llama';
import { LlamaWeights } from './llamaWeights';

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
  /** onDemand: tfjs makes each weight when a forward first reads it (a base the kernels hold). */
  options: { onDemand?: boolean } = {},
): Promise<LoadedLlama> {
  const checkpoint = await readHfCheckpoint(source);
  const { config, weights, tokenizer } = checkpoint;
  const adapter = adapterSource ? await readLoraAdapter(adapterSource) : null;
  if (adapter) checkLoraTargets(new Map([...weights].map(([n, t]) => [n, t.shape])), adapter);

  const dtypes = [...new Set([...weights.values()].map((t) => t.dtype))];
  const merge = adapter
    ? (name: string, data: Float32Array, shape: number[]) => {
        const pair = adapter.modules.get(name.replace(/\.weight$/, ''));
        if (pair)
          mergeLora(
            data,
            shape[1] as number,
            shape[0] as number,
            pair.a,
            pair.b,
            pair.rank,
            adapter.scale,
            'out-in',
          );
      }
    : undefined;
  const model: LlamaModel = { config, weights: new LlamaWeights(new Map(weights), merge) };
  if (!options.onDemand) {
    try {
      (model.weights as LlamaWeights).makeAll();
    } catch (err) {
      disposeLlamaModel(model);
      throw err;
    }
  }
  // The checkpoint's own map is let go: the model's weights hold what is still needed (nothing
  // once tfjs holds every weight; the stored tensors while they are made on demand).
  weights.clear();
  return { checkpoint, model, lm: llamaCausalLM(model), tokenizer, adapter, dtypes };
}
