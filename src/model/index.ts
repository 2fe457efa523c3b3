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
  cloneModel,
  createModel,
  disposeModel,
  forward,
  type GPT,
  maskedLoss,
  tokenLogProbs,
} from './gpt';
export { causalAttention, matMul2d } from './ops';
export { initialValues, makeVariables, type Params, parameterSpecs, readValues } from './params';
export { Prng } from './prng';
