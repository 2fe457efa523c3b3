// One task per JSON line in the format other trainers read (TRL-style prompt messages).
import type { Task } from './types';

export interface ExportRecord {
  task_id: string;
  prompt: { role: 'user'; content: string }[];
  entry_point: string;
  arity: number;
  tests: { args: unknown[]; expected: unknown }[];
  /** The examples world's shown examples (also the first tests); absent elsewhere. */
  examples?: { args: unknown[]; expected: unknown }[];
  efficiency_tests: number[];
  reference_solutions: { strategy: string; plan: string; code: string }[];
  tier: string;
  family: string;
  steps: string[];
}

function toExportRecord(task: Task): ExportRecord {
  return {
    task_id: task.id,
    prompt: [{ role: 'user', content: task.statement }],
    entry_point: task.entryPoint,
    arity: task.arity,
    tests: task.tests.map((t) => ({ args: t.args, expected: t.expected })),
    ...(task.examples
      ? { examples: task.examples.map((t) => ({ args: t.args, expected: t.expected })) }
      : {}),
    efficiency_tests: task.efficiencyTests,
    reference_solutions: task.strategies.map((s) => ({
      strategy: s.name,
      plan: s.plan,
      code: s.code,
    })),
    tier: task.tier,
    family: task.family,
    steps: task.steps,
  };
}

export function toJsonl(tasks: readonly Task[]): string {
  return tasks.map((task) => `${JSON.stringify(toExportRecord(task))}\n`).join('');
}
