// Runs every reference strategy of some tasks in the sandbox and reports what failed, plus
// the measured cost of each strategy on the task's efficiency tests.
import type { RunCost, Sandbox, SandboxJob } from '../sandbox/types';
import type { Strategy, Task } from './types';

export interface StrategyFailure {
  taskId: string;
  strategy: Strategy['name'];
  message: string;
}

/** Generous limits: references on efficiency tests run naive algorithms on purpose. */
export const REFERENCE_LIMITS = { deadlineMs: 20_000, memoryBytes: 256 * 1024 * 1024 };

function jobsFor(task: Task, testIndices?: readonly number[]): SandboxJob[] {
  const tests = testIndices ? testIndices.map((i) => task.tests[i]) : task.tests;
  return task.strategies.map((strategy) => ({
    kind: 'cases',
    id: `${task.id}/${strategy.name}`,
    code: strategy.code,
    entryPoint: task.entryPoint,
    tests: tests.filter((t) => t !== undefined),
    limits: REFERENCE_LIMITS,
  }));
}

export async function checkInSandbox(
  sandbox: Sandbox,
  tasks: readonly Task[],
): Promise<StrategyFailure[]> {
  const jobs = tasks.flatMap((task) => jobsFor(task));
  const owners = tasks.flatMap((task) => task.strategies.map((s) => ({ task, strategy: s.name })));
  const results = await sandbox.run(jobs);
  const failures: StrategyFailure[] = [];
  results.forEach((result, i) => {
    const owner = owners[i];
    if (!owner || result.passed) return;
    const bad = result.tests.findIndex((t) => !t.passed);
    const verdict = result.tests[bad];
    failures.push({
      taskId: owner.task.id,
      strategy: owner.strategy,
      message:
        result.message ??
        `test ${bad}: ${verdict?.errorKind ?? 'wrong answer'} ${verdict?.actual ?? ''} ${verdict?.message ?? ''}`.trim(),
    });
  });
  return failures;
}

export interface EfficiencyCost {
  taskId: string;
  family: string;
  naive: RunCost;
  efficient: RunCost;
  passed: boolean;
}

/** Cost of the naive and the efficient strategy of L4 tasks, on their efficiency tests only. */
export async function measureEfficiency(
  sandbox: Sandbox,
  tasks: readonly Task[],
): Promise<EfficiencyCost[]> {
  const l4 = tasks.filter((t) => t.efficiencyTests.length > 0);
  const jobs = l4.flatMap((task) =>
    jobsFor(
      {
        ...task,
        strategies: ['naive', 'efficient'].map((n) => task.strategies.find((s) => s.name === n)!),
      },
      task.efficiencyTests,
    ),
  );
  const results = await sandbox.run(jobs);
  return l4.map((task, i) => {
    const naive = results[2 * i];
    const efficient = results[2 * i + 1];
    if (!naive || !efficient) throw new Error(`missing sandbox result for ${task.id}`);
    return {
      taskId: task.id,
      family: task.family,
      naive: naive.cost,
      efficient: efficient.cost,
      passed: naive.passed && efficient.passed,
    };
  });
}

/** Work ratio naive / efficient; the efficient side counts at least one poll. */
export function workRatio(cost: Pick<EfficiencyCost, 'naive' | 'efficient'>): number {
  return cost.naive.work / Math.max(1, cost.efficient.work);
}
