// Which metrics each chart of the panel draws, and how one run's points become its series.
import type { MetricPoint, RunRecord } from '../state/labStore';
import type { ChartSeries } from './chartData';
import { LINE_COLORS, LINE_DASHES, runColor } from './palette';

export interface ChartLine {
  metric: string;
  label: string;
  /** Metric drawn as a band ± around the line (e.g. reward_std). */
  spread?: string;
}

export interface ChartSpec {
  /** data-testid is `chart-<name>`. */
  name: string;
  title: string;
  lines: ChartLine[];
  /** Positive-valued metrics: the log-scale toggle applies to them. */
  logOk?: boolean;
  yRange?: [number, number];
}

const TIERS = ['L1', 'L2', 'L3', 'L4'];

export const CHART_SPECS: ChartSpec[] = [
  {
    name: 'planner-reward',
    title: 'Planner reward (mean ± std)',
    lines: [{ metric: 'planner/reward', label: 'planner', spread: 'planner/reward_std' }],
  },
  {
    name: 'coder-reward',
    title: 'Coder reward (mean ± std)',
    lines: [{ metric: 'coder/reward', label: 'coder', spread: 'coder/reward_std' }],
  },
  {
    name: 'pass-at-1',
    title: 'Eval pass@1 per tier',
    lines: TIERS.map((tier) => ({ metric: `eval/pass@1/${tier}`, label: tier })),
    yRange: [0, 1],
  },
  {
    name: 'kl',
    title: 'KL to reference (k3)',
    lines: roleLines('kl'),
    logOk: true,
  },
  {
    name: 'entropy',
    title: 'Entropy',
    lines: roleLines('entropy'),
    logOk: true,
  },
  {
    name: 'clip-ratio',
    title: 'Clip ratio (region)',
    lines: roleLines('clip_ratio/region_mean'),
  },
  {
    name: 'completion-length',
    title: 'Completion mean length (tokens)',
    lines: roleLines('completions/mean_length'),
    logOk: true,
  },
  {
    name: 'frac-zero-std',
    title: 'Groups with zero reward std',
    lines: roleLines('frac_reward_zero_std'),
    yRange: [0, 1],
  },
  {
    name: 'exec-cost',
    title: 'Eval execution cost (work)',
    lines: [{ metric: 'eval/exec_cost', label: 'exec cost' }],
    logOk: true,
  },
  {
    name: 'step-time',
    title: 'Step time split (s)',
    lines: [
      { metric: 'step_time/rollout', label: 'rollout' },
      { metric: 'step_time/sandbox', label: 'sandbox' },
      { metric: 'step_time/update', label: 'update' },
    ],
    logOk: true,
  },
];

function roleLines(metric: string): ChartLine[] {
  return [
    { metric: `planner/${metric}`, label: 'planner' },
    { metric: `coder/${metric}`, label: 'coder' },
  ];
}

/** The steps and values (and spread) of one metric, only where the run measured it. */
export function metricColumn(
  points: readonly MetricPoint[],
  metric: string,
  spread?: string,
): { steps: number[]; values: number[]; spread?: number[] } {
  const steps: number[] = [];
  const values: number[] = [];
  const spreads: number[] = [];
  for (const point of points) {
    const value = point.values[metric];
    if (value === undefined || !Number.isFinite(value)) continue;
    steps.push(point.step);
    values.push(value);
    if (spread) spreads.push(point.values[spread] ?? 0);
  }
  if (!isAscending(steps)) return sortedByStep(steps, values, spread ? spreads : undefined);
  return spread ? { steps, values, spread: spreads } : { steps, values };
}

function isAscending(steps: readonly number[]): boolean {
  for (let i = 1; i < steps.length; i++)
    if ((steps[i] as number) <= (steps[i - 1] as number)) return false;
  return true;
}

/** Charts need ascending, unique steps; a run whose points arrived out of order is sorted (last
 * value of a repeated step wins). */
function sortedByStep(steps: number[], values: number[], spread?: number[]) {
  const byStep = new Map<number, number>();
  for (let i = 0; i < steps.length; i++) byStep.set(steps[i] as number, i);
  const order = [...byStep.entries()].sort((a, b) => a[0] - b[0]).map(([, i]) => i);
  const pick = (column: number[]) => order.map((i) => column[i] as number);
  return spread
    ? { steps: pick(steps), values: pick(values), spread: pick(spread) }
    : { steps: pick(steps), values: pick(values) };
}

/**
 * One chart's series over the visible runs. With one run, each line has its own colour; with
 * several, the colour says the run and the dash says the line. Lines a run never measured
 * are left out (a frozen Planner draws no planner KL).
 */
export function chartSeries(
  spec: ChartSpec,
  runs: readonly RunRecord[],
  visible: readonly RunRecord[] = runs.filter((run) => run.visible),
): ChartSeries[] {
  const series: ChartSeries[] = [];
  const overlay = visible.length > 1;
  for (const run of visible) {
    const runIndex = runs.indexOf(run);
    spec.lines.forEach((line, l) => {
      const column = metricColumn(run.points, line.metric, line.spread);
      if (column.steps.length === 0) return;
      series.push({
        label: overlay ? `${run.name} ${line.label}` : line.label,
        color: overlay || spec.lines.length === 1 ? runColor(runIndex) : (LINE_COLORS[l] as string),
        dash: overlay ? LINE_DASHES[l % LINE_DASHES.length] : undefined,
        ...column,
      });
    });
  }
  return series;
}
