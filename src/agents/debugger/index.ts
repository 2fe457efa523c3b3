// The Debugger agent (planner,coder,debugger topologies): after the Coder's programs are
// judged, up to `repairedProgramsPerStep` failing programs (a seeded draw) each get D
// sampled repairs, judged by the sandbox and credited with their improvement. Everything
// the Debugger adds to a step lives in this folder: its prompt (format.ts), the report it
// reads (report.ts), its credit (credit.ts), and here its sampling and trainer sequences.
import type { ScaleRewards } from '../../rl/config';
import {
  type ProgramOutcome,
  passesAll,
  type RewardParts,
  type RewardWeights,
} from '../../rl/rewards';
import type { PolicySequence } from '../../rl/trainer';
import type { Sampler } from '../../rollout/types';
import type { Sandbox } from '../../sandbox/types';
import type { Task } from '../../tasks';
import { Rng } from '../../tasks/random';
import type { CharTokenizer } from '../../tokenizer';
import type { RoleCredit } from '../credit';
import { type JudgedProgram, judgePrograms } from '../judge';
import { type Completion, sampleCompletions } from '../rollout';
import { debuggerCredit, repairRewards } from './credit';
import { debuggerPrompt } from './format';
import { failureReport } from './report';

export {
  debuggerCredit,
  improvement,
  postRepairCredit,
  repairRewards,
} from './credit';
export { debuggerExample, debuggerPrompt } from './format';
export { failureReport } from './report';

/** One program of the step that failed a test, as the Debugger sees it. */
export interface RepairTarget {
  /** Index of the program in the step's flat program list (task, plan, program order). */
  programIndex: number;
  taskIndex: number;
  task: Task;
  plan: string;
  /** The extracted function, or the raw completion when none was found. */
  program: string;
  report: string;
}

/** A step's Debugger work: its targets, D repairs each (target-major), judged and credited. */
export interface DebuggerStep {
  targets: RepairTarget[];
  repairs: Completion[];
  judged: JudgedProgram[];
  /** Each repair's own reward (the Coder's formula), before the original's is subtracted. */
  repairRewards: RewardParts[];
  credit: RoleCredit;
  repairsPerProgram: number;
}

export interface DebuggerOptions {
  repairsPerProgram: number;
  repairedProgramsPerStep: number;
  maxProgramTokens: number;
  temperature: number;
  topK: number;
  /** Seeds the choice of programs (seed) and the repairs' sampling (seed + 1). */
  seed: number;
  weights: RewardWeights;
  scale: ScaleRewards;
  /**
   * The Debugger's context: a failing program whose prompt leaves no room for a whole
   * repair (prompt + maxProgramTokens) is not repaired. Absent: no limit.
   */
  contextTokens?: number;
}

/** The programs a step repairs: the failing ones, at most `limit`, a seeded draw kept in order. */
export function chooseTargets(failing: readonly number[], limit: number, seed: number): number[] {
  if (failing.length <= limit) return [...failing];
  return new Rng(seed)
    .shuffle([...failing])
    .slice(0, limit)
    .sort((a, b) => a - b);
}

/**
 * Runs the Debugger on a step's judged programs. `programs[i]` is the i-th program of the
 * flat list with its task index, plan text and judgement; `originalRewards[i]` its Coder
 * reward; `taskOutcomes[t]` every outcome of task t (the repairs' efficiency baseline).
 */
export async function runDebugger(
  programs: readonly {
    taskIndex: number;
    task: Task;
    plan: string;
    completion: string;
    judged: JudgedProgram;
  }[],
  originalRewards: readonly RewardParts[],
  taskOutcomes: readonly (readonly ProgramOutcome[])[],
  agent: { sampler: Sampler; tokenizer: CharTokenizer },
  sandbox: Sandbox,
  options: DebuggerOptions,
): Promise<DebuggerStep> {
  const tok = agent.tokenizer;
  const candidates = new Map<number, { target: RepairTarget; prompt: number[] }>();
  programs.forEach((p, i) => {
    if (passesAll(p.judged.outcome)) return;
    const target: RepairTarget = {
      programIndex: i,
      taskIndex: p.taskIndex,
      task: p.task,
      plan: p.plan,
      program: p.judged.code || p.completion,
      report: failureReport(p.task, p.judged.run) ?? 'no test failed',
    };
    const prompt = debuggerPrompt(tok, p.task.statement, p.plan, target.program, target.report);
    const room = options.contextTokens ?? Number.POSITIVE_INFINITY;
    if (prompt.length + options.maxProgramTokens <= room) candidates.set(i, { target, prompt });
  });
  const chosen = chooseTargets(
    [...candidates.keys()],
    options.repairedProgramsPerStep,
    options.seed,
  );
  const targets = chosen.map((i) => candidates.get(i)!.target);
  const D = options.repairsPerProgram;
  const prompts = chosen.flatMap((i) => Array.from({ length: D }, () => candidates.get(i)!.prompt));
  const repairs = await sampleCompletions(agent.sampler, tok, prompts, {
    maxNewTokens: options.maxProgramTokens,
    temperature: options.temperature,
    topK: options.topK,
    seed: options.seed + 1,
  });
  const judged = await judgePrograms(
    sandbox,
    repairs.map((r, i) => ({ task: targets[Math.floor(i / D)]!.task, completion: r.text })),
  );
  // Each repair's reward, with its task's originals and repairs as the efficiency baseline.
  const rewards: RewardParts[] = new Array(repairs.length);
  const byTask = new Map<number, number[]>();
  judged.forEach((_, i) => {
    const t = targets[Math.floor(i / D)]!.taskIndex;
    byTask.set(t, [...(byTask.get(t) ?? []), i]);
  });
  for (const [t, indices] of byTask) {
    const parts = repairRewards(
      taskOutcomes[t] ?? [],
      indices.map((i) => judged[i]!.outcome),
      options.weights,
    );
    indices.forEach((i, k) => {
      rewards[i] = parts[k]!;
    });
  }
  const credit = debuggerCredit(
    targets.map((t) => originalRewards[t.programIndex]!),
    rewards,
    D,
    options.scale,
  );
  return { targets, repairs, judged, repairRewards: rewards, credit, repairsPerProgram: D };
}

/** The Debugger's sequences with their advantages, for its RoleTrainer. */
export function debuggerSequences(step: DebuggerStep): PolicySequence[] {
  return step.repairs.map((r, i) => ({
    prompt: r.prompt,
    completion: r.tokens,
    oldLogProbs: r.logProbs,
    advantage: step.credit.advantages.advantages[i] ?? 0,
  }));
}

/** Share of the repaired programs that at least one of their D repairs made pass every test. */
export function fixedShare(step: DebuggerStep): number {
  if (step.targets.length === 0) return 0;
  const D = step.repairsPerProgram;
  let fixed = 0;
  for (let p = 0; p < step.targets.length; p++) {
    if (step.judged.slice(p * D, (p + 1) * D).some((j) => passesAll(j.outcome))) fixed++;
  }
  return fixed / step.targets.length;
}
