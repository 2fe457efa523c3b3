// Reference solutions in the QuickJS sandbox: they pass there too, and every L4 family's
// naive strategy costs ≥ 10× the efficient one in deterministic `work` on efficiency tests.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createSandbox } from '../../src/sandbox/nodeSandbox';
import type { Sandbox } from '../../src/sandbox/types';
import {
  buildSuite,
  checkInSandbox,
  FAMILIES,
  generateTask,
  generateTasks,
  measureEfficiency,
  SUITES,
  TIERS,
  workRatio,
} from '../../src/tasks';

/** Tasks per tier checked in QuickJS (L4 runs naive algorithms on big inputs: fewer). */
const SANDBOX_TASKS_PER_TIER: Record<string, number> = { L1: 1000, L2: 1000, L3: 1000, L4: 200 };
const L4_TASKS_PER_FAMILY = 3;

let sandbox: Sandbox;
beforeAll(async () => {
  sandbox = await createSandbox();
});
afterAll(async () => {
  await sandbox?.close();
});

describe('reference solutions in the sandbox', () => {
  it.each(TIERS)('tier %s: every strategy passes every test', async (tier) => {
    const tasks = generateTasks({
      tiers: [tier],
      count: SANDBOX_TASKS_PER_TIER[tier] ?? 0,
      seed: 31,
    });
    const failures = await checkInSandbox(sandbox, tasks);
    expect(failures.slice(0, 5)).toEqual([]);
  });

  it('the committed suites pass too', async () => {
    const tasks = SUITES.flatMap((spec) => buildSuite(spec).tasks);
    expect(await checkInSandbox(sandbox, tasks)).toEqual([]);
  });
});

describe('L4 cost gap', () => {
  const families = FAMILIES.filter((f) => f.tier === 'L4');

  it.each(families.map((f) => f.name))('%s: naive work ≥ 10× efficient work', async (name) => {
    const tasks = [];
    for (let i = 0; tasks.length < L4_TASKS_PER_FAMILY; i++) {
      const task = generateTask({ tiers: ['L4'], seed: 41 + i }, 0);
      if (task.family === name) tasks.push(task);
    }
    for (const cost of await measureEfficiency(sandbox, tasks)) {
      expect(cost.passed).toBe(true);
      expect(
        workRatio(cost),
        `${cost.taskId}: ${cost.naive.work} vs ${cost.efficient.work}`,
      ).toBeGreaterThanOrEqual(10);
    }
  });
});
