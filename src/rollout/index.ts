export { disposeCache } from '../model/transformer';
export { FullRecomputeSampler } from './fullRecomputeSampler';
export { KvCacheSampler } from './kvSampler';
export { type Pick, pickToken, rowPrng } from './pick';
export type { SampleOptions, SampleResult, Sampler } from './types';
