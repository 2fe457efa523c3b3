// The Llama family (Llama, Qwen2, Qwen3) on tfjs, as Hugging Face defines it: a configuration
// of the one transformer (model/transformer.ts: RMSNorm, RoPE with its scaling, SwiGLU,
// grouped-query attention, Qwen2's q/k/v bias, Qwen3's q/k norm, a tied or separate head) and
// Hugging Face's weight names. Weights keep Hugging Face's [out, in] layout and compute in
// float32; the base is frozen (plain tensors, not variables). A PEFT adapter read with `model
// logits --adapter` is merged into the weights on load (lora.ts); a role's trained adapter
// (`lora`, llamaLora.ts) is applied in the forward instead, so roles share one base and the
// base is the KL reference.
import * as tf from '@tensorflow/tfjs-core';
import type { Lora } from '../lora';
import type { CausalLM } from '../policy';
import { forward, logitsAt, type Transformer, transformerLM } from '../transformer';
import { type LlamaConfig, llamaTransformerConfig } from './llamaConfig';

export interface LlamaModel {
  config: LlamaConfig;
  /** Hugging Face's names → float32 tensors. */
  weights: Map<string, tf.Tensor>;
  /** A role's LoRA adapter over `weights`, keyed `model.layers.i.self_attn.q_proj` (llamaLora.ts). */
  lora?: Lora;
}

/** A role over `base`: the base's weights (shared, frozen) with the role's adapter. */
export function llamaRole(base: LlamaModel, lora: Lora | undefined): LlamaModel {
  return lora
    ? { config: base.config, weights: base.weights, lora }
    : { config: base.config, weights: base.weights };
}

export function disposeLlamaModel(model: LlamaModel): void {
  for (const t of model.weights.values()) t.dispose();
  model.weights.clear();
}

/** The model as the one transformer reads it (its weights and adapter, not copied). */
export function llamaTransformer(model: LlamaModel): Transformer {
  return {
    config: llamaTransformerConfig(model.config),
    weight: (name) => {
      const t = model.weights.get(name);
      if (!t) throw new Error(`model has no weight ${name}`);
      return t;
    },
    ...(model.lora ? { lora: model.lora } : {}),
  };
}

/** ids [B, T] (int32) → logits [B, T, V]. Call inside tf.tidy. */
export function llamaForward(model: LlamaModel, ids: tf.Tensor2D): tf.Tensor3D {
  return forward(llamaTransformer(model), ids);
}

/** The last position's logits only, [B, V]: the head (vocabulary × d) runs once per row. */
export function llamaLastLogits(model: LlamaModel, ids: tf.Tensor2D): tf.Tensor2D {
  const [B, T] = ids.shape;
  const last = tf.tensor1d(
    Array.from({ length: B }, (_, b) => b * T + T - 1),
    'int32',
  );
  return tf.reshape(logitsAt(llamaTransformer(model), ids, last), [B, -1]);
}

/** The Llama family behind the one policy interface (model/policy.ts) the sampler talks to. */
export function llamaCausalLM(model: LlamaModel): CausalLM {
  return transformerLM(llamaTransformer(model), 'llama');
}
