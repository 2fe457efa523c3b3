// A Hugging Face checkpoint's model on tfjs (the Llama family or GPT-2, hubConfig.ts), as the
// one transformer (model/transformer.ts) runs it with the config's switches and Hugging Face's
// weight names. Weights keep the checkpoint's layout (nn.Linear's [out, in], GPT-2's Conv1D
// [in, out]) and compute in float32; the base is frozen (plain tensors, not variables). A PEFT
// adapter read with `model logits --adapter` is merged into the weights on load (load.ts); a
// role's trained adapter (`lora`, model/lora.ts) is applied in the forward instead, so roles
// share one base and the base is the KL reference.
import * as tf from '@tensorflow/tfjs-core';
import type { Lora } from '../lora';
import type { CausalLM } from '../policy';
import { forward, logitsAt, type Transformer, transformerLM } from '../transformer';
import { type HubConfig, hubTransformerConfig } from './hubConfig';

export interface HubModel {
  config: HubConfig;
  /** Hugging Face's names → float32 tensors. */
  weights: Map<string, tf.Tensor>;
  /** A role's LoRA adapter over `weights`, keyed by module (`model.layers.0.self_attn.q_proj`). */
  lora?: Lora;
}

/** A role over `base`: the base's weights (shared, frozen) with the role's adapter. */
export function hubRole(base: HubModel, lora: Lora | undefined): HubModel {
  return lora
    ? { config: base.config, weights: base.weights, lora }
    : { config: base.config, weights: base.weights };
}

export function disposeHubModel(model: HubModel): void {
  for (const t of model.weights.values()) t.dispose();
  model.weights.clear();
}

/** The model as the one transformer reads it (its weights and adapter, not copied). */
export function hubTransformer(model: HubModel): Transformer {
  return {
    config: hubTransformerConfig(model.config),
    weight: (name) => {
      const t = model.weights.get(name);
      if (!t) throw new Error(`model has no weight ${name}`);
      return t;
    },
    ...(model.lora ? { lora: model.lora } : {}),
  };
}

/** ids [B, T] (int32) → logits [B, T, V]. Call inside tf.tidy. */
export function hubForward(model: HubModel, ids: tf.Tensor2D): tf.Tensor3D {
  return forward(hubTransformer(model), ids);
}

/** The last position's logits only, [B, V]: the head (vocabulary × d) runs once per row. */
export function hubLastLogits(model: HubModel, ids: tf.Tensor2D): tf.Tensor2D {
  const [B, T] = ids.shape;
  const last = tf.tensor1d(
    Array.from({ length: B }, (_, b) => b * T + T - 1),
    'int32',
  );
  return tf.reshape(logitsAt(hubTransformer(model), ids, last), [B, -1]);
}

/** The Llama family behind the one policy interface (model/policy.ts) the sampler talks to. */
export function hubCausalLM(model: HubModel): CausalLM {
  return transformerLM(hubTransformer(model), 'llama');
}
