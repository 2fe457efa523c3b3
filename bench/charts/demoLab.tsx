// chart-bench.html?demo=lab: the charts panel, runs table and explainer on synthetic runs
// and one synthetic step of groups, without the engine. For page tests and for looking at
// the components in isolation.

import type { PlanSample, RunConfig, SampleGroup } from '../../src/engine/api';
import {
  coderRewards,
  DEFAULT_RUN_CONFIG,
  groupAdvantages,
  plannerRewards,
} from '../../src/engine/api';
import { ChartsPanel } from '../../src/ui/charts/ChartsPanel';
import { Explainer } from '../../src/ui/explainer/Explainer';
import { RunsTable } from '../../src/ui/runs/RunsTable';
import { type MetricPoint, type RunRecord, useLabStore } from '../../src/ui/state/labStore';

function demoPoints(steps: number, seed: number, speed: number): MetricPoint[] {
  let state = seed;
  const noise = () => {
    state = (state * 1664525 + 1013904223) >>> 0;
    return state / 2 ** 32 - 0.5;
  };
  return Array.from({ length: steps }, (_, i) => {
    const step = i + 1;
    const progress = 1 - Math.exp((-speed * step) / steps);
    const values: Record<string, number> = {
      'planner/reward': 0.2 + 0.5 * progress + 0.1 * noise(),
      'planner/reward_std': 0.15 + 0.05 * noise(),
      'coder/reward': 0.25 + 0.55 * progress + 0.1 * noise(),
      'coder/reward_std': 0.2 + 0.05 * noise(),
      'planner/frac_reward_zero_std': 0.3 - 0.2 * progress,
      'coder/frac_reward_zero_std': 0.4 - 0.2 * progress,
      'planner/kl': 0.001 + 0.02 * progress,
      'coder/kl': 0.002 + 0.03 * progress,
      'planner/entropy': 2 - progress,
      'coder/entropy': 2.5 - progress,
      'planner/clip_ratio/region_mean': 0,
      'coder/clip_ratio/region_mean': 0.01 * (1 + noise()),
      'planner/completions/mean_length': 40 - 10 * progress,
      'coder/completions/mean_length': 80 - 20 * progress,
      step_time: 2,
      'step_time/rollout': 1.2 + 0.1 * noise(),
      'step_time/sandbox': 0.3 + 0.05 * noise(),
      'step_time/update': 0.5 + 0.05 * noise(),
    };
    if (step % 10 === 0) {
      ['L1', 'L2', 'L3', 'L4'].forEach((tier, t) => {
        values[`eval/pass@1/${tier}`] = Math.min(1, progress * (1 - 0.2 * t));
      });
      values['eval/exec_cost'] = 500 * (1 - 0.6 * progress);
    }
    return { step, values };
  });
}

/** One task's group: 4 plans × 4 programs, rewards from the rl reward functions. */
export function demoGroup(step: number, config: RunConfig): SampleGroup {
  const passCounts = [4, 4, 2, 0, 3, 4, 4, 1, 0, 0, 2, 4, 4, 4, 4, 4];
  const outcomes = passCounts.map((passCount, i) => ({
    formatOk: i !== 8,
    passCount,
    total: 4,
    cost: 10 + ((i * 7) % 5) * 10,
  }));
  const rewards = coderRewards(outcomes, config.grpo.rewardWeights);
  const M = 4;
  const coderAdv = groupAdvantages(
    rewards.map((r) => r.total),
    [0, 1, 2, 3].map((p) => [0, 1, 2, 3].map((m) => p * M + m)),
  ).advantages;
  const planParts = plannerRewards(rewards, M);
  const planAdv = groupAdvantages(
    planParts.map((r) => r.total),
    [[0, 1, 2, 3]],
  ).advantages;
  const plans: PlanSample[] = planParts.map((reward, p) => ({
    plan: `1. Keep the items seen in a Set.\n2. Return them in order. (plan ${p + 1})`,
    reward,
    advantage: planAdv[p] ?? 0,
    tokens: 24,
    programs: [0, 1, 2, 3].map((m) => {
      const i = p * M + m;
      const outcome = outcomes[i]!;
      return {
        completion: 'function dedupe(xs) { return [...new Set(xs)]; }',
        code: outcome.formatOk ? 'function dedupe(xs) { return [...new Set(xs)]; }' : '',
        reward: rewards[i]!,
        advantage: coderAdv[i] ?? 0,
        passCount: outcome.passCount,
        total: outcome.total,
        errorKind: null,
        work: outcome.cost,
        peakBytes: 1024,
        tokens: 30,
      };
    }),
  }));
  return {
    step,
    taskId: 'demo-dedupe',
    tier: 'L4',
    family: 'dedupe',
    statement: 'Return the list without duplicates, keeping first occurrences in order.',
    entryPoint: 'dedupe',
    tests: [],
    reference: [],
    plans,
  };
}

export function seedDemoLab(steps: number): void {
  // Two runs that differ in β only (the default is 0), so the runs table has one column.
  const base: RunConfig = {
    ...DEFAULT_RUN_CONFIG,
    grpo: { ...DEFAULT_RUN_CONFIG.grpo, beta: 0.04 },
  };
  const noKl: RunConfig = { ...base, grpo: { ...base.grpo, beta: 0 } };
  const runs: RunRecord[] = [
    {
      id: 'a',
      name: 'core β=0.04',
      config: base,
      createdAt: 1,
      visible: true,
      points: demoPoints(steps, 1, 3),
    },
    {
      id: 'b',
      name: 'core β=0',
      config: noKl,
      createdAt: 2,
      visible: true,
      points: demoPoints(steps, 2, 4),
    },
  ];
  useLabStore.setState({
    runs,
    activeRunId: 'a',
    groups: [{ step: steps, groups: [demoGroup(steps, base)] }],
    selection: { step: steps, groupIndex: 0, planIndex: 1, programIndex: 2 },
  });
}

export function DemoLab() {
  return (
    <div style={{ display: 'grid', gap: 16 }}>
      <RunsTable />
      <ChartsPanel />
      <Explainer />
    </div>
  );
}
