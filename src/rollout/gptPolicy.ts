// GPT-2 (model/gpt.ts) behind the one policy interface (model/policy.ts) the sampler talks to:
// the one transformer's forward, cached forward and decode step.
import { type GPT, gptTransformer } from '../model/gpt';
import type { CausalLM } from '../model/policy';
import { transformerLM } from '../model/transformer';

export function gptCausalLM(model: GPT): CausalLM {
  return transformerLM(gptTransformer(model), 'gpt2');
}
