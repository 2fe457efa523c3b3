// `npm run bench -- tasks`: for every L4 family, the naive and the efficient reference run
// on the task's efficiency tests in the QuickJS sandbox; the table shows the cost ratio in
// deterministic work (interrupt polls, ~10k QuickJS operations each) and in wall time.

import { createSandbox } from '../src/sandbox/nodeSandbox';
import { FAMILIES } from '../src/tasks/families';
import { generateTask } from '../src/tasks/generate';
import { measureEfficiency, workRatio } from '../src/tasks/sandboxCheck';
import type { Task } from '../src/tasks/types';
import type { BenchSection } from './table';

const TASKS_PER_FAMILY = 3;
const SEED = 41;

function tasksOf(family: string): Task[] {
  const tasks: Task[] = [];
  for (let i = 0; tasks.length < TASKS_PER_FAMILY; i++) {
    const task = generateTask({ tiers: ['L4'], seed: SEED + i }, 0);
    if (task.family === family) tasks.push(task);
  }
  return tasks;
}

const mean = (values: number[]) => values.reduce((s, v) => s + v, 0) / values.length;

export const tasksBench: BenchSection = async () => {
  const families = FAMILIES.filter((f) => f.tier === 'L4').map((f) => f.name);
  const sandbox = await createSandbox({ size: 1 });
  try {
    // Warm the worker so the first family's wall time is not the worker's start-up.
    await measureEfficiency(sandbox, tasksOf(families[0] ?? ''));
    const rows: (string | number)[][] = [];
    for (const family of families) {
      const costs = await measureEfficiency(sandbox, tasksOf(family));
      if (!costs.every((c) => c.passed))
        throw new Error(`${family}: a reference failed its efficiency tests`);
      const wallRatios = costs.map((c) => c.naive.wallMs / Math.max(c.efficient.wallMs, 1e-3));
      rows.push([
        family,
        mean(costs.map((c) => c.naive.work)),
        mean(costs.map((c) => c.efficient.work)),
        Math.min(...costs.map(workRatio)),
        mean(costs.map((c) => c.naive.wallMs)),
        mean(costs.map((c) => c.efficient.wallMs)),
        Math.min(...wallRatios),
      ]);
    }
    return {
      title: 'L4 tasks: naive vs efficient reference cost on efficiency tests',
      environment: `QuickJS sandbox (1 worker), ${TASKS_PER_FAMILY} tasks per family from seeds ${SEED}+`,
      columns: [
        'family',
        'naive work',
        'efficient work',
        'min work ratio',
        'naive ms',
        'efficient ms',
        'min wall ratio',
      ],
      rows,
      notes: [
        'work = interrupt polls (about 10k QuickJS operations each); the efficient side counts at least 1.',
        'Ratios are per task, minimum over the tasks of a family; the lab requires work ratio ≥ 10.',
      ],
    };
  } finally {
    await sandbox.close();
  }
};
