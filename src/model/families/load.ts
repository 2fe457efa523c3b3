// A Hugging Face checkpoint (any family of hubConfig.ts) from any source (hfCheckpoint.ts), with
// its tokenizer and an optional PEFT adapter, as a tfjs model behind the policy interface. Everything is read and
// checked first (weights, tokenizer, chat template, the adapter's targets); only then are the
// weights widened to float32 one at a time and handed to tfjs (hubWeights.ts), so a refusal
// leaves nothing behind, and the files' bytes are let go, so a 0.5B model holds its float32
// weights and no more; or, for a base the kernels hold, each is made when tfjs first reads it.
import type { HfTokenizer } from '../../tokenizer/hfTokenizer';
import { checkLoraTargets, type LoraAdapter, mergeLora, readLoraAdapter } from '../peft';
import type { CausalLM } from '../policy';
import type { SafetensorsDtype } from '../safetensors';
import { type CheckpointSource, type HfCheckpoint, readHfCheckpoint } from './hfCheckpoint';
import { hubTransformerConfig } from './hubConfig';
import { disposeHubModel, type HubModel, hubCausalLM } from './hubModel';
import { HubWeights } from './hubWeights';

export interface LoadedHubModel {
  checkpoint: HfCheckpoint;
  model: HubModel;
  lm: CausalLM;
  tokenizer: HfTokenizer;
  adapter: LoraAdapter | null;
  /** The weights' dtypes in the files (checkpoint.weights is emptied once tfjs holds them). */
  dtypes: SafetensorsDtype[];
}

export async function loadHubModel(
  source: CheckpointSource,
  adapterSource?: CheckpointSource,
  /** onDemand: tfjs makes each weight when a forward first reads it (a base the kernels hold). */
  options: { onDemand?: boolean } = {},
): Promise<LoadedHubModel> {
  const checkpoint = await readHfCheckpoint(source);
  const { config, weights, tokenizer } = checkpoint;
  const { weightLayout: layout } = hubTransformerConfig(config);
  const adapter = adapterSource
    ? await readLoraAdapter(adapterSource, { conv1d: layout === 'in-out' })
    : null;
  if (adapter)
    checkLoraTargets(new Map([...weights].map(([n, t]) => [n, t.shape])), adapter, layout);

  const dtypes = [...new Set([...weights.values()].map((t) => t.dtype))];
  const merge = adapter
    ? (name: string, data: Float32Array, shape: number[]) => {
        const pair = adapter.modules.get(name.replace(/\.weight$/, ''));
        if (pair)
          mergeLora(
            data,
            shape[layout === 'out-in' ? 1 : 0] as number,
            shape[layout === 'out-in' ? 0 : 1] as number,
            pair.a,
            pair.b,
            pair.rank,
            adapter.scale,
            layout,
          );
      }
    : undefined;
  const model: HubModel = { config, weights: new HubWeights(new Map(weights), merge) };
  if (!options.onDemand) {
    try {
      (model.weights as HubWeights).makeAll();
    } catch (err) {
      disposeHubModel(model);
      throw err;
    }
  }
  // The checkpoint's own map is let go: the model's weights hold what is still needed (nothing
  // once tfjs holds every weight; the stored tensors while they are made on demand).
  weights.clear();
  return { checkpoint, model, lm: hubCausalLM(model), tokenizer, adapter, dtypes };
}
