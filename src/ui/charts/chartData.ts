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
  /** Never smoothed (evaluations, level lines). */
  raw?: boolean;
  /** Dots at the measured points. */
  points?: boolean;
  /** A level to compare with (a baseline), not a measurement: never called "constant". */
  reference?: boolean;
}

export type ColumnKind = 'line' | 'upper' | 'lower';

export interface ChartColumn {
  label: string;
  color: string;
  kind: ColumnKind;
  dash?: number[];
  points?: boolean;
  reference?: boolean;
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
    const weight = s.raw ? 0 : smoothing;
    const mean = smoothEmaFloat(alignTo(x, s.steps, s.values), weight);
    columns.push({
      label: s.label,
      color: s.color,
      kind: 'line',
      dash: s.dash,
      owner,
      ...(s.points ? { points: true } : {}),
      ...(s.reference ? { reference: true } : {}),
    });
    ys.push(emit(mean));
    if (!s.spread) return;
    const spread = smoothEmaFloat(alignTo(x, s.steps, s.spread), weight);
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

/**
 * The y range that fits the data: its min and max with 5% room, or a fixed range widened to
 * take data outside it. A constant series gets a small range around its value (0: [0, 1]),
 * not uPlot's 0–100 for a flat line.
 */
export function fitRange(
  min: number | null,
  max: number | null,
  fixed?: [number, number],
): [number, number] {
  if (min === null || max === null || !Number.isFinite(min) || !Number.isFinite(max)) {
    return fixed ?? [0, 1];
  }
  if (fixed) return [Math.min(fixed[0], min), Math.max(fixed[1], max)];
  const span = max - min;
  if (span <= 1e-12 * Math.max(1, Math.abs(max))) {
    if (max === 0) return [0, 1];
    const room = Math.abs(max) * 0.1;
    return [max - room, max + room];
  }
  return [min - 0.05 * span, max + 0.05 * span];
}

/** The x range: the steps held, one step either side when there is only one. */
export function stepRange(min: number | null, max: number | null): [number, number] {
  if (min === null || max === null || !Number.isFinite(min) || !Number.isFinite(max)) return [0, 1];
  // One point: a step either side, never a negative step (step 0 is the warm start's).
  if (min === max) return [Math.max(0, min - 1), max + 1];
  return [min, max];
}

/** Tick spacings for the step axis: whole steps only. */
export const STEP_INCREMENTS = [
  1, 2, 5, 10, 20, 25, 50, 100, 200, 250, 500, 1000, 2000, 2500, 5000, 10000, 20000, 50000, 100000,
];

/** Lines (not baselines) with two or more points that hold one value throughout. */
export function constantLines(prepared: PreparedChart): { label: string; value: number }[] {
  const found: { label: string; value: number }[] = [];
  prepared.columns.forEach((column, c) => {
    if (column.kind !== 'line' || column.reference) return;
    const values = (prepared.data[c + 1] ?? []) as (number | null | undefined)[];
    let first: number | null = null;
    let count = 0;
    for (const value of values) {
      if (value === null || value === undefined) continue;
      if (first === null) first = value;
      else if (Math.abs(value - first) > 1e-9 * Math.max(1, Math.abs(first))) return;
      count++;
    }
    if (first !== null && count >= 2) found.push({ label: column.label, value: first });
  });
  return found;
}

/** "constant: 0" when every line is that one value, else "constant: planner 0 · coder 1". */
export function constantCaption(
  prepared: PreparedChart,
  format: (value: number) => string,
): string | null {
  const constant = constantLines(prepared);
  if (constant.length === 0) return null;
  const lines = prepared.columns.filter((c) => c.kind === 'line' && !c.reference).length;
  const values = new Set(constant.map((c) => format(c.value)));
  if (constant.length === lines && values.size === 1) return `constant: ${[...values][0]}`;
  return `constant: ${constant.map((c) => `${c.label} ${format(c.value)}`).join(' · ')}`;
}
