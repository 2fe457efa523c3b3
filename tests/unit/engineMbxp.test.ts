// A run on MBXP's tasks (taskSet mbxp): one GRPO step of the shipped tiny models draws from the
// train split, judges every program against the task's parsed tests, rewards, updates and
// reports every metric, and evaluates on the validation split. The tiny models cannot solve
// MBXP (they write `solve`, not the task's function): the loop running is the point. Per-test
// pass fractions through the same judge and rewards, with programs that pass some tests.
import { readFileSync } from 'node:fs';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { PROMPT_SPECIAL_TOKENS } from '../../src/agents/format';
import { judgePrograms } from '../../src/agents/judge';
import { DEFAULT_RUN_CONFIG, decodeRunConfig } from '../../src/engine/runConfig';
import { defaultRunConfig, TrainingSession } from '../../src/engine/session';
import { runConfigFromFlags } from '../../src/engine/settings';
import { initBackend } from '../../src/gpu/backend';
import { loadCheckpointDir } from '../../src/model/checkpointNode';
import { coderRewards } from '../../src/rl/rewards';
import { createSandbox } from '../../src/sandbox/nodeSandbox';
import type { Sandbox } from '../../src/sandbox/types';
import type { Task } from '../../src/tasks';
import { loadTaskSetSplit, mbxpFile, type TaskSetSplits } from '../../src/tasks/mbxp/taskSet';

const read = (split: 'train' | 'validation') =>
  loadTaskSetSplit(readFileSync(`public/${mbxpFile(split)}`, 'utf8'), split);
const mbxp: TaskSetSplits = { train: read('train'), validation: read('validation') };
const byId = new Map([...mbxp.train, ...mbxp.validation].map((t) => [t.id, t]));

let sandbox: Sandbox;
beforeAll(async () => {
  await initBackend('wasm');
  sandbox = await createSandbox({ size: 1 });
});
afterAll(() => sandbox?.close());

const models = async () => ({
  planner: await loadCheckpointDir('public/checkpoints/tiny/planner'),
  coder: await loadCheckpointDir('public/checkpoints/tiny/coder'),
});

describe('a GRPO step on MBXP', () => {
  it('trains on the train split, judges every program on its tests, evaluates on validation', async () => {
    const config = defaultRunConfig({
      taskSet: 'mbxp',
      evalEvery: 1,
      evalTasksPerTier: 2,
      grpo: { tasksPerStep: 2, plansPerTask: 2, programsPerPlan: 2 },
    });
    const { planner, coder } = await models();
    const nCtx = coder.model.config.nCtx;
    const tokenizer = coder.tokenizer;
    const session = await TrainingSession.create(config, { planner, coder, sandbox, mbxp });
    try {
      const report = await session.trainStep();
      const trainIds = new Set(mbxp.train.map((t) => t.id));
      expect(report.groups.length).toBe(2);
      const { maxPlanTokens, maxProgramTokens } = config.grpo;
      for (const group of report.groups) {
        expect(trainIds.has(group.taskId), group.taskId).toBe(true);
        expect(group.family).toBe('mbxp');
        const task = byId.get(group.taskId) as Task;
        // The statement the models read fits the context with the longest plan and program.
        expect(task.statement.startsWith(group.statement)).toBe(true);
        expect(
          tokenizer.encode(group.statement).length +
            maxPlanTokens +
            maxProgramTokens +
            PROMPT_SPECIAL_TOKENS,
        ).toBeLessThanOrEqual(nCtx);
        expect(group.plans.length).toBe(2);
        for (const plan of group.plans) {
          expect(plan.programs.length).toBe(2);
          for (const program of plan.programs) {
            expect(program.total).toBe(task.tests.length);
            expect(program.passCount).toBeGreaterThanOrEqual(0);
            expect(program.passCount).toBeLessThanOrEqual(program.total);
            if (program.errorKind !== 'format') {
              expect(program.reward.passFraction).toBeCloseTo(program.passCount / program.total);
            }
            expect(Number.isFinite(program.reward.total)).toBe(true);
          }
        }
      }
      for (const name of [
        'planner/reward',
        'coder/reward',
        'coder/reward_std',
        'coder/frac_reward_zero_std',
        'planner/loss',
        'coder/loss',
        'coder/entropy',
        'coder/completions/mean_length',
        'coder/rewards/pass_fraction/mean',
        'eval/pass@1',
        'eval/pass@1/mbxp',
        'step_time',
        'step_time/sandbox',
        'step_time/update',
      ]) {
        expect(Number.isFinite(report.metrics[name]), name).toBe(true);
      }
      // Only the MBXP validation suite is evaluated.
      const evaluated = await session.evaluateDetailed();
      expect(Object.keys(evaluated.suites)).toEqual(['mbxp']);
      const validationIds = new Set(mbxp.validation.map((t) => t.id));
      const examples = evaluated.suites.mbxp?.examples ?? [];
      expect(examples.length).toBe(2);
      for (const example of examples) expect(validationIds.has(example.id)).toBe(true);
    } finally {
      session.dispose();
    }
  }, 300_000);

  it('refuses to start without the task set, in words', async () => {
    const { planner, coder } = await models();
    await expect(
      TrainingSession.create(defaultRunConfig({ taskSet: 'mbxp' }), { planner, coder, sandbox }),
    ).rejects.toThrow(/taskSet mbxp: the MBXP task set .* was not loaded/);
  });
});

