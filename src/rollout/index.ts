export {
  type CompletionBatch,
  fromTargetLayout,
  packCompletions,
  toTargetLayout,
} from './completions';
export {
  DEFAULT_EVAL,
  type EvalOptions,
  type EvalReport,
  evaluateTasks,
  type TierReport,
} from './evaluate';
export { FullRecomputeSampler } from './fullRecomputeSampler';
export { disposeCache, forwardCached, type LayerCache } from './kvForward';
export { KvCacheSampler } from './kvSampler';
export { type Pick, pickToken, rowPrng } from './pick';
export type { SampleOptions, SampleResult, Sampler } from './types';
