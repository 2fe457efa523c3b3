// The self-plan baseline (issue 30): one model writes plan, <|code|>, program in one sequence.
// Its format round-trips; its rollouts are one group of M sequences per task whose text is the
// program and whose plan is kept; its evaluation asks the model for its own plan up to <|code|>,
// continues from the Coder's prompt with that plan (the same tokens), writes no program where
// the plan never reached <|code|>, and intervenes on that plan like on a Planner's.
import { describe, expect, it } from 'vitest';
import { evaluateSuites } from '../../src/agents/evaluate';
import { coderPrompt } from '../../src/agents/format';
import { sampleRollouts } from '../../src/agents/rollout';
import {
  selfPlanExample,
  selfPlanPrompt,
  selfPlanTokens,
  splitSelfPlan,
} from '../../src/agents/selfPlan';
import type { SampleOptions, Sampler } from '../../src/rollout/types';
import type { Task } from '../../src/tasks';
import { generateExamplesTask } from '../../src/tasks/examples/generate';
import { CharTokenizer } from '../../src/tokenizer';
import { fakeSandbox } from './sandbox-stand-in';

const tok = new CharTokenizer();
const CODE = tok.special('<|code|>');

/** A sampler that answers each call with scripted tokens per prompt, recording what it was asked. */
function scriptedSampler(answer: (prompt: number[], call: number) => number[]) {
  const calls: { prompts: number[][]; options: SampleOptions }[] = [];
  const sampler: Sampler = {
    async sample(prompts, options) {
      const call = calls.length;
      calls.push({ prompts, options });
      const tokens = prompts.map((p) => answer(p, call));
      return {
        tokens,
        logProbs: tokens.map((t) => t.map(() => -1)),
        finished: tokens.map((t) => t.at(-1) === tok.eosId),
      };
    },
  };
  return { sampler, calls };
}

const tasks: Task[] = [0, 1, 2].map((i) => generateExamplesTask({ split: 'train', seed: 5 }, i));

describe('self-plan mode', () => {
  it('its warm-start example splits back into the plan and the program', () => {
    const [task] = tasks;
    const { plan, code } = task!.strategies[0]!;
    const example = selfPlanExample(tok, { statement: task!.statement, plan, code });
    expect(example.prompt).toEqual(selfPlanPrompt(tok, task!.statement));
    expect(example.answer.filter((t) => t === CODE)).toHaveLength(1);
    expect(splitSelfPlan(tok, example.answer)).toEqual({ plan, program: code });
    // No <|code|>: all plan, no program.
    expect(splitSelfPlan(tok, [...tok.encode('1. sort'), tok.eosId])).toEqual({
      plan: '1. sort',
      program: '',
    });
  });

  it('samples M whole sequences per task: the program is judged, the plan kept', async () => {
    const { sampler, calls } = scriptedSampler((_, call) =>
      call === 0 ? [...tok.encode('1. sum'), CODE, ...tok.encode('f()'), tok.eosId] : [],
    );
    const rollouts = await sampleRollouts(
      tasks,
      { tokenizer: tok, planner: null, coder: sampler },
      {
        plansPerTask: 4,
        programsPerPlan: 3,
        maxPlanTokens: 20,
        maxProgramTokens: 30,
        temperature: 1,
        topK: 0,
        plannerSeed: 1,
        coderSeed: 2,
        selfPlan: true,
      },
    );
    expect(calls).toHaveLength(1);
    expect(calls[0]!.options.maxNewTokens).toBe(selfPlanTokens(20, 30));
    expect(calls[0]!.options.seed).toBe(2);
    expect(calls[0]!.prompts).toEqual(
      tasks.flatMap((t) => Array(3).fill(selfPlanPrompt(tok, t.statement))),
    );
    expect(rollouts.map((r) => r.task.id)).toEqual(tasks.map((t) => t.id));
    for (const rollout of rollouts) {
      expect(rollout.plans).toBeNull();
      expect(rollout.programs).toHaveLength(1);
      expect(rollout.programs[0]!.map((p) => [p.plan, p.text])).toEqual(
        Array(3).fill(['1. sum', 'f()']),
      );
      // The whole sequence is what GRPO updates: plan, marker, program, end.
      expect(rollout.programs[0]![0]!.tokens).toHaveLength(tok.encode('1. sum').length + 5);
    }
  });

  it('refuses a base model’s chat prompts', async () => {
    const { sampler } = scriptedSampler(() => []);
    const prompts = { planner: () => [], coder: () => [], text: () => '', stopId: 0 };
    await expect(
      sampleRollouts(
        tasks,
        { tokenizer: tok, prompts, planner: null, coder: sampler },
        {
          plansPerTask: 1,
          programsPerPlan: 2,
          maxPlanTokens: 4,
          maxProgramTokens: 4,
          temperature: 1,
          topK: 0,
          plannerSeed: 1,
          coderSeed: 2,
          selfPlan: true,
        },
      ),
    ).rejects.toThrow(/self-plan mode needs the lab’s own prompt formats/);
  });

  it('evaluates its own plan, continues from the Coder’s prompt, and intervenes on that plan', async () => {
    // Task 0 plans "1. a" and reaches <|code|>; task 1 plans "1. b" and ends without it;
    // task 2 plans "1. c". Every program is `ok` + the plan's letter.
    const planIds = new Map(
      tasks.map((t, i) => [selfPlanPrompt(tok, t.statement).join(','), i] as const),
    );
    const { sampler, calls } = scriptedSampler((prompt) => {
      const i = planIds.get(prompt.join(','));
      if (i !== undefined) {
        return [...tok.encode(`1. ${'abc'[i]}`), i === 1 ? tok.eosId : CODE];
      }
      const text = tok.decode(prompt, { skipSpecial: false });
      const letter = /<\|plan\|>1\. (\w)<\|code\|>$/.exec(text)?.[1] ?? 'none';
      return [...tok.encode(`ok${letter}`), tok.eosId];
    });
    const sandbox = fakeSandbox(
      (_call, _i, job) => job.kind === 'cases' && ['oka', 'okb', 'okc'].includes(job.code),
    );
    const result = await evaluateSuites(
      { tokenizer: tok, planner: null, coder: sampler, selfPlan: true },
      { examples: tasks },
      { maxPlanTokens: 8, maxProgramTokens: 8, interventions: true },
      sandbox,
    );
    // The plan call: the Planner's prompt, stopping at <|code|> or the end.
    expect(calls[0]!.prompts).toEqual(tasks.map((t) => selfPlanPrompt(tok, t.statement)));
    expect(calls[0]!.options.stopIds).toEqual([CODE, tok.eosId]);
    // The program call: exactly the Coder's prompt with the model's own plan.
    expect(calls[1]!.prompts[0]).toEqual(coderPrompt(tok, tasks[0]!.statement, '1. a'));
    const report = result.suites.examples!;
    expect(report.examples.map((e) => [e.plan, e.code])).toEqual([
      ['1. a', 'oka'],
      ['1. b', ''],
      ['1. c', 'okc'],
    ]);
    expect(report.overall['pass@1']).toBeCloseTo(2 / 3);
    // Another task's plan still gives a passing program here (b's, c's, a's: okb, okc, oka).
    expect(report.overall['pass@1_swapped_plan']).toBe(1);
    expect(report.overall['pass@1_no_plan']).toBe(0);
    expect(result.metrics['eval/collaboration_gain']).toBeCloseTo(2 / 3 - 1);
    expect(result.metrics['eval/plan_vs_none']).toBeCloseTo(2 / 3);
  });
});
