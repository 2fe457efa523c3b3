// The explainer on the Debugger's and the Retriever's groups: samples come from the engine's
// own path (assignCredit → sampleGroups → the agents' credit → attachAgentSamples), so each
// repair and each choice carries the advantage the trainer used; the explainer's numbers
// must equal those, under group and batch scaling.
import { describe, expect, it } from 'vitest';
import { assignCredit } from '../../src/agents/credit';
import { type DebuggerStep, debuggerCredit } from '../../src/agents/debugger';
import type { JudgedProgram } from '../../src/agents/judge';
import { type RetrievalStep, retrieverCredit } from '../../src/agents/retriever';
import type { Completion, TaskRollout } from '../../src/agents/rollout';
import { attachAgentSamples, sampleGroups } from '../../src/engine/stepSamples';
import { DEFAULT_GRPO_CONFIG, type GrpoConfig, type ScaleRewards } from '../../src/rl/config';
import type { ProgramOutcome, RewardParts } from '../../src/rl/rewards';
import type { Task } from '../../src/tasks';
import { explainGroup } from '../../src/ui/explainer/explain';

const completion = (text: string): Completion => ({
  prompt: [1],
  tokens: [2, 2],
  logProbs: [-1, -1],
  finished: true,
  text,
});
const task = (t: number): Task => ({
  id: `t${t}`,
  family: 'x',
  tier: 'L2',
  statement: `task ${t}`,
  entryPoint: 'f',
  arity: 1,
  tests: [{ args: [1], expected: 2 }],
  strategies: [],
  efficiencyTests: [],
  steps: [],
});
const ok = (passCount: number): ProgramOutcome => ({
  formatOk: true,
  passCount,
  total: 4,
  cost: 5,
});
const parts = (total: number): RewardParts => ({
  passFraction: total,
  efficiency: 0,
  formatPenalty: 0,
  total,
});

/** Two tasks × 2 plans × 2 programs; programs 1, 2 and 6 failing get D = 3 repairs each. */
function makeStep(scale: ScaleRewards) {
  const outcomes = [
    [ok(4), ok(1), ok(2), ok(4)],
    [ok(4), ok(4), ok(0), ok(3)],
  ];
  const rollouts: TaskRollout[] = outcomes.map((_, t) => ({
    task: task(t),
    plans: [completion('plan a'), completion('plan b')],
    programs: [
      [completion('p'), completion('p')],
      [completion('p'), completion('p')],
    ],
  }));
  const judged: JudgedProgram[] = outcomes
    .flat()
    .map((outcome) => ({ code: 'function f(){}', outcome, run: null }));
  const credit = assignCredit(
    outcomes,
    { plansPerTask: 2, programsPerPlan: 2, withPlans: true },
    DEFAULT_GRPO_CONFIG.rewardWeights,
    scale,
  );
  const targets = [1, 2, 6];
  const repairRewards = [1.25, 0.25, 0.5, 0.5, 0.5, 0.5, 1, 0, 0.75].map(parts);
  const debug: DebuggerStep = {
    targets: targets.map((programIndex) => ({
      programIndex,
      taskIndex: programIndex < 4 ? 0 : 1,
      task: task(programIndex < 4 ? 0 : 1),
      plan: 'plan',
      program: 'function f(){}',
      report: 'f(1) should be 2, got 1',
    })),
    repairs: repairRewards.map(() => completion('function f(x){return 2}')),
    judged: repairRewards.map(() => ({
      code: 'function f(x){return 2}',
      outcome: ok(4),
      run: null,
    })),
    repairRewards,
    credit: debuggerCredit(
      targets.map((i) => credit.coder.rewards[i]!),
      repairRewards,
      3,
      scale,
    ),
    repairsPerProgram: 3,
  };
  const entry = (id: string) => ({ id, statement: `example ${id}`, plan: '1. x', steps: [] });
  const retrieval: RetrievalStep = {
    candidates: [
      [entry('a'), entry('b')],
      [entry('c'), entry('d')],
    ],
    choices: [0, 1, null, 0],
    examples: [entry('a'), entry('b'), entry('c'), entry('c')],
    completions: [completion('1'), completion('2'), completion('x'), completion('1')],
  };
  const rCredit = retrieverCredit(credit.planner!.rewards, retrieval.choices, 2, 0.5, scale);
  const groups = attachAgentSamples(sampleGroups(1, rollouts, judged, credit, 2), {
    retrieval,
    retrieverCredit: rCredit,
    debug,
  });
  return { groups, debug, rCredit };
}

describe('the explainer on the Debugger’s and the Retriever’s groups', () => {
  for (const scale of ['group', 'batch', 'none'] as const) {
    it(`shows the advantages the trainer used (${scale} scaling)`, () => {
      const { groups, debug, rCredit } = makeStep(scale);
      const grpo: GrpoConfig = {
        ...DEFAULT_GRPO_CONFIG,
        scaleRewards: scale,
        agents: 'retriever,planner,coder,debugger',
      };
      // Task 1, plan 1, program 0 = flat program 6: the third repaired program.
      const explanation = explainGroup({
        group: groups[1]!,
        planIndex: 1,
        programIndex: 0,
        grpo,
        stepGroups: groups,
      });
      const debuggerGroup = explanation.debugger!;
      expect(debuggerGroup.trained).toBe(true);
      expect(debuggerGroup.rewards).toEqual(debug.credit.rewards.slice(6, 9).map((r) => r.total));
      debuggerGroup.advantages.forEach((a, i) => {
        expect(a).toBeCloseTo(debug.credit.advantages.advantages[6 + i]!, 10);
        expect(a).toBeCloseTo(debuggerGroup.recorded[i]!, 10);
      });
      const retrieverGroup = explanation.retriever!;
      expect(retrieverGroup.rewards).toEqual(rCredit.rewards.slice(2, 4).map((r) => r.total));
      retrieverGroup.advantages.forEach((a, i) => {
        expect(a).toBeCloseTo(rCredit.advantages.advantages[2 + i]!, 10);
      });
      // The choice that named no candidate pays the format penalty.
      expect(retrieverGroup.parts[0]!.formatPenalty).toBe(0.5);
      // A program the Debugger did not repair has no Debugger group.
      expect(
        explainGroup({ group: groups[0]!, planIndex: 0, programIndex: 0, grpo, stepGroups: groups })
          .debugger,
      ).toBeNull();
    });
  }

  it('the default topology has neither group', () => {
    const { groups } = makeStep('group');
    const plain = groups.map((g) => ({
      ...g,
      plans: g.plans.map(({ retrieval: _r, ...p }) => ({
        ...p,
        programs: p.programs.map(({ repairs: _d, report: _t, ...q }) => q),
      })),
    }));
    const explanation = explainGroup({
      group: plain[0]!,
      planIndex: 0,
      programIndex: 1,
      grpo: DEFAULT_GRPO_CONFIG,
      stepGroups: plain,
    });
    expect(explanation.debugger).toBeNull();
    expect(explanation.retriever).toBeNull();
  });
});
