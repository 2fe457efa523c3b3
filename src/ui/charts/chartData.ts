// Turns per-run series (each with its own steps) into uPlot's aligned columns: one shared x
// (the union of steps), one column per line, and two more per band (mean ± std). Pure, so
// the smoothing/log-scale/alignment rules are testable without a canvas.
import type uPlot from 'uplot';
import { positiveOnly, smoothEma } from './smoothing';

export interface ChartSeries {
  label: string;
  /** A canvas colour (CSS variables do not reach the canvas). */
  color: string;
  /** Ascending steps at which this series has a value. */
  steps: ArrayLike<number>;
  values: ArrayLike<number | null>;
  /** Optional spread per point (e.g. reward_std): drawn as a band mean ± spread. */
  spread?: ArrayLike<number | null>;
  dash?: number[];
}

export type ColumnKind = 'line' | 'upper' | 'lower';

export interface ChartColumn {
  label: string;
  color: string;
  kind: ColumnKind;
  dash?: number[];
  /** Index of the ChartSeries this column belongs to. */
  owner: number;
}

export interface PreparedChart {
  data: uPlot.AlignedData;
  columns: ChartColumn[];
  /** [upper column, lower column] pairs, 1-based as uPlot counts series (x is 0). */
  bands: [number, number][];
  /** How many steps the chart holds (length of x). */
  points: number;
}

export interface PrepareOptions {
  smoothing: number;
  logScale: boolean;
}

/** The union of all series' steps, ascending; reuses the array when every series shares it. */
export function unionSteps(series: readonly ChartSeries[]): ArrayLike<number> {
  const first = series[0]?.steps;
  if (!first) return [];
  if (series.every((s) => s.steps === first)) return first;
  const all = new Set<number>();
  for (const s of series) for (let i = 0; i < s.steps.length; i++) all.add(s.steps[i] as number);
  return Float64Array.from(all).sort();
}

/** `values` placed at their steps on the shared x (null where the series has no value). */
export function alignTo(
  x: ArrayLike<number>,
  steps: ArrayLike<number>,
  values: ArrayLike<number | null>,
): (number | null)[] {
  if (steps === x) return Array.from(values);
  const out = new Array<number | null>(x.length).fill(null);
  // Both ascending: one merge pass instead of a map lookup per point.
  let j = 0;
  for (let i = 0; i < steps.length; i++) {
    const step = steps[i] as number;
    while (j < x.length && (x[j] as number) < step) j++;
    if (j < x.length && x[j] === step) out[j] = values[i] ?? null;
  }
  return out;
}

export function prepareChart(
  series: readonly ChartSeries[],
  { smoothing, logScale }: PrepareOptions,
): PreparedChart {
  const x = unionSteps(series);
  const columns: ChartColumn[] = [];
  const ys: (number | null)[][] = [];
  const bands: [number, number][] = [];
  const shown = (values: (number | null)[]) => (logScale ? positiveOnly(values) : values);
  series.forEach((s, owner) => {
    const mean = smoothEma(alignTo(x, s.steps, s.values), smoothing);
    columns.push({ label: s.label, color: s.color, kind: 'line', dash: s.dash, owner });
    ys.push(shown(mean));
    if (!s.spread) return;
    const spread = smoothEma(alignTo(x, s.steps, s.spread), smoothing);
    const upper = mean.map((m, i) => (m === null ? null : m + (spread[i] ?? 0)));
    const lower = mean.map((m, i) => (m === null ? null : m - (spread[i] ?? 0)));
    columns.push({ label: `${s.label} +std`, color: s.color, kind: 'upper', owner });
    ys.push(shown(upper));
    columns.push({ label: `${s.label} −std`, color: s.color, kind: 'lower', owner });
    ys.push(shown(lower));
    bands.push([ys.length - 1, ys.length]);
  });
  return { data: [x as number[], ...ys] as uPlot.AlignedData, columns, bands, points: x.length };
}

/** The value of column `c` (0-based) nearest at or before index `idx`, for the hover readout. */
export function valueAt(data: uPlot.AlignedData, c: number, idx: number): number | null {
  const column = data[c + 1];
  if (!column) return null;
  for (let i = Math.min(idx, column.length - 1); i >= 0; i--) {
    const value = column[i];
    if (value !== null && value !== undefined) return value;
  }
  return null;
}
