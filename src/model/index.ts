export { AdamW, type AdamWOptions, type AdamWState, DEFAULT_ADAMW, learningRate } from './adamw';
export {
  CHECKPOINT_FILES,
  type CheckpointFiles,
  fetchCheckpoint,
  fromGpt2Config,
  type Gpt2ConfigJson,
  type LoadedCheckpoint,
  loadCheckpoint,
  saveCheckpoint,
  toGpt2Config,
} from './checkpoint';
export {
  isPresetName,
  type ModelConfig,
  type ModelRole,
  makeConfig,
  PRESETS,
  type PresetName,
  parameterCount,
} from './config';
export {
  createModel,
  disposeModel,
  forward,
  type GPT,
  gptTransformer,
  hiddenStates,
  logitsAt,
  maskedLoss,
  param,
  sequenceLogProbs,
  trainableParams,
} from './gpt';
export { stopGradient, tokenEntropies, tokenLogProbs } from './logProbs';
export {
  createLora,
  disposeLora,
  type Lora,
  loraFromValues,
  loraModules,
  loraParams,
} from './lora';
export { GPT2_LORA_TARGETS, type LoraSettings, loraSettingsOf } from './loraSettings';
export {
  BYTES_PER_MIB,
  defaultMemoryBudgetBytes,
  memoryBudgetBytes,
  packByBudget,
  peakTensorBytes,
  samplingBytes,
  trainingBytes,
} from './memory';
export {
  causalAttention,
  copyRows,
  gatherRows,
  geluTanh,
  layerNorm,
  linear,
  matMul2d,
} from './ops';
export { initialValues, makeVariables, type Params, parameterSpecs, readValues } from './params';
export { decodeSafetensors, encodeSafetensors, type NamedTensor } from './safetensors';
export {
  applyGradientsSafely,
  type GradientApplier,
  guardedUpdate,
  type SkipReason,
  type UpdateReport,
} from './safeUpdate';
export { accumulatedStep, accumulateGradients, optimizerStep, type StepResult } from './train';
