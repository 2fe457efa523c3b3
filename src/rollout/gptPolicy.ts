// GPT-2 (model/gpt.ts) behind the one policy interface (model/policy.ts) the sampler talks to:
// the one transformer's forward, cached forward and decode step, with GPT-2's memory estimate.
import { type GPT, samplingBytes } from '../model';
import { gptTransformer } from '../model/gpt';
import type { CausalLM } from '../model/policy';
import { transformerLM } from '../model/transformer';

export function gptCausalLM(model: GPT): CausalLM {
  return transformerLM(gptTransformer(model), 'gpt2', (rows, prefix, width, prefillRows) =>
    samplingBytes(model.config, rows, prefix, width, prefillRows),
  );
}
