// Plan dropout and what the Coder sees: a dropped plan leaves its task's Planner group (its
// advantage 0, the others' computed without it); the default share is the task set's; with
// `coderSees` plan the Coder reads the signature, never the steps.
import { describe, expect, it } from 'vitest';
import { coderView } from '../../src/agents/coderView';
import { assignCredit } from '../../src/agents/credit';
import { droppedPlans } from '../../src/agents/planDropout';
import { defaultRunConfig } from '../../src/engine/session';
import { planDropoutOf, warmStartFolder } from '../../src/engine/taskSets';
import { resolveGrpoConfig } from '../../src/rl/config';
import { DEFAULT_REWARD_WEIGHTS, type ProgramOutcome } from '../../src/rl/rewards';
import { generateTasks } from '../../src/tasks';
import { generateExamplesTask } from '../../src/tasks/examples/generate';

const outcome = (passCount: number): ProgramOutcome => ({
  formatOk: true,
  passCount,
  total: 1,
  cost: null,
});

describe('plan dropout', () => {
  it('a dropped plan has no Planner advantage and the rest of its group is credited without it', () => {
    // One task, N 3 plans × M 2 programs: plan 0 passes, plan 1 fails, plan 2 (dropped) passes.
    const outcomes = [[1, 1, 0, 0, 1, 1].map(outcome)];
    const shape = { plansPerTask: 3, programsPerPlan: 2, withPlans: true };
    const kept = assignCredit(outcomes, shape, DEFAULT_REWARD_WEIGHTS, 'none');
    const dropped = assignCredit(
      outcomes,
      { ...shape, droppedPlans: [false, false, true] },
      DEFAULT_REWARD_WEIGHTS,
      'none',
    );
    expect(dropped.planner?.advantages.advantages[2]).toBe(0);
    // Without plan 2 the group is {pass, fail}: ±0.5 around their mean.
    expect(dropped.planner?.advantages.advantages[0]).toBeCloseTo(0.5);
    expect(dropped.planner?.advantages.advantages[1]).toBeCloseTo(-0.5);
    expect(kept.planner?.advantages.advantages[2]).toBeGreaterThan(0);
    // The Coder's groups do not change: each plan's M programs.
    expect(dropped.coder.advantages.advantages).toEqual(kept.coder.advantages.advantages);
  });

  it('draws the share asked, seeded', () => {
    const draw = droppedPlans(4000, 0.1, 7);
    expect(draw).toEqual(droppedPlans(4000, 0.1, 7));
    expect(draw.filter(Boolean).length / 4000).toBeGreaterThan(0.08);
    expect(draw.filter(Boolean).length / 4000).toBeLessThan(0.12);
  });

  it('defaults to 0.1 on the examples task set and 0 on the procedural one; a set value wins', () => {
    expect(planDropoutOf(defaultRunConfig())).toBe(0);
    expect(planDropoutOf(defaultRunConfig({ taskSet: 'examples' }))).toBe(0.1);
    expect(planDropoutOf(defaultRunConfig({ grpo: { planDropout: 0.3 } }))).toBe(0.3);
    expect(warmStartFolder(defaultRunConfig({ taskSet: 'examples' }))).toBe(
      'checkpoints/tiny-examples',
    );
    expect(() => resolveGrpoConfig({ planDropout: 1 })).toThrow(/planDropout/);
    expect(() => resolveGrpoConfig({ coderSees: 'plan', mode: 'single' })).toThrow(
      /coderSees plan needs a Planner/,
    );
  });
});

describe('coderSees', () => {
  it('plan: the Coder reads only the signature, on either task set', () => {
    const [procedural] = generateTasks({ tiers: ['L2'], split: 'train', count: 1, seed: 2 });
    const examples = generateExamplesTask({ split: 'train', seed: 2 }, 0);
    expect(coderView(procedural!, 'statement')).toBe(procedural);
    expect(coderView(procedural!, 'plan').statement).toMatch(
      /^solve\(a\) takes a (list of numbers|string|number) and returns .+\.$/,
    );
    expect(coderView(examples, 'plan').statement).toBe(examples.statement.split('\n')[0]);
    expect(coderView(examples, 'plan').statement).not.toContain('=');
  });
});
