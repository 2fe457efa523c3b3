// The teaching charts' pure parts: the reward spreads derived from a step's groups, axes that
// fit their data, "constant" captions, the learning chart's baseline, and the activity event.
import { describe, expect, it } from 'vitest';
import type { PlanSample, SampleGroup } from '../../src/engine/api';
import { DEFAULT_RUN_CONFIG } from '../../src/engine/api';
import { applyEngineEvent } from '../../src/ui/bridge/applyEvent';
import { constantCaption, fitRange, prepareChart, stepRange } from '../../src/ui/charts/chartData';
import { baselineNote, baselineOf, CHART_SPECS, chartSeries } from '../../src/ui/charts/chartSpecs';
import { yTickLabels } from '../../src/ui/charts/LineChart';
import {
  PLAN_SPREAD_METRIC,
  PROGRAM_SPREAD_METRIC,
  rewardSpreads,
} from '../../src/ui/charts/rewardSpread';
import { type RunRecord, useLabStore } from '../../src/ui/state/labStore';

const parts = (total: number) => ({ passFraction: total, efficiency: 0, formatPenalty: 0, total });

function plan(programRewards: number[]): PlanSample {
  const mean = programRewards.reduce((a, b) => a + b, 0) / programRewards.length;
  return {
    plan: 'p',
    reward: parts(mean),
    advantage: 0,
    tokens: 1,
    programs: programRewards.map((r) => ({
      completion: '',
      code: '',
      reward: parts(r),
      advantage: 0,
      passCount: 0,
      total: 1,
      errorKind: null,
      work: null,
      peakBytes: null,
      tokens: 1,
    })),
  };
}

function group(plans: PlanSample[]): SampleGroup {
  return {
    step: 1,
    taskId: 't',
    tier: 'L1',
    family: 'f',
    statement: '',
    entryPoint: 'f',
    tests: [],
    reference: [],
    plans,
  };
}

describe('reward spreads', () => {
  it('best − worst plan per task and best − worst program per plan, averaged', () => {
    const groups = [
      group([plan([1, 0]), plan([0, 0])]), // plans 0.5 vs 0 → 0.5; programs 1 and 0
      group([plan([1, 1]), plan([1, 0.5])]), // plans 1 vs 0.75 → 0.25; programs 0 and 0.5
    ];
    const spreads = rewardSpreads(groups);
    expect(spreads[PLAN_SPREAD_METRIC]).toBeCloseTo(0.375);
    expect(spreads[PROGRAM_SPREAD_METRIC]).toBeCloseTo((1 + 0 + 0 + 0.5) / 4);
  });

  it('leaves a spread out where no group has two members (single mode, one plan)', () => {
    expect(rewardSpreads([group([plan([1, 0])])])).toEqual({ [PROGRAM_SPREAD_METRIC]: 1 });
    expect(rewardSpreads([])).toEqual({});
  });

  it('go into the step’s point', () => {
    const run: RunRecord = {
      id: 'a',
      name: 'a',
      config: DEFAULT_RUN_CONFIG,
      createdAt: 0,
      visible: true,
      points: [],
    };
    const state = { ...useLabStore.getState(), runs: [run], activeRunId: 'a' };
    const { patch } = applyEngineEvent(state, {
      type: 'step',
      runId: 'a',
      report: {
        step: 1,
        metrics: { x: 1 },
        groups: [group([plan([1, 0]), plan([0, 0])])],
        skippedUpdates: [],
      },
    });
    expect(patch.runs?.[0]?.points[0]?.values).toEqual({
      x: 1,
      [PLAN_SPREAD_METRIC]: 0.5,
      [PROGRAM_SPREAD_METRIC]: 0.5,
    });
  });
});

describe('axes', () => {
  it('fit the data; a flat series gets a small range, not 0–100', () => {
    expect(fitRange(0, 0)).toEqual([0, 1]);
    const [lo, hi] = fitRange(1, 1);
    expect(lo).toBeCloseTo(0.9);
    expect(hi).toBeCloseTo(1.1);
    expect(fitRange(0.2, 0.4)).toEqual([0.19, 0.41000000000000003]);
    expect(fitRange(0.2, 0.4, [0, 1])).toEqual([0, 1]);
    expect(fitRange(-0.5, 1.25, [0, 1])).toEqual([-0.5, 1.25]);
    expect(fitRange(null, null)).toEqual([0, 1]);
  });

  it('one step gets a step either side', () => {
    expect(stepRange(3, 3)).toEqual([2, 4]);
    expect(stepRange(0, 0)).toEqual([0, 1]);
    // Tick labels keep the decimals their spacing needs: ticks 1e-5 apart never all read 0.
    expect(yTickLabels([0, 0.25, 0.5, 0.75, 1])).toEqual(['0.00', '0.25', '0.50', '0.75', '1.00']);
    expect(yTickLabels([0, 0.2, 0.4])).toEqual(['0.0', '0.2', '0.4']);
    expect(yTickLabels([0, 10, 20])).toEqual(['0', '10', '20']);
    expect(yTickLabels([0, 0.00001, 0.00002])).toEqual(['0', '1.0e-5', '2.0e-5']);
    expect(yTickLabels([null, null])).toEqual(['', '']);
    expect(stepRange(1, 9)).toEqual([1, 9]);
  });
});

