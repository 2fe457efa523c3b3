// Which metrics each chart of the panel draws, and how one run's points become its series.
import type { MetricPoint, RunRecord } from '../state/labStore';
import type { ChartSeries } from './chartData';
import { LINE_COLORS, LINE_DASHES, runColor } from './palette';
import { PLAN_SPREAD_METRIC, PROGRAM_SPREAD_METRIC } from './rewardSpread';

export interface ChartLine {
  metric: string;
  label: string;
  /** Metric drawn as a band ± around the line (e.g. reward_std). */
  spread?: string;
  /** Drawn as measured, never smoothed (an evaluation averages many tasks already). */
  raw?: boolean;
  /** Dots at the measured points (sparse series such as evaluations). */
  points?: boolean;
}

export interface ChartSpec {
  /** data-testid is `chart-<name>`. */
  name: string;
  title: string;
  /** What the chart's quantity is, shown under its title. */
  caption?: string;
  lines: ChartLine[];
  /** Positive-valued metrics: the log-scale toggle applies to them. */
  logOk?: boolean;
  yRange?: [number, number];
  /** A dashed level line at this metric's step-0 value (else its first value). */
  baseline?: string;
  /** Drawn only when a visible run has this metric (an agent's chart, for its topologies). */
  onlyWith?: string;
}

const TIERS = ['L1', 'L2', 'L3', 'L4', 'L5'];

/** The learning chart's metrics (names as rl/metrics.ts writes them). */
export const SAMPLED_PASS_METRIC = 'coder/rewards/pass_fraction/mean';
export const EVAL_PASS_METRIC = 'eval/pass@1';
/** The Collaboration Gain (agents/evaluate.ts): pass@1 from the Planner's plan − from another task's. */
export const COLLABORATION_GAIN_METRIC = 'eval/collaboration_gain';

export const CHART_SPECS: ChartSpec[] = [
  {
    name: 'learning',
    title: 'Is it learning?',
    caption:
      'Solid: the share of tests the step’s sampled programs passed. Dots: greedy pass@1 on the fixed evaluation suites (every “Evaluate every” steps). Both should rise above the dashed baseline.',
    lines: [
      { metric: SAMPLED_PASS_METRIC, label: 'sampled programs: tests passed' },
      { metric: EVAL_PASS_METRIC, label: 'eval pass@1', raw: true, points: true },
    ],
    baseline: EVAL_PASS_METRIC,
    yRange: [0, 1],
  },
  {
    name: 'collaboration',
    title: 'Does the Planner help?',
    caption:
      'The same Coder, greedy, on the same evaluation tasks, four times: from the Planner’s plan; from another task’s plan (the next task of the suite: swapped); from the task’s reference plan; from no plan at all. The Collaboration Gain is the first minus the swapped one: how much the Coder uses what this task’s plan says (0: any plan does as well). Reference minus the Planner’s plan is what a better Planner would still add; the Planner’s plan minus no plan compares a plan with none (the Coder was trained with some empty plans, plan dropout, so no plan is a prompt it knows). In self-plan mode there is one model: the plan is its own, written before the program, and the interventions replace it.',
    lines: [
      {
        metric: EVAL_PASS_METRIC,
        label: 'pass@1 from the Planner’s plan',
        raw: true,
        points: true,
      },
      {
        metric: 'eval/pass@1_swapped_plan',
        label: 'from another task’s plan',
        raw: true,
        points: true,
      },
      {
        metric: 'eval/pass@1_reference_plan',
        label: 'from the reference plan',
        raw: true,
        points: true,
      },
      { metric: 'eval/pass@1_no_plan', label: 'from no plan', raw: true, points: true },
    ],
    yRange: [0, 1],
    onlyWith: COLLABORATION_GAIN_METRIC,
  },
  {
    name: 'planner-reward',
    title: 'Planner: best − worst plan of a task',
    caption:
      'A plan’s reward is the mean reward of the M programs written from it, so the Planner’s mean reward equals the Coder’s. What the Planner learns from is how far apart one task’s N plans score: best − worst plan, averaged over the step’s tasks (0: every plan did equally well, no signal).',
    lines: [{ metric: PLAN_SPREAD_METRIC, label: 'best − worst plan' }],
  },
  {
    name: 'coder-reward',
    title: 'Coder reward, and best − worst program of a plan',
    caption:
      'A program’s reward: pass weight × the fraction of tests passed, + λ × efficiency once every test passes, − the format penalty when no function could be extracted. The Coder learns from the spread among the M programs of one plan.',
    lines: [
      { metric: 'coder/reward', label: 'reward (mean ± std)', spread: 'coder/reward_std' },
      { metric: PROGRAM_SPREAD_METRIC, label: 'best − worst program' },
    ],
  },
  {
    name: 'debugger',
    title: 'Debugger: improvement per repair, programs fixed',
    caption:
      'A repair’s reward is its own reward minus the failing program’s: what it fixes. Fixed: the share of the step’s repaired programs that one of their D repairs made pass every test. Dots: evaluation pass@1 without and with one greedy repair round.',
    lines: [
      {
        metric: 'debugger/reward',
        label: 'improvement (mean ± std)',
        spread: 'debugger/reward_std',
      },
      { metric: 'debugger/fixed', label: 'fixed' },
      { metric: 'eval/pass@1', label: 'eval pass@1', raw: true, points: true },
      { metric: 'eval/pass@1_repair', label: 'eval pass@1 + repair', raw: true, points: true },
    ],
    onlyWith: 'debugger/reward',
  },
  {
    name: 'retriever',
    title: 'Retriever: reward of its choices',
    caption:
      'A choice’s reward is the mean Coder reward of the plan written with the example it picked (minus the format penalty when its answer named no candidate). Top-1: the share of its choices that were BM25’s best match.',
    lines: [
      {
        metric: 'retriever/reward',
        label: 'reward (mean ± std)',
        spread: 'retriever/reward_std',
      },
      { metric: 'retriever/choice_top1', label: 'chose BM25 top-1' },
      { metric: 'retriever/choice_valid', label: 'named a candidate' },
    ],
    onlyWith: 'retriever/reward',
  },
  {
    name: 'pass-at-1',
    title: 'Eval pass@1 per tier',
    caption: 'Greedy pass@1 per tier of the fixed evaluation suites.',
    lines: TIERS.map((tier) => ({
      metric: `eval/pass@1/${tier}`,
      label: tier,
      raw: true,
      points: true,
    })),
    yRange: [0, 1],
  },
  {
    name: 'kl',
    title: 'KL to reference (k3)',
    caption:
      'How far each policy has moved from the frozen warm start, per token: the k3 estimator r − log r − 1 with r = π_ref / π (never negative, unbiased). β weighs it in the loss. At β = 0 (the default) no reference model runs and this chart stays empty: set β > 0 to see it.',
    lines: roleLines('kl'),
    logOk: true,
  },
  {
    name: 'entropy',
    title: 'Entropy',
    caption:
      'Mean per-token entropy of the sampling distribution (nats): falling means the policy is more certain.',
    lines: roleLines('entropy'),
    logOk: true,
  },
  {
    name: 'clip-ratio',
    title: 'Clip ratio (region)',
    caption:
      'Share of tokens whose ratio π / π_old left [1 − ε low, 1 + ε high] where the clip took effect. With one gradient step per batch the ratio is 1, so this stays 0.',
    lines: roleLines('clip_ratio/region_mean'),
  },
  {
    name: 'completion-length',
    title: 'Completion mean length (tokens)',
    caption: 'Mean tokens per sampled plan and per program.',
    lines: roleLines('completions/mean_length'),
    logOk: true,
  },
  {
    name: 'frac-zero-std',
    title: 'Groups with zero reward std',
    caption:
      'Share of groups whose members all scored the same: their advantages Â are all 0, so they teach nothing this step.',
    lines: roleLines('frac_reward_zero_std'),
    yRange: [0, 1],
  },
  {
    name: 'exec-cost',
    title: 'Eval execution cost (work)',
    caption:
      'Mean QuickJS work count of the evaluation’s passing programs (deterministic: lower is faster).',
    lines: [{ metric: 'eval/exec_cost', label: 'exec cost', raw: true, points: true }],
    logOk: true,
  },
  {
    name: 'step-time',
    title: 'Step time split (s)',
    caption: 'Seconds of each step spent sampling, in the sandbox, and in the updates.',
    lines: [
      { metric: 'step_time/rollout', label: 'rollout' },
      { metric: 'step_time/sandbox', label: 'sandbox' },
      { metric: 'step_time/update', label: 'update' },
    ],
    logOk: true,
  },
];

