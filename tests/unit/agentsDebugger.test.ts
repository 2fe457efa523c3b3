// The Debugger: the sandbox's report it reads (real QuickJS), its credit against
// hand-computed numbers (repair improvement, efficiency against the task's programs, D
// repairs per group, the post-repair credit of the Coder and Planner), the mutations of its
// warm start, and its prompt fitting the tiny model's context.

import { readFileSync } from 'node:fs';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { assignCredit } from '../../src/agents/credit';
import {
  chooseTargets,
  debuggerCredit,
  debuggerPrompt,
  failureReport,
  improvement,
  postRepairCredit,
  repairRewards,
} from '../../src/agents/debugger';
import { MUTATION_KINDS, mutate } from '../../src/agents/debugger/mutate';
import { judgePrograms } from '../../src/agents/judge';
import { debuggerExamples } from '../../src/agents/warmStartAgents';
import { decodeRunConfig, encodeRunConfig } from '../../src/engine/runConfig';
import { defaultRunConfig } from '../../src/engine/session';
import { runConfigFromFlags } from '../../src/engine/settings';
import { PRESETS } from '../../src/model';
import { ADVANTAGE_STD_EPSILON } from '../../src/rl/advantages';
import { resolveGrpoConfig } from '../../src/rl/config';
import {
  DEFAULT_REWARD_WEIGHTS,
  type ProgramOutcome,
  type RewardParts,
} from '../../src/rl/rewards';
import type { Sandbox } from '../../src/sandbox';
import { createSandbox } from '../../src/sandbox/nodeSandbox';
import { createTaskSampler, type Task } from '../../src/tasks';
import { Rng } from '../../src/tasks/random';
import { fromTokenizerJson } from '../../src/tokenizer/charTokenizer';

let sandbox: Sandbox;
beforeAll(async () => {
  sandbox = await createSandbox({ size: 1 });
});
afterAll(async () => {
  await sandbox.close();
});

const task: Task = {
  id: 'sum',
  family: 'hand',
  tier: 'L1',
  statement: 'Return the sum of the numbers in xs.',
  entryPoint: 'f',
  arity: 1,
  tests: [
    { args: [[1, 2]], expected: 3 },
    { args: [[4, 5, 6]], expected: 15 },
  ],
  strategies: [
    {
      name: 'direct',
      plan: '1. add up the numbers',
      code: 'function f(xs) { return xs.reduce((a, b) => a + b, 0); }',
    },
  ],
  efficiencyTests: [],
  steps: ['sum'],
};

const parts = (passFraction: number, efficiency: number, formatPenalty: number): RewardParts => ({
  passFraction,
  efficiency,
  formatPenalty,
  total: passFraction + 0.25 * efficiency - formatPenalty,
});

