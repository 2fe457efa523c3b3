export { FullRecomputeSampler } from './fullRecomputeSampler';
export { disposeCache, forwardCached, type LayerCache } from './kvForward';
export { KvCacheSampler } from './kvSampler';
export { type Pick, pickToken, rowPrng } from './pick';
export type { SampleOptions, SampleResult, Sampler } from './types';
