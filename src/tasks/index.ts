// Procedural tasks for the Planner and the Coder.
//
// A task is a plain-words statement, an entry point (`solve` for generated tasks) with its
// arity, JSON test cases, and reference strategies (numbered plan + code). Tiers: L1 one
// step, L2 two, L3 three or four, L4 two strategies ('naive', 'efficient') whose sandbox
// `work` differs ≥ 10× on the tests listed in `efficiencyTests`.
//
// Trainers:
//   const tasks = generateTasks({ tiers: ['L1', 'L2'], split: 'train', count: 64, seed: 1 });
//   const sampler = createTaskSampler({ mix: { L1: 1, L2: 2, L3: 2, L4: 1 }, split: 'train', seed: 1 });
//   const batch = sampler.next(16);            // deterministic stream, resumable at `position`
// Task i of a stream depends only on (seed, split, tiers/mix, i).
//
// Splits (fixed by SPLIT_SEED, independent of the generation seed): 'heldout' holds
// compositions containing a step pair that never occurs together in 'train' or
// 'validation'; 'validation' holds statements never in 'train'. Held-out exists for L2/L3.
//
// Files: `loadSuite(json)` reads public/tasks/suite-*.json; `parseUserTasks(text)` reads a
// hand-written file and returns { tasks, errors } (bad tasks refused, good ones kept);
// `toJsonl(tasks)` writes the export format (`npm run --silent tasks -- export ...`).
export { type ExportRecord, toJsonl } from './exportJsonl';
export { ENTRY_POINT, FAMILIES, type Family } from './families';
export { createTaskSampler, type GenerateOptions, generateTask, generateTasks } from './generate';
export { jsonProblem } from './json';
export { Rng } from './random';
export { checkInSandbox, type EfficiencyCost, measureEfficiency, workRatio } from './sandboxCheck';
export { heldOutPairs, SPLIT_SEED, splitOf, stepPairs } from './splits';
export { STEPS } from './steps';
export {
  buildSuite,
  loadSuite,
  SUITE_NAMES,
  SUITE_SEED,
  SUITES,
  type SuiteFile,
  type SuiteName,
  serializeSuite,
} from './suites';
export {
  type JsonValue,
  SPLITS,
  type Split,
  type Strategy,
  type StrategyName,
  type Task,
  type TaskTest,
  TIERS,
  type Tier,
} from './types';
export { parseUserTasks, type UserTasksResult } from './userTasks';
export { formatTaskError, type TaskError, validateTask } from './validate';
