// GPT-2 (model/gpt.ts) behind the one policy interface (model/policy.ts) the sampler talks to:
// its forward, and rollout/kvForward.ts' cached forward and decode step.
import { forward, type GPT, logitsAt, samplingBytes } from '../model';
import type { CausalLM } from '../model/policy';
import { decodeStep, forwardCached, type LayerCache } from './kvForward';

export function gptCausalLM(model: GPT): CausalLM {
  const c = model.config;
  return {
    family: 'gpt2',
    vocabSize: c.vocabSize,
    contextLength: c.nCtx,
    numLayers: c.nLayer,
    cacheHeads: c.nHead,
    forward: (ids) => forward(model, ids),
    logitsAt: (ids, rows) => logitsAt(model, ids, rows),
    forwardCached: (ids, start, cache) =>
      forwardCached(model, ids, start, cache as LayerCache[] | null),
    decodeStep: (tokens, positions, firstKey, pastLength, cache) =>
      decodeStep(model, tokens, positions, firstKey, pastLength, cache),
    samplingBytes: (rows, prefix, width, prefillRows) =>
      samplingBytes(c, rows, prefix, width, prefillRows),
  };
}
