// The mathematical core of collaborative GRPO, engine-agnostic: a trainer samples plans and
// programs, runs them in the sandbox, then uses these pieces in this order:
// extractFunction → programOutcome → coderRewards / plannerRewards → groupAdvantages
// (plannerGroups / coderGroups) → tokenLogProbs → grpoLoss inside guardedUpdate →
// grpoLossMetrics → buildStepMetrics.

export * from '../model/safeUpdate';
export * from './advantages';
export * from './config';
export * from './extractFunction';
export * from './grpoLoss';
export * from './grpoLossReference';
export * from './grpoLossTypes';
export * from './logProbs';
export * from './metrics';
export * from './rewards';
export * from './seededRandom';