describe('constant captions', () => {
  const flat = (label: string, value: number) => ({
    label,
    color: '#fff',
    steps: [1, 2, 3],
    values: [value, value, value],
  });
  const prepared = (series: Parameters<typeof prepareChart>[0]) =>
    prepareChart(series, { smoothing: 0.6, logScale: false });
  const short = (v: number) => String(Number(v.toPrecision(3)));

  it('says so when every line is one value', () => {
    expect(constantCaption(prepared([flat('planner', 0), flat('coder', 0)]), short)).toBe(
      'constant: 0',
    );
    expect(constantCaption(prepared([flat('planner', 0), flat('coder', 1)]), short)).toBe(
      'constant: planner 0 · coder 1',
    );
  });

  it('not for a moving line, a single point, or a baseline', () => {
    const moving = { label: 'x', color: '#fff', steps: [1, 2], values: [0, 1] };
    expect(constantCaption(prepared([moving]), short)).toBeNull();
    const one = { label: 'x', color: '#fff', steps: [1], values: [0.5] };
    expect(constantCaption(prepared([one]), short)).toBeNull();
    expect(
      constantCaption(prepared([moving, { ...flat('b', 1), reference: true }]), short),
    ).toBeNull();
  });
});

describe('the learning chart', () => {
  const spec = CHART_SPECS[0]!;
  const run = (points: RunRecord['points']): RunRecord => ({
    id: 'a',
    name: 'a',
    config: DEFAULT_RUN_CONFIG,
    createdAt: 0,
    visible: true,
    points,
  });

  it('comes first, with the sampled pass fraction and the evaluation', () => {
    expect(spec.name).toBe('learning');
    expect(spec.lines.map((l) => l.metric)).toEqual([
      'coder/rewards/pass_fraction/mean',
      'eval/pass@1',
    ]);
  });

  it('draws the step-0 evaluation as the baseline, else the first, and says which', () => {
    const warm = run([
      { step: 0, values: { 'eval/pass@1': 0.3 } },
      { step: 1, values: { 'coder/rewards/pass_fraction/mean': 0.4 } },
      { step: 2, values: { 'coder/rewards/pass_fraction/mean': 0.5, 'eval/pass@1': 0.35 } },
    ]);
    expect(baselineOf(warm.points, 'eval/pass@1')).toEqual({
      value: 0.3,
      step: 0,
      warmStart: true,
    });
    const series = chartSeries(spec, [warm]);
    const baseline = series.find((s) => s.reference);
    expect(baseline?.steps).toEqual([0, 2]);
    expect(baseline?.values).toEqual([0.3, 0.3]);
    expect(baselineNote(spec, [warm])).toContain('step-0 evaluation');

    const later = run([
      { step: 1, values: { 'coder/rewards/pass_fraction/mean': 0.4 } },
      { step: 2, values: { 'eval/pass@1': 0.35 } },
    ]);
    expect(baselineOf(later.points, 'eval/pass@1')?.warmStart).toBe(false);
    expect(baselineNote(spec, [later])).toContain('first evaluation’s level (step 2)');
    expect(baselineNote(spec, [run([])])).toContain('appears with the first evaluation');
  });
});

describe('the activity event', () => {
  it('is kept while a step runs and cleared when the engine goes idle', () => {
    const state = useLabStore.getState();
    expect(applyEngineEvent(state, { type: 'activity', activity: 'the evaluation' }).patch).toEqual(
      {
        activity: 'the evaluation',
      },
    );
    expect(applyEngineEvent(state, { type: 'activity', activity: 'idle' }).patch).toEqual({
      activity: null,
    });
    const idle = applyEngineEvent(state, { type: 'status', status: 'idle', runId: 'a', step: 2 });
    expect(idle.patch.activity).toBeNull();
  });
});
