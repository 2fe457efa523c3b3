// Roles and their topology (Planner → Coder): sampling rollouts, judging programs in the
// sandbox, collaboration-aware credit, and greedy evaluation on fixed suites.
export { assignCredit, type RoleCredit, type StepCredit } from './credit';
export { type EvaluationResult, evaluateSuites, type SuiteResult } from './evaluate';
export { type JudgedProgram, judgePrograms, type ProgramToJudge } from './judge';
export {
  type Completion,
  type RolloutAgents,
  type RolloutOptions,
  sampleRollouts,
  type TaskRollout,
} from './rollout';
