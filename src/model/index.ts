export { AdamW, type AdamWOptions, DEFAULT_ADAMW, learningRate } from './adamw';
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
  makeConfig,
  PRESETS,
  type PresetName,
  parameterCount,
  type Role,
} from './config';
export {
  type AttentionFn,
  block,
  cloneModel,
  createModel,
  disposeModel,
  embedTokens,
  forward,
  type GPT,
  head,
  maskedLoss,
  param,
  tokenLogProbs,
} from './gpt';
export { causalAttention, geluTanh, layerNorm, linear, matMul2d } from './ops';
export { initialValues, makeVariables, type Params, parameterSpecs, readValues } from './params';
export { Prng } from './prng';
export { decodeSafetensors, encodeSafetensors, type NamedTensor } from './safetensors';
export { optimizerStep, type StepResult } from './train';