describe('the sandbox report of the first failing test', () => {
  it('names the call, the expected value and what came back (real QuickJS)', async () => {
    const [wrong, thrown, none, passing] = await judgePrograms(sandbox, [
      { task, completion: 'function f(xs) { return xs.length; }' },
      { task, completion: 'function f(xs) { return xs.foo.bar; }' },
      { task, completion: 'I cannot write this' },
      { task, completion: task.strategies[0]!.code },
    ]);
    expect(failureReport(task, wrong!.run)).toBe('f([1,2]) should be 3, got 2');
    expect(failureReport(task, thrown!.run)).toBe('f([1,2]) should be 3, threw a runtime error');
    expect(failureReport(task, none!.run)).toBe('no function f found');
    expect(failureReport(task, passing!.run)).toBeNull();
  });

  it('cuts long values and the whole line', async () => {
    const long: Task = {
      ...task,
      tests: [{ args: [Array.from({ length: 60 }, (_, i) => i)], expected: 1770 }],
    };
    const [judged] = await judgePrograms(sandbox, [
      { task: long, completion: 'function f(xs) { return xs; }' },
    ]);
    const report = failureReport(long, judged!.run)!;
    expect(report.length).toBeLessThanOrEqual(160);
    expect(report).toMatch(/^f\(\[0,1,2,.*…\) should be 1770, got \[0,1,.*…$/);
  });
});

describe('the Debugger credit (hand-computed)', () => {
  it('pays each repair its reward minus the original program’s, groups of D', () => {
    // Two failing programs: one passed 1 of 2 tests (0.5), one had no function (−0.5).
    const originals = [parts(0.5, 0, 0), parts(0, 0, 0.5)];
    // D = 2 repairs each: 1.25 (all pass, fastest), 0.5 (half); 0 (none), 1.0 (all, eff 0).
    const repairs = [parts(1, 1, 0), parts(0.5, 0, 0), parts(0, 0, 0), parts(1, 0, 0)];
    const credit = debuggerCredit(originals, repairs, 2, 'group');
    expect(credit.rewards.map((r) => r.total)).toEqual([0.75, 0, 0.5, 1.5]);
    expect(credit.rewards[3]).toEqual({
      passFraction: 1,
      efficiency: 0,
      formatPenalty: -0.5,
      total: 1.5,
    });
    // Group std (unbiased) of [0.75, 0] = 0.75/√2; Â = ±0.375 / (std + 1e-4).
    const std = 0.75 / Math.SQRT2;
    const a = 0.375 / (std + ADVANTAGE_STD_EPSILON);
    const [a0, a1, a2, a3] = credit.advantages.advantages;
    expect(a0).toBeCloseTo(a, 10);
    expect(a1).toBeCloseTo(-a, 10);
    // [0.5, 1.5]: same spread 1/√2, Â = ∓0.5/(std + ε).
    const b = 0.5 / (1 / Math.SQRT2 + ADVANTAGE_STD_EPSILON);
    expect(a2).toBeCloseTo(-b, 10);
    expect(a3).toBeCloseTo(b, 10);
    expect(credit.advantages.rewardMean).toBeCloseTo(2.75 / 4, 12);
    expect(credit.advantages.fracZeroStd).toBe(0);
    // A copy of the program earns nothing.
    expect(improvement(originals[0]!, originals[0]!).total).toBe(0);
    expect(() => debuggerCredit(originals, repairs.slice(1), 2, 'group')).toThrow(/3 repairs/);
  });

  it('scores a repair’s efficiency against the task’s passing programs and repairs', () => {
    const outcome = (passCount: number, cost: number | null, formatOk = true): ProgramOutcome => ({
      formatOk,
      passCount,
      total: 2,
      cost,
    });
    // The task's programs: one passing at cost 10, one failing. Repairs: cost 20 and cost 10.
    const rewards = repairRewards(
      [outcome(2, 10), outcome(1, 5)],
      [outcome(2, 20), outcome(2, 10), outcome(0, null, false)],
      DEFAULT_REWARD_WEIGHTS,
    );
    // eff = (10 + 1) / (20 + 1) for the slower repair, 1 for the one as fast as the best.
    expect(rewards[0]!.total).toBeCloseTo(1 + 0.25 * (11 / 21), 12);
    expect(rewards[1]!.total).toBeCloseTo(1.25, 12);
    expect(rewards[2]!.total).toBeCloseTo(-0.5, 12);
  });

  it('repairCredit repaired: a repaired program counts with the best of it and its repairs', () => {
    const o = (passCount: number): ProgramOutcome => ({
      formatOk: true,
      passCount,
      total: 2,
      cost: 3,
    });
    // One task, N = 2 plans × M = 2 programs: rewards 1.25, 0 | 0.5, 0.
    const credit = assignCredit(
      [[o(2), o(0), o(1), o(0)]],
      { plansPerTask: 2, programsPerPlan: 2, withPlans: true },
      DEFAULT_REWARD_WEIGHTS,
      'none',
    );
    expect(credit.coder.rewards.map((r) => r.total)).toEqual([1.25, 0, 0.5, 0]);
    // Program 1 (0) repaired to 1.25 and 0.25 → 1.25; program 2 (0.5) to 0 and 0.25 → stays 0.5.
    const after = postRepairCredit(
      credit,
      [
        { programIndex: 1, repairs: [parts(1, 1, 0), parts(0, 1, 0)] },
        { programIndex: 2, repairs: [parts(0, 0, 0), parts(0.25, 0, 0)] },
      ],
      { tasks: 1, plansPerTask: 2, programsPerPlan: 2 },
      'none',
    );
    expect(after.coder.rewards.map((r) => r.total)).toEqual([1.25, 1.25, 0.5, 0]);
    // Plan 0's programs now tie (no signal); plan 1's: ±0.25 (scale none).
    expect(after.coder.advantages.advantages).toEqual([0, 0, 0.25, -0.25]);
    // Plans: (1.25 + 1.25) / 2 = 1.25, (0.5 + 0) / 2 = 0.25; Â = ±0.5.
    expect(after.planner!.rewards.map((r) => r.total)).toEqual([1.25, 0.25]);
    expect(after.planner!.advantages.advantages).toEqual([0.5, -0.5]);
    // The original credit is untouched (repairCredit original, the default).
    expect(credit.planner!.rewards.map((r) => r.total)).toEqual([0.625, 0.25]);
    expect(resolveGrpoConfig().repairCredit).toBe('original');
  });

  it('repairs a seeded draw of at most P failing programs, in order', () => {
    expect(chooseTargets([1, 4, 6], 8, 3)).toEqual([1, 4, 6]);
    const drawn = chooseTargets([0, 2, 3, 5, 7, 9, 11], 3, 5);
    expect(drawn).toHaveLength(3);
    expect(drawn).toEqual([...drawn].sort((a, b) => a - b));
    expect(chooseTargets([0, 2, 3, 5, 7, 9, 11], 3, 5)).toEqual(drawn);
  });
});

describe('the Debugger warm start data', () => {
  it('mutations break reference programs, and the kept ones fail in the sandbox', async () => {
    const rng = new Rng(3);
    const code =
      'function solve(a){let c=0;for(let i=0;i<a.length;i++)c+=a[i]*2;return a.filter(x=>x>1).length+c}';
    for (const kind of MUTATION_KINDS) {
      const mutant = mutate(code, kind, rng);
      expect(mutant, kind).not.toBeNull();
      expect(mutant).not.toBe(code);
    }
    const tasks = createTaskSampler({
      mix: { L1: 1, L2: 1, L3: 1, L4: 1 },
      split: 'train',
      seed: 9,
    }).next(40);
    const examples = await debuggerExamples(tasks, sandbox, 1);
    expect(examples.length).toBeGreaterThan(30);
    const judged = await judgePrograms(
      sandbox,
      examples.map((e) => ({
        task: tasks.find((t) => t.statement === e.statement)!,
        completion: e.program,
      })),
    );
    for (const j of judged) expect(j.run?.passed ?? false).toBe(false);
    // Prompt + answer fit the tiny model's context with the shipped tokenizer.
    const tok = fromTokenizerJson(
      JSON.parse(readFileSync('public/checkpoints/tiny/coder/tokenizer.json', 'utf8')),
    );
    for (const e of examples) {
      const prompt = debuggerPrompt(tok, e.statement, e.plan, e.program, e.report);
      expect(prompt.length + tok.encode(e.repair).length + 1).toBeLessThan(PRESETS.tiny.nCtx);
    }
  }, 60_000);
});

describe('topology settings', () => {
  it('refuse bad agent settings with clear words', () => {
    expect(() => resolveGrpoConfig({ agents: 'coder,planner' as never })).toThrow(
      /agents must be one of planner,coder \| planner,coder,debugger/,
    );
    expect(() =>
      resolveGrpoConfig({ agents: 'planner,coder,debugger', repairsPerProgram: 1 }),
    ).toThrow(/repairsPerProgram must be an integer >= 2/);
    expect(() => resolveGrpoConfig({ agents: 'retriever,planner,coder', mode: 'single' })).toThrow(
      /not in single mode/,
    );
    expect(() =>
      resolveGrpoConfig({ agents: 'retriever,planner,coder', retrievalCandidates: 12 }),
    ).toThrow(/at most 9/);
    expect(resolveGrpoConfig().agents).toBe('planner,coder');
  });

  it('travel through links and flags (one settings row each)', () => {
    const config = defaultRunConfig({
      grpo: {
        agents: 'retriever,planner,coder,debugger',
        repairsPerProgram: 3,
        retrievalPolicy: 'bm25',
      },
    });
    const params = encodeRunConfig(config);
    expect(params.get('agents')).toBe('retriever,planner,coder,debugger');
    expect(params.get('d')).toBe('3');
    expect(params.get('retrieval')).toBe('bm25');
    expect(decodeRunConfig(params).config.grpo).toMatchObject({
      agents: 'retriever,planner,coder,debugger',
      repairsPerProgram: 3,
      retrievalPolicy: 'bm25',
    });
    // The default link names no agent setting.
    expect([...encodeRunConfig(defaultRunConfig()).keys()]).toEqual([]);
    const bad = decodeRunConfig(new URLSearchParams('agents=coder,debugger'));
    expect(bad.config.grpo.agents).toBe('planner,coder');
    expect(bad.problems.join(' ')).toMatch(/agents=coder,debugger \(agents must be one of/);
    const flags = new Map([
      ['agents', 'planner,coder,debugger'],
      ['repair-credit', 'repaired'],
      ['candidates', '3'],
    ]);
    expect(runConfigFromFlags(flags, defaultRunConfig()).grpo).toMatchObject({
      agents: 'planner,coder,debugger',
      repairCredit: 'repaired',
      retrievalCandidates: 3,
    });
  });
});