/** One line per agent; the Debugger's and the Retriever's appear only in runs that have them. */
function roleLines(metric: string): ChartLine[] {
  return [
    { metric: `planner/${metric}`, label: 'planner' },
    { metric: `coder/${metric}`, label: 'coder' },
    { metric: `debugger/${metric}`, label: 'debugger' },
    { metric: `retriever/${metric}`, label: 'retriever' },
  ];
}

/** Whether the panel draws the chart: always, or for an agent's chart when a visible run has its metric. */
export function chartShown(spec: ChartSpec, visible: readonly RunRecord[]): boolean {
  const metric = spec.onlyWith;
  return !metric || visible.some((run) => run.points.some((p) => p.values[metric] !== undefined));
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
        ...(line.raw ? { raw: true } : {}),
        ...(line.points ? { points: true } : {}),
        ...column,
      });
    });
    const level = spec.baseline ? baselineOf(run.points, spec.baseline) : null;
    if (level) {
      const steps = run.points.map((p) => p.step);
      const first = Math.min(level.step, ...steps);
      const last = Math.max(level.step, ...steps);
      series.push({
        label: overlay ? `${run.name} baseline` : 'baseline',
        color: overlay ? runColor(runIndex) : BASELINE_COLOR,
        dash: [3, 4],
        raw: true,
        reference: true,
        steps: first === last ? [first] : [first, last],
        values: first === last ? [level.value] : [level.value, level.value],
      });
    }
  }
  return series;
}

const BASELINE_COLOR = '#9ca3af';

/** A chart's baseline: the metric at step 0 (the warm start's level) or, without one, its first value. */
export interface Baseline {
  value: number;
  step: number;
  /** true: measured at step 0, on the warm start itself. */
  warmStart: boolean;
}

export function baselineOf(points: readonly MetricPoint[], metric: string): Baseline | null {
  const column = metricColumn(points, metric);
  const step = column.steps[0];
  const value = column.values[0];
  if (step === undefined || value === undefined) return null;
  return { value, step, warmStart: step === 0 };
}

/** The caption's sentence on where the baseline comes from, over the visible runs. */
export function baselineNote(spec: ChartSpec, visible: readonly RunRecord[]): string | null {
  if (!spec.baseline) return null;
  const metric = spec.baseline;
  const levels = visible.map((run) => baselineOf(run.points, metric));
  const known = levels.filter((level): level is Baseline => level !== null);
  if (known.length === 0) return 'The dashed baseline appears with the first evaluation.';
  if (known.every((level) => level.warmStart))
    return 'Dashed: the warm start’s level (the step-0 evaluation).';
  const first = known.find((level) => !level.warmStart) as Baseline;
  return `Dashed: the first evaluation’s level (step ${first.step}), since this run has no step-0 evaluation of the warm start.`;
}
