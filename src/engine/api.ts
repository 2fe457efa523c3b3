// The one door between the page (src/ui) and the engine layers (tasks … engine): the
// Worker protocol, the data types the page shows, the defaults and validation of a run's
// settings, and the pure maths the explainer displays. Biome's noRestrictedImports rule
// (biome.json, override for src/ui) refuses any other engine import in the page; the
// Worker entry, loaded by URL (`new URL('../engine/worker.ts', import.meta.url)`), is the
// only way the page reaches the rest.
//
// Nothing here may pull tfjs, QuickJS or Node into the page's main thread: values come
// only from plain-data modules (rl/config, rl/rewards, rl/advantages, rl/grpoLossReference,
// engine/runConfig, engine/settings (the one table of settings), engine/suggestedModels,
// engine/baseSettings, engine/loraDefaults, model/hub/hubId, engine/failure, engine/linkConsent
// (Cache Storage only: whether a link's model is there),
// gpu/engine/gpuReportFormat: the GPU report's text; gpu/runsOn: where a run runs) and the
// IndexedDB database both sides open (engine/labDb: idb only); everything else is `export type`.

export type { BackendName, BackendReport } from '../gpu/backend';
export {
  formatGpuReport,
  type GpuReport,
  SELF_CHECK_ACTIVITY,
} from '../gpu/engine/gpuReportFormat';
export type { SelfCheckSummary } from '../gpu/engine/selfCheck/types';
export { type RunsOn, runsOn } from '../gpu/runsOn';
export { parseHubId } from '../model/hub/hubId';
export {
  ADVANTAGE_STD_EPSILON,
  type GroupAdvantages,
  groupAdvantages,
  mean,
  sampleStd,
} from '../rl/advantages';
export {
  DEFAULT_GRPO_CONFIG,
  type GrpoConfig,
  grpoLossOptions,
  type LossType,
  type Role,
  type ScaleRewards,
  type TrainingMode,
  trainedRoles,
  usesPlanner,
  validateGrpoConfig,
} from '../rl/config';
export {
  aggregationWeights,
  clippedSurrogateLoss,
  grpoLossReference,
  isClippedHigh,
  isClippedLow,
  k3,
} from '../rl/grpoLossReference';
export {
  coderRewards,
  DEFAULT_REWARD_WEIGHTS,
  plannerReward,
  plannerRewards,
  type RewardParts,
  type RewardWeights,
} from '../rl/rewards';
export type { CaseTest, ErrorKind, RunCost, RunResult, TestVerdict } from '../sandbox/types';
export type { Tier } from '../tasks/types';
export { DEFAULT_HUB } from './baseSettings';
export {
  classifyFailure,
  describeRecovery,
  type EngineFailure,
  type FailureKind,
  planRecovery,
  type RecoveryPlan,
  type RecoveryReport,
} from './failure';
export { loadSnapshot, openLabDb, saveSnapshot, stepKey } from './labDb';
export {
  LESSONS,
  type Lesson,
  type LessonRun,
  lessonById,
  lessonRunConfig,
  readLessonLink,
} from './lessons';
export { downloadToConfirm, type LinkDownload } from './linkConsent';
export {
  DEFAULT_BASE_LORA_RANK,
  defaultLearningRate,
  describeLearningRate,
  followKindDefaults,
  type LearningRateDefault,
} from './loraDefaults';
export type { EngineCommand, EngineEvent, EngineStatus, WarmStartSummary } from './protocol';
export {
  type ConfigProblem,
  DEFAULT_RUN_CONFIG,
  decodeRunConfig,
  encodeRunConfig,
  runConfigProblems,
} from './runConfig';
export {
  fieldOf,
  formatTierMix,
  PRESET_NAMES,
  parseTierMix,
  SETTINGS,
  type Setting,
  type SettingKind,
  setting,
  settingByUrlKey,
  settingValue,
  TIERS,
  withSetting,
} from './settings';
export {
  describeDuration,
  describeSuggested,
  estimateStepSeconds,
  SUGGESTED_MODELS,
  type SuggestedModel,
} from './suggestedModels';
export type {
  EvalReport,
  FileMap,
  MetricRecord,
  PlanSample,
  ProgramSample,
  RunConfig,
  RunSnapshot,
  SampleGroup,
  StepReport,
} from './types';
