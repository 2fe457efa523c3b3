import { describe, expect, it } from 'vitest';
import { extractFunction } from '../../src/rl/extractFunction';
import {
  coderRewards,
  DEFAULT_REWARD_WEIGHTS,
  efficiencyScores,
  type ProgramOutcome,
  plannerReward,
  plannerRewards,
  programOutcome,
  taskRewards,
} from '../../src/rl/rewards';
import type { RunResult } from '../../src/sandbox/types';
import { Rng } from '../../src/tasks/random';

const weights = { passFraction: 1, efficiency: 0.25, formatPenalty: 0.5, efficiencySmoothing: 1 };

function outcome(passCount: number, total: number, cost: number | null, formatOk = true) {
  return { formatOk, passCount, total, cost } satisfies ProgramOutcome;
}

describe('coder rewards', () => {
  it('pays the pass fraction, efficiency only when all tests pass, and the format penalty', () => {
    const outcomes = [
      outcome(10, 10, 99), // fastest passing program: eff = (99+1)/(99+1) = 1
      outcome(10, 10, 199), // twice as slow: eff = 100/200 = 0.5
      outcome(7, 10, 1), // fast but wrong: no efficiency, and not the baseline
      outcome(0, 10, null, false), // no extractable function
    ];
    const rewards = coderRewards(outcomes, weights);
    expect(rewards[0]).toEqual({ passFraction: 1, efficiency: 1, formatPenalty: 0, total: 1.25 });
    expect(rewards[1]).toEqual({
      passFraction: 1,
      efficiency: 0.5,
      formatPenalty: 0,
      total: 1.125,
    });
    expect(rewards[2]).toEqual({ passFraction: 0.7, efficiency: 0, formatPenalty: 0, total: 0.7 });
    expect(rewards[3]).toEqual({ passFraction: 0, efficiency: 0, formatPenalty: 0.5, total: -0.5 });
  });

  it('compares with the reference cost when it is lower than every program', () => {
    const scores = efficiencyScores([outcome(3, 3, 399), outcome(3, 3, 799)], 1, 99);
    expect(scores[0]).toBeCloseTo(100 / 400, 12);
    expect(scores[1]).toBeCloseTo(100 / 800, 12);
    // A single passing program with no reference is its own baseline.
    expect(efficiencyScores([outcome(3, 3, 5000), outcome(1, 3, 2)])).toEqual([1, 0]);
  });

  it('totals match the formula on random outcomes', () => {
    const random = new Rng(11);
    const outcomes = Array.from({ length: 16 }, () => {
      const total = 1 + Math.floor(random.next() * 8);
      const passCount = random.next() < 0.5 ? total : Math.floor(random.next() * total);
      return outcome(passCount, total, Math.floor(random.next() * 1000), random.next() < 0.9);
    });
    const rewards = coderRewards(outcomes, weights);
    let baseline = Number.POSITIVE_INFINITY;
    for (const o of outcomes) {
      if (o.formatOk && o.passCount === o.total && o.cost !== null) {
        baseline = Math.min(baseline, o.cost);
      }
    }
    outcomes.forEach((o, i) => {
      const allPass = o.formatOk && o.passCount === o.total;
      const pass = o.formatOk ? o.passCount / o.total : 0;
      const eff = allPass ? Math.min(1, (baseline + 1) / ((o.cost ?? 0) + 1)) : 0;
      const expected = pass + 0.25 * eff - (o.formatOk ? 0 : 0.5);
      expect(rewards[i]?.total).toBeCloseTo(expected, 12);
    });
  });

  it('builds an outcome from a sandbox run', () => {
    const run: RunResult = {
      id: 'a',
      passed: false,
      passCount: 2,
      total: 4,
      errorKind: null,
      tests: [],
      cost: { wallMs: 1, work: 42, peakBytes: 100 },
    };
    expect(programOutcome(run, true)).toEqual(outcome(2, 4, 42));
    expect(programOutcome(null, false)).toEqual(outcome(0, 0, null, false));
  });
});

describe('planner rewards', () => {
  it('is the mean of its programs’ rewards, part by part', () => {
    const coder = coderRewards(
      [outcome(4, 4, 10), outcome(2, 4, 10), outcome(0, 4, null, false), outcome(4, 4, 21)],
      weights,
    );
    const plan = plannerReward(coder);
    const mean = (values: number[]) => values.reduce((a, b) => a + b, 0) / values.length;
    expect(plan.total).toBeCloseTo(mean(coder.map((c) => c.total)), 12);
    expect(plan.passFraction).toBeCloseTo((1 + 0.5 + 0 + 1) / 4, 12);
    expect(plan.efficiency).toBeCloseTo((1 + 0 + 0 + 0.5) / 4, 12);
    expect(plan.formatPenalty).toBeCloseTo(0.5 / 4, 12);
  });

  it('splits plan-major program rewards into plans', () => {
    const coder = coderRewards(
      [outcome(1, 1, 1), outcome(1, 1, 1), outcome(0, 1, 1), outcome(0, 1, 1)],
      DEFAULT_REWARD_WEIGHTS,
    );
    const plans = plannerRewards(coder, 2);
    expect(plans.map((p) => p.total)).toEqual([1.25, 0]);
    expect(() => plannerRewards(coder, 3)).toThrow(/groups of 3/);
  });

  it('taskRewards compares efficiency across plans and averages per plan', () => {
    // Plan 0's programs are slow, plan 1's fast: the fast plan earns more.
    const { coder, planner } = taskRewards(
      [outcome(2, 2, 399), outcome(2, 2, 399), outcome(2, 2, 99), outcome(1, 2, 99)],
      2,
      weights,
    );
    expect(coder.map((c) => c.efficiency)).toEqual([0.25, 0.25, 1, 0]);
    expect(planner.map((p) => p.total)).toEqual([1 + 0.25 * 0.25, (1.25 + 0.5) / 2]);
  });
});

describe('extractFunction', () => {
  it('takes complete function declarations out of prose and fences', () => {
    const completion =
      'Here is the code:\n```js\nfunction helper(x) { return x * 2; }\n' +
      'function solve(xs) {\n  const s = "}{"; // a } in a comment\n  return xs.map((x) => { return helper(x); });\n}\n```\ntrailing';
    const extracted = extractFunction(completion, 'solve');
    expect(extracted.formatOk).toBe(true);
    expect(extracted.functionNames).toEqual(['helper', 'solve']);
    expect(extracted.code).toBe(
      'function helper(x) { return x * 2; }\n' +
        'function solve(xs) {\n  const s = "}{"; // a } in a comment\n  return xs.map((x) => { return helper(x); });\n}',
    );
  });

  it('handles template literals with substitutions', () => {
    // biome-ignore lint/suspicious/noTemplateCurlyInString: the string is JavaScript source.
    const code = 'function f(a) { return `{${a + `}`}`; }';
    expect(extractFunction(`${code} junk {`).code).toBe(code);
  });

  it('reports missing, truncated and misnamed functions', () => {
    expect(extractFunction('return 1;').status).toBe('no_function');
    expect(extractFunction('function f(a) { if (a) { return 1; }').status).toBe('unbalanced');
    const misnamed = extractFunction('function g() { return 1; }', 'f');
    expect(misnamed.status).toBe('missing_entry_point');
    expect(misnamed.formatOk).toBe(false);
  });
});