describe('per-test pass fractions on MBXP tasks', () => {
  it('pay the share of a task’s tests a program passes', async () => {
    // A task whose tests expect different values: a program returning the first test's
    // expected value passes exactly the tests that expect the same.
    const task = mbxp.train.find((t) => {
      const first = JSON.stringify(t.tests[0]?.expected);
      return t.tests.some((test) => JSON.stringify(test.expected) !== first);
    }) as Task;
    const first = JSON.stringify(task.tests[0]?.expected);
    const same = task.tests.filter((test) => JSON.stringify(test.expected) === first).length;
    const constant = `function ${task.entryPoint}() { return ${first}; }`;
    const throwing = `function ${task.entryPoint}() { throw new Error('no'); }`;
    const judged = await judgePrograms(
      sandbox,
      [task.strategies[0]?.code ?? '', constant, throwing, 'function solve(a) { return a; }'].map(
        (completion) => ({ task, completion }),
      ),
    );
    const rewards = coderRewards(judged.map((j) => j.outcome));
    expect(judged.map((j) => j.run?.tests.map((t) => t.passed))).toEqual([
      task.tests.map(() => true),
      task.tests.map((test) => JSON.stringify(test.expected) === first),
      task.tests.map(() => false),
      undefined,
    ]);
    expect(rewards.map((r) => r.passFraction)).toEqual([1, same / task.tests.length, 0, 0]);
    expect(same / task.tests.length).toBeGreaterThan(0);
    expect(same / task.tests.length).toBeLessThan(1);
    expect(rewards[3]?.formatPenalty).toBeGreaterThan(0);
  });
});

describe('the task set setting', () => {
  it('is procedural by default and reads mbxp from a link and a flag', () => {
    expect(DEFAULT_RUN_CONFIG.taskSet).toBe('procedural');
    expect(decodeRunConfig(new URLSearchParams('taskset=mbxp')).config.taskSet).toBe('mbxp');
    const refused = decodeRunConfig(new URLSearchParams('taskset=humaneval'));
    expect(refused.config.taskSet).toBe('procedural');
    expect(refused.problems.join()).toMatch(
      /taskSet must be one of procedural \| examples \| mbxp, got humaneval/,
    );
    const flagged = runConfigFromFlags(new Map([['task-set', 'mbxp']]), DEFAULT_RUN_CONFIG);
    expect(flagged.taskSet).toBe('mbxp');
  });
});
