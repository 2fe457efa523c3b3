export { BucketedBatches, makeBatch, type TokenBatch } from './batches';
export {
  type AgentRole,
  coderPrompt,
  completionText,
  plannerPrompt,
  type RoleExample,
  roleExample,
} from './format';
export { taskExampleSource } from './taskExamples';
export { DEFAULT_SFT, runSft, type SftOptions, type SftProgress, type SftResult } from './trainer';
