import { beforeAll, describe, expect, it } from 'vitest';
import { evaluateSuites, firstPassingShown, swappedIndices } from '../../src/agents/evaluate';
import { initBackend } from '../../src/gpu/backend';
import { createModel, makeConfig } from '../../src/model';
import { KvCacheSampler } from '../../src/rollout';
import type { RunResult } from '../../src/sandbox/types';
import type { Task } from '../../src/tasks';
import { CharTokenizer } from '../../src/tokenizer';
import { fakeSandbox } from './sandbox-stand-in';

const tok = new CharTokenizer();

function task(id: string, tier: Task['tier']): Task {
  return {
    id,
    family: 'test',
    tier,
    statement: 'Add them up.',
    entryPoint: 'solve',
    arity: 1,
    tests: [{ args: [[1, 2]], expected: 3 }],
    strategies: [
      { name: 'direct', plan: '1. add them up', code: 'function solve(a){return a[0]+a[1]}' },
    ],
    efficiencyTests: [],
    steps: ['sum'],
  };
}

describe('planner → coder evaluation', () => {
  beforeAll(async () => {
    await initBackend('cpu');
  });

  it('reports pass@1, pass@k, cost and memory per tier', async () => {
    const config = makeConfig('tiny', tok.vocabSize, 'planner', {
      nEmbd: 16,
      nLayer: 1,
      nHead: 2,
      nCtx: 64,
    });
    const planner = createModel(config, 1);
    const coder = createModel({ ...config, role: 'coder' }, 2);
    const tasks = [task('a', 'L1'), task('b', 'L1'), task('c', 'L2')];
    // Calls: 0 greedy (task a passes), 1 reference plans (none), 2 sampled pairs a,a,b,b,c,c
    // (only the first of c passes).
    const sandbox = fakeSandbox((call, i) => (call === 0 && i === 0) || (call === 2 && i === 4));
    const agents = {
      tokenizer: tok,
      planner: new KvCacheSampler(planner),
      coder: new KvCacheSampler(coder),
    };
    const options = { referencePlans: true, samples: 2, maxPlanTokens: 6, maxProgramTokens: 6 };
    const result = await evaluateSuites(agents, { test: tasks }, options, sandbox);
    const report = result.suites.test!;
    expect(report.tiers.L1!['pass@1']).toBe(0.5);
    expect(report.tiers.L2!['pass@1']).toBe(0);
    expect(report.overall['pass@1']).toBeCloseTo(1 / 3);
    expect(report.tiers.L1!.exec_cost).toBe(100);
    expect(report.tiers.L1!.peak_memory).toBe(1000);
    expect(report.tiers.L2!.exec_cost).toBeNull();
    expect(report.tiers.L2!['pass@k']).toBe(1);
    expect(report.tiers.L2!['pass@1_sampled']).toBe(0.5);
    expect(report.tiers.L1!['pass@k']).toBe(0);
    // No statement shows examples here: each task submits its greedy program.
    expect(report.tiers.L1!['pass@1_checked']).toBe(0.5);
    expect(report.tiers.L2!['pass@1_checked']).toBe(0);
    expect(report.examples.map((e) => e.checked)).toEqual([true, false, false]);
    // Greedy (3) + reference-plan (3) + 2 samples × 3 tasks jobs, all for entry point solve.
    expect(sandbox.jobs).toHaveLength(12);
    expect(sandbox.jobs.every((j) => j.kind === 'cases' && j.entryPoint === 'solve')).toBe(true);
  });

  it('submits the first sampled program that passes the examples a statement shows', () => {
    const verdicts = (...passed: boolean[]): RunResult => ({
      id: passed.join(),
      passed: passed.every(Boolean),
      passCount: passed.filter(Boolean).length,
      total: passed.length,
      errorKind: null,
      tests: passed.map((p) => ({ passed: p, errorKind: null })),
      cost: { wallMs: 1, work: 1, peakBytes: 1 },
    });
    const crashed: RunResult = { ...verdicts(), errorKind: 'syntax', passed: false };
    // Two examples shown, then a hidden test: the second program passes the examples and fails
    // the hidden test; it is chosen all the same (the hidden tests are not looked at).
    const results = [
      crashed,
      verdicts(true, false, true),
      verdicts(true, true, false),
      verdicts(true, true, true),
    ];
    expect(firstPassingShown(results, 2)?.id).toBe('true,true,false');
    expect(firstPassingShown(results.slice(0, 2), 2)).toBeUndefined();
    expect(firstPassingShown(results, 0)).toBeUndefined();
  });

  it('measures the Collaboration Gain by intervention: own plan, swapped plan, reference plan, no plan', async () => {
    const config = makeConfig('tiny', tok.vocabSize, 'planner', {
      nEmbd: 16,
      nLayer: 1,
      nHead: 2,
      nCtx: 64,
    });
    const planner = createModel(config, 3);
    const coder = createModel({ ...config, role: 'coder' }, 4);
    const tasks = [task('a', 'L1'), task('b', 'L1'), task('c', 'L1'), task('d', 'L2')];
    // Calls, in order: 0 the Planner's plans (a, b, d pass), 1 the reference plans (all pass),
    // 2 no plan (a, c pass), 3 the swapped plans (a passes).
    const sandbox = fakeSandbox(
      (call, i) =>
        (call === 0 && i !== 2) ||
        call === 1 ||
        (call === 2 && (i === 0 || i === 2)) ||
        (call === 3 && i === 0),
    );
    const agents = {
      tokenizer: tok,
      planner: new KvCacheSampler(planner),
      coder: new KvCacheSampler(coder),
    };
    const options = { interventions: true, maxPlanTokens: 6, maxProgramTokens: 6 };
    const result = await evaluateSuites(
      agents,
      { L1: tasks.slice(0, 3), L2: tasks.slice(3) },
      options,
      sandbox,
    );
    const l1 = result.suites.L1!.overall;
    expect(l1['pass@1_swapped_plan']).toBeCloseTo(1 / 3);
    expect(l1['pass@1_no_plan']).toBeCloseTo(2 / 3);
    expect(l1.collaboration_gain).toBeCloseTo(1 / 3); // (a) − (b)
    expect(l1.planner_gap).toBeCloseTo(1 / 3); // (c) − (a)
    expect(l1.plan_vs_none).toBeCloseTo(0); // (a) − (d)
    expect(result.metrics['eval/collaboration_gain/L2']).toBe(1);
    expect(result.metrics['eval/planner_gap/L2']).toBe(0);
    expect(result.metrics['eval/plan_vs_none/L2']).toBe(1);
    expect(result.metrics['eval/collaboration_gain']).toBeCloseTo(0.5);
    expect(result.metrics['eval/planner_gap']).toBeCloseTo(0.25);
    expect(result.metrics['eval/plan_vs_none']).toBeCloseTo(0.25);
    expect(result.metrics['eval/pass@1_reference_plan']).toBe(1);
    expect(result.metrics['eval/pass@1_swapped_plan']).toBeCloseTo(0.25);
    expect(result.metrics['eval/pass@1_no_plan']).toBeCloseTo(0.5);
    expect(result.metrics['eval/pass@1_alone']).toBeUndefined();
    expect(sandbox.jobs).toHaveLength(16);
    // Without a Planner (single mode) there is no plan to intervene on.
    const single = await evaluateSuites(
      { ...agents, planner: null },
      { L1: tasks },
      options,
      fakeSandbox(() => true),
    );
    expect(single.metrics['eval/collaboration_gain']).toBeUndefined();
  });

  it('swaps each task with the next task of its own suite', () => {
    expect(swappedIndices([3, 1, 2])).toEqual([1, 2, 0, 3, 5, 4]);
  });
});
