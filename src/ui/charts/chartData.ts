// Turns per-run series (each with its own steps) into uPlot's aligned columns: one shared x
// (the union of steps), one column per line, and two more per band (mean ± std). Pure, so
// the smoothing/log-scale/alignment rules are testable without a canvas.
import type uPlot from 'uplot';
import { smoothEmaFloat } from './smoothing';

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
  /** How many steps the chart holds (length of the full x, before subsampling). */
  points: number;
}

export interface PrepareOptions {
  smoothing: number;
  logScale: boolean;
  /**
   * Most points handed to uPlot (0 = all). Longer series are smoothed at full length, then
   * evenly subsampled, first and last point kept (TensorBoard also draws a sample): a chart a
   * few hundred pixels wide cannot show 10k points, and drawing them costs frames.
   */
  maxPoints?: number;
}

export const DEFAULT_MAX_POINTS = 2000;

/** Evenly spaced indices 0 … n−1 (both ends included), `count` of them. */
export function sampleIndices(n: number, count: number): Uint32Array {
  const indices = new Uint32Array(count);
  for (let k = 0; k < count; k++) indices[k] = Math.round((k * (n - 1)) / (count - 1));
  return indices;
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
): ArrayLike<number | null> {
  if (steps === x) return values;
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
  { smoothing, logScale, maxPoints = DEFAULT_MAX_POINTS }: PrepareOptions,
): PreparedChart {
  const x = unionSteps(series);
  const keep = maxPoints >= 2 && x.length > maxPoints ? sampleIndices(x.length, maxPoints) : null;
  const size = keep ? keep.length : x.length;
  const at = keep ? (k: number) => keep[k] as number : (k: number) => k;
  // Full-length float columns (NaN = gap) → the drawn points, null for gaps and, on a log
  // axis, for values ≤ 0.
  const emit = (full: Float64Array, offset?: Float64Array, sign = 0) => {
    const out = new Array<number | null>(size);
    for (let k = 0; k < size; k++) {
      const i = at(k);
      let value = full[i] as number;
      if (offset) {
        const spread = offset[i] as number;
        if (!Number.isNaN(spread)) value += sign * spread;
      }
      out[k] = Number.isNaN(value) || (logScale && !(value > 0)) ? null : value;
    }
    return out;
  };
  const columns: ChartColumn[] = [];
  const ys: (number | null)[][] = [];
  const bands: [number, number][] = [];
  series.forEach((s, owner) => {
    const mean = smoothEmaFloat(alignTo(x, s.steps, s.values), smoothing);
    columns.push({ label: s.label, color: s.color, kind: 'line', dash: s.dash, owner });
    ys.push(emit(mean));
    if (!s.spread) return;
    const spread = smoothEmaFloat(alignTo(x, s.steps, s.spread), smoothing);
    columns.push({ label: `${s.label} +std`, color: s.color, kind: 'upper', owner });
    ys.push(emit(mean, spread, 1));
    columns.push({ label: `${s.label} −std`, color: s.color, kind: 'lower', owner });
    ys.push(emit(mean, spread, -1));
    bands.push([ys.length - 1, ys.length]);
  });
  const xs = keep ? Array.from(keep, (i) => x[i] as number) : (x as number[]);
  return { data: [xs, ...ys] as uPlot.AlignedData, columns, bands, points: x.length };
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
