import { describe, expect, it } from 'vitest';
import { DEFAULT_RUN_CONFIG } from '../../src/engine/runConfig';
import {
  alignTo,
  prepareChart,
  sampleIndices,
  unionSteps,
  valueAt,
} from '../../src/ui/charts/chartData';
import { CHART_SPECS, chartSeries, metricColumn } from '../../src/ui/charts/chartSpecs';
import { runColor } from '../../src/ui/charts/palette';
import { positiveOnly, smoothEma } from '../../src/ui/charts/smoothing';
import type { MetricPoint, RunRecord } from '../../src/ui/state/labStore';

describe('EMA smoothing (TensorBoard, debiased)', () => {
  it('returns the values unchanged at weight 0', () => {
    expect(smoothEma([1, 5, -2, 3], 0)).toEqual([1, 5, -2, 3]);
  });

  it('debiases: the first point is the first value, a constant series stays constant', () => {
    expect(smoothEma([4, 4, 4, 4], 0.9)).toEqual([4, 4, 4, 4].map(() => expect.closeTo(4, 12)));
    expect(smoothEma([7, 0], 0.6)[0]).toBeCloseTo(7, 12);
  });

  it('matches the hand-computed recurrence', () => {
    const w = 0.5;
    // last_1 = 0.5·1 = 0.5 → /0.5 = 1; last_2 = 0.25 + 0.5·3 = 1.75 → /0.75; last_3 = 0.875 + 0 → /0.875
    expect(smoothEma([1, 3, 0], w)).toEqual([
      expect.closeTo(1, 12),
      expect.closeTo(1.75 / 0.75, 12),
      expect.closeTo(0.875 / 0.875, 12),
    ]);
  });

  it('keeps gaps as gaps and does not let them advance the average', () => {
    const smoothed = smoothEma([2, null, Number.NaN, 4], 0.5);
    expect(smoothed[1]).toBeNull();
    expect(smoothed[2]).toBeNull();
    expect(smoothed[3]).toEqual(smoothEma([2, 4], 0.5)[1]);
  });

  it('log scale drops values ≤ 0', () => {
    expect(positiveOnly([1, 0, -3, 2, null])).toEqual([1, null, null, 2, null]);
  });
});

describe('chart data alignment', () => {
  it('joins runs with different steps on the union of their steps', () => {
    const x = unionSteps([
      { label: 'a', color: '#fff', steps: [1, 2, 3], values: [1, 2, 3] },
      { label: 'b', color: '#fff', steps: [2, 4], values: [20, 40] },
    ]);
    expect(Array.from(x)).toEqual([1, 2, 3, 4]);
    expect(alignTo(x, [2, 4], [20, 40])).toEqual([null, 20, null, 40]);
  });

  it('adds upper/lower band columns and counts the points', () => {
    const chart = prepareChart(
      [{ label: 'coder', color: '#60a5fa', steps: [1, 2], values: [0.5, 0.7], spread: [0.1, 0.2] }],
      { smoothing: 0, logScale: false },
    );
    expect(chart.points).toBe(2);
    expect(chart.columns.map((c) => c.kind)).toEqual(['line', 'upper', 'lower']);
    expect(chart.bands).toEqual([[2, 3]]);
    expect(chart.data[2]?.[1]).toBeCloseTo(0.9, 12);
    expect(chart.data[3]?.[1]).toBeCloseTo(0.5, 12);
    expect(valueAt(chart.data, 0, 5)).toBe(0.7);
  });

  it('subsamples long series for drawing but smooths and counts them at full length', () => {
    expect(Array.from(sampleIndices(10, 4))).toEqual([0, 3, 6, 9]);
    const steps = Array.from({ length: 5000 }, (_, i) => i + 1);
    const values = steps.map((s) => Math.sin(s / 50));
    const full = prepareChart([{ label: 'a', color: '#fff', steps, values }], {
      smoothing: 0.9,
      logScale: false,
      maxPoints: 0,
    });
    const drawn = prepareChart([{ label: 'a', color: '#fff', steps, values }], {
      smoothing: 0.9,
      logScale: false,
      maxPoints: 1000,
    });
    expect(full.points).toBe(5000);
    expect(drawn.points).toBe(5000);
    expect(drawn.data[0]).toHaveLength(1000);
    expect(drawn.data[0]?.[0]).toBe(1);
    expect(drawn.data[0]?.[999]).toBe(5000);
    // The last drawn value is the full-length EMA's last value, not an EMA of the sample.
    expect(drawn.data[1]?.[999]).toBe(full.data[1]?.[4999]);
  });
});

describe('chart series from runs', () => {
  it('takes only the steps a metric was logged at, ascending, one colour per run', () => {
    const points: MetricPoint[] = [
      { step: 3, values: { 'coder/reward': 0.3, 'coder/reward_std': 0.1 } },
      { step: 1, values: { 'coder/reward': 0.1 } },
      { step: 2, values: { 'eval/pass@1/L1': 0.5 } },
      { step: 3, values: { 'coder/reward': 0.35, 'coder/reward_std': 0.2 } },
    ];
    expect(metricColumn(points, 'coder/reward', 'coder/reward_std')).toEqual({
      steps: [1, 3],
      values: [0.1, 0.35],
      spread: [0, 0.2],
    });
    const run = (id: string, visible: boolean): RunRecord => ({
      id,
      name: id,
      config: DEFAULT_RUN_CONFIG,
      createdAt: 0,
      visible,
      points,
    });
    const runs = [run('a', true), run('b', false), run('c', true)];
    const spec = CHART_SPECS.find((s) => s.name === 'coder-reward')!;
    const series = chartSeries(spec, runs);
    expect(series.map((s) => s.label)).toEqual(['a reward (mean ± std)', 'c reward (mean ± std)']);
    expect(series.map((s) => s.color)).toEqual([runColor(0), runColor(2)]);
  });
});
