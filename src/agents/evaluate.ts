// Pass@1 on fixed task suites: for each task the Planner writes one greedy plan and the Coder
// one greedy program from it (in single mode the Coder gets an empty plan), the sandbox
// judges it, and we report the pass rate per suite plus the execution cost (QuickJS work)
// and peak memory of the passing programs. Greedy decoding makes it deterministic.

import { EVAL_METRICS, evalPassAt1Metric } from '../rl/metrics';
import type { Sampler } from '../rollout/types';
import type { Sandbox } from '../sandbox/types';
import type { Task } from '../tasks';
import type { CharTokenizer } from '../tokenizer';
import { judgePrograms } from './judge';
import { sampleRollouts } from './rollout';

export interface SuiteResult {
  tasks: number;
  passed: number;
  /** Mean work / peak bytes over the passing programs; null when none passed. */
  execCost: number | null;
  peakMemory: number | null;
}

export interface EvaluationResult {
  /** `eval/pass@1/<suite>`, `eval/pass@1` (all tasks), `eval/exec_cost[/<suite>]`, `eval/peak_memory[/<suite>]`. */
  metrics: Record<string, number>;
  suites: Record<string, SuiteResult>;
}

export async function evaluateSuites(
  agents: { tokenizer: CharTokenizer; planner: Sampler | null; coder: Sampler },
  suites: Readonly<Record<string, readonly Task[]>>,
  options: { maxPlanTokens: number; maxProgramTokens: number },
  sandbox: Sandbox,
): Promise<EvaluationResult> {
  const names = Object.keys(suites);
  const tasks = names.flatMap((name) => suites[name] ?? []);
  const rollouts = await sampleRollouts(tasks, agents, {
    plansPerTask: 1,
    programsPerPlan: 1,
    maxPlanTokens: options.maxPlanTokens,
    maxProgramTokens: options.maxProgramTokens,
    temperature: 0,
    topK: 0,
    plannerSeed: 0,
    coderSeed: 0,
  });
  const judged = await judgePrograms(
    sandbox,
    rollouts.map((r) => ({ task: r.task, completion: r.programs[0]?.[0]?.text ?? '' })),
  );

  const metrics: Record<string, number> = {};
  const results: Record<string, SuiteResult> = {};
  const allPassing: { work: number; peakBytes: number }[] = [];
  let offset = 0;
  for (const name of names) {
    const count = suites[name]?.length ?? 0;
    const passing = judged
      .slice(offset, offset + count)
      .filter((j) => j.run?.passed)
      .map((j) => ({ work: j.run?.cost.work ?? 0, peakBytes: j.run?.cost.peakBytes ?? 0 }));
    offset += count;
    allPassing.push(...passing);
    const result: SuiteResult = {
      tasks: count,
      passed: passing.length,
      execCost: meanOrNull(passing.map((p) => p.work)),
      peakMemory: meanOrNull(passing.map((p) => p.peakBytes)),
    };
    results[name] = result;
    metrics[evalPassAt1Metric(name)] = count === 0 ? 0 : passing.length / count;
    if (result.execCost !== null) metrics[`${EVAL_METRICS.execCost}/${name}`] = result.execCost;
    if (result.peakMemory !== null)
      metrics[`${EVAL_METRICS.peakMemory}/${name}`] = result.peakMemory;
  }
  metrics[EVAL_METRICS.passAt1] = tasks.length === 0 ? 0 : allPassing.length / tasks.length;
  // Cost and memory exist only where something passed: absent rather than a fake 0.
  const cost = meanOrNull(allPassing.map((p) => p.work));
  const memory = meanOrNull(allPassing.map((p) => p.peakBytes));
  if (cost !== null) metrics[EVAL_METRICS.execCost] = cost;
  if (memory !== null) metrics[EVAL_METRICS.peakMemory] = memory;
  return { metrics, suites: results };
}

function meanOrNull(values: readonly number[]): number | null {
  return values.length === 0 ? null : values.reduce((a, b) => a + b, 0) / values.length;
}
