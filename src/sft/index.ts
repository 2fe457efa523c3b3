export { BucketedBatches, makeBatch, type TokenBatch } from './batches';
export { taskExampleSource } from './taskExamples';
export { DEFAULT_SFT, runSft, type SftOptions, type SftProgress, type SftResult } from './trainer';
