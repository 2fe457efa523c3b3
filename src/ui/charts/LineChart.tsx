// A uPlot line chart in React: overlaid series (one per run), optional mean ± std bands,
// EMA smoothing, log scale, hover readout, container-width resize. The uPlot instance is
// created once per series layout and then fed with setData, so appending points each step
// redraws without rebuilding the chart.
import { useCallback, useEffect, useLayoutEffect, useMemo, useRef, useState } from 'react';
import uPlot from 'uplot';
import 'uplot/dist/uPlot.min.css';
import './charts.css';
import { watchOnScreen } from '../onScreen';
import {
  type ChartSeries,
  constantCaption,
  fitRange,
  type PreparedChart,
  prepareChart,
  STEP_INCREMENTS,
  stepRange,
  valueAt,
} from './chartData';
import { drawBands } from './drawBands';

export interface LineChartProps {
  title: string;
  /** What the chart shows, in a sentence or two under the title. */
  caption?: string;
  /** Extra class on the figure (`chart-learning` spans the grid's row). */
  className?: string;
  /** The chart's `data-testid` is `chart-<name>`. */
  name: string;
  series: ChartSeries[];
  /** EMA weight 0..0.99 (TensorBoard-style, debiased). */
  smoothing?: number;
  /** Log y axis; values ≤ 0 become gaps. */
  logScale?: boolean;
  height?: number;
  /** Fixed y range (e.g. [0, 1] for pass@1); autoscaled when absent. */
  yRange?: [number, number];
  /** Most points drawn per series (see prepareChart): default the plot's width in device
   * pixels; 0 draws every point. */
  maxPoints?: number;
  /** Called after each redraw (the benchmark times frames with it). */
  onDraw?: () => void;
}

const AXIS = { stroke: '#9ca3af', grid: { stroke: '#2a2f3d', width: 1 }, ticks: { show: false } };

/** Everything that needs a new uPlot instance when it changes (not the data). */
function layoutKey(prepared: PreparedChart, logScale: boolean, yRange?: [number, number]): string {
  const cols = prepared.columns.map(
    (c) =>
      `${c.kind}:${c.label}:${c.color}:${c.dash ?? ''}:${c.points ? 'o' : ''}${c.reference ? 'r' : ''}`,
  );
  return `${logScale}|${yRange ?? ''}|${cols.join(',')}`;
}

function makeOptions(
  prepared: PreparedChart,
  width: number,
  height: number,
  logScale: boolean,
  yRange: [number, number] | undefined,
  onCursor: (u: uPlot) => void,
  onDrawAxes: (u: uPlot) => void,
  onDraw: () => void,
): uPlot.Options {
  const series: uPlot.Series[] = [{ label: 'step' }];
  for (const column of prepared.columns) {
    series.push(
      column.kind === 'line'
        ? {
            label: column.label,
            stroke: column.color,
            width: 1.5,
            dash: column.dash,
            spanGaps: true,
            ...(column.points ? { points: { show: true, size: 6, fill: column.color } } : {}),
            ...(column.reference ? { points: { show: false } } : {}),
          }
        : // Band edges count for the y range; drawBands fills between them.
          { label: column.label, paths: () => null, points: { show: false } },
    );
  }
  // Linear axes fit the data (a flat series is not drawn on uPlot's 0–100); steps are whole.
  const y: uPlot.Scale = logScale
    ? { distr: 3 }
    : { range: (u, min, max) => note(u, 'yRange', fitRange(min, max, yRange)) };
  const x: uPlot.Scale = { time: false, range: (_u, min, max) => stepRange(min, max) };
  return {
    width,
    height,
    legend: { show: false },
    scales: { x, y },
    axes: [
      {
        ...AXIS,
        incrs: STEP_INCREMENTS,
        values: (u, splits) => note(u, 'xTicks', splits).map((step) => String(step)),
      },
      { ...AXIS, size: 50, values: (_u, splits) => yTickLabels(splits) },
    ],
    series,
    cursor: { drag: { x: true, y: false }, points: { size: 6 } },
    hooks: { setCursor: [onCursor], drawAxes: [onDrawAxes], draw: [onDraw] },
  };
}

/**
 * Y tick labels with as many decimals as their spacing needs, so ticks 1e-5 apart never all
 * read "0"; exponents once that would take more than four decimals.
 */
export function yTickLabels(splits: (number | null)[]): string[] {
  // uPlot hands null splits for an axis with no data (every run hidden).
  const ticks = splits.filter((v): v is number => typeof v === 'number' && Number.isFinite(v));
  const spacing = ticks.length > 1 ? Math.abs((ticks[1] as number) - (ticks[0] as number)) : 0;
  const label = (v: number | null, write: (v: number) => string) =>
    typeof v === 'number' && Number.isFinite(v) ? write(v) : '';
  if (!(spacing > 0)) return splits.map((v) => label(v, (x) => String(Number(x.toPrecision(3)))));
  // The fewest decimals that write every tick exactly (0.25 needs 2, 0.2 needs 1).
  const exactAt = (d: number) =>
    ticks.every((v) => Math.abs(Number(v.toFixed(d)) - v) < spacing * 1e-6);
  let decimals = 0;
  while (decimals <= 4 && !exactAt(decimals)) decimals++;
  if (decimals > 4) return splits.map((v) => label(v, (x) => (x === 0 ? '0' : x.toExponential(1))));
  return splits.map((v) => label(v, (x) => x.toFixed(decimals)));
}

/**
 * uPlot sizes a one-point x scale itself (0–100 around step 0) without asking the range
 * function: set the whole-step range by hand.
 */
function fitSinglePoint(chart: uPlot) {
  const x = chart.data[0];
  if (x.length !== 1) return;
  const [min, max] = stepRange(x[0] as number, x[0] as number);
  chart.setScale('x', { min, max });
}

/** Records what an axis chose on the chart's figure (`data-x-ticks`, `data-y-range`) for tests. */
function note<T extends number[]>(u: uPlot, key: 'xTicks' | 'yRange', value: T): T {
  const figure = u.root.closest('figure');
  if (figure) figure.dataset[key] = value.map((v) => Number(v.toPrecision(6))).join(',');
  return value;
}

/** A short number for captions: "0", "0.25", "1.5e-4". */
function shortNumber(value: number): string {
  return String(Number(value.toPrecision(3)));
}

/** Whether the user dragged a zoom window: new points then keep it (double-click resets). */
function isZoomed(chart: uPlot): boolean {
  const x = chart.data[0];
  const { min, max } = chart.scales.x ?? {};
  if (x.length < 2 || min === undefined || max === undefined) return false;
  return min > (x[0] as number) || max < (x[x.length - 1] as number);
}

function formatValue(value: number | null): string {
  if (value === null) return '–';
  const abs = Math.abs(value);
  if (abs !== 0 && (abs < 1e-3 || abs >= 1e5)) return value.toExponential(2);
  return value.toFixed(abs >= 100 ? 1 : 3);
}

/** Writes "step s · label value ±std" for the hovered (or last) index straight into the DOM:
 * hovering must not re-render React 60 times a second. */
function writeReadout(target: HTMLElement, prepared: PreparedChart, idx: number | null) {
  const x = prepared.data[0];
  const last = x.length - 1;
  const i = idx ?? last;
  target.replaceChildren();
  if (last < 0) {
    target.textContent = 'no data yet';
    return;
  }
  const step = document.createElement('span');
  step.className = 'chart-readout-step';
  step.textContent = `step ${x[i]}`;
  target.append(step);
  prepared.columns.forEach((column, c) => {
    if (column.kind !== 'line') return;
    const value = valueAt(prepared.data, c, i);
    const next = prepared.columns[c + 1];
    const upper = next?.kind === 'upper' ? valueAt(prepared.data, c + 1, i) : null;
    const item = document.createElement('span');
    item.className = 'chart-readout-item';
    const swatch = document.createElement('i');
    swatch.style.background = column.color;
    item.append(swatch, `${column.label} ${formatValue(value)}`);
    if (upper !== null && value !== null) item.append(` ±${formatValue(upper - value)}`);
    target.append(item);
  });
}

export function LineChart({
  title,
  caption,
  className,
  name,
  series,
  smoothing = 0,
  logScale = false,
  height = 170,
  yRange,
  maxPoints,
  onDraw,
}: LineChartProps) {
  const plotRef = useRef<HTMLDivElement>(null);
  const readoutRef = useRef<HTMLDivElement>(null);
  const chartRef = useRef<uPlot | null>(null);
  // Device pixels across the plot: more points than that cannot be seen, only paid for.
  const [pixels, setPixels] = useState(0);
  const drawnPoints = maxPoints ?? Math.max(200, pixels);
  const prepared = useMemo(
    () => prepareChart(series, { smoothing, logScale, maxPoints: drawnPoints }),
    [series, smoothing, logScale, drawnPoints],
  );
  const preparedRef = useRef(prepared);
  preparedRef.current = prepared;
  const onDrawRef = useRef(onDraw);
  onDrawRef.current = onDraw;
  const key = layoutKey(prepared, logScale, yRange);
  const constant = constantCaption(prepared, shortNumber);

  // (Re)create only when the layout changes; data changes go through setData below.
  // biome-ignore lint/correctness/useExhaustiveDependencies: `key` stands for the layout.
  useLayoutEffect(() => {
    const host = plotRef.current;
    if (!host) return;
    let chart: uPlot | null = null;
    let observer: ResizeObserver | null = null;
    // Each chart is built in a task of its own: the panel's ten charts built in one task
    // would hold the main thread for well over 50 ms on a slow machine.
    const timer = setTimeout(() => build(host), 0);
    return () => {
      clearTimeout(timer);
      observer?.disconnect();
      chart?.destroy();
      chartRef.current = null;
    };

    function build(host: HTMLDivElement) {
      const width = Math.max(host.clientWidth, 120);
      const options = makeOptions(
        preparedRef.current,
        width,
        height,
        logScale,
        yRange,
        (u) => {
          if (readoutRef.current)
            writeReadout(readoutRef.current, preparedRef.current, u.cursor.idx ?? null);
        },
        (u) => drawBands(u, preparedRef.current),
        () => onDrawRef.current?.(),
      );
      const built = new uPlot(options, preparedRef.current.data, host);
      fitSinglePoint(built);
      chart = built;
      chartRef.current = built;
      const measure = () => {
        const w = Math.max(host.clientWidth, 120);
        if (w !== built.width) built.setSize({ width: w, height });
        setPixels(Math.round(w * (window.devicePixelRatio || 1)));
      };
      measure();
      observer = new ResizeObserver(measure);
      observer.observe(host);
    }
  }, [key, height]);

  // A chart off screen is redrawn when it scrolls in, not at every step.
  const figureRef = useRef<HTMLElement>(null);
  const onScreenRef = useRef(true);
  const redraw = useCallback(() => {
    const chart = chartRef.current;
    if (!chart || !onScreenRef.current) return;
    const latest = preparedRef.current;
    if (chart.data !== latest.data) {
      chart.setData(latest.data, !isZoomed(chart));
      fitSinglePoint(chart);
    }
    if (readoutRef.current) writeReadout(readoutRef.current, latest, chart.cursor.idx ?? null);
  }, []);
  useEffect(() => {
    const figure = figureRef.current;
    if (!figure) return;
    return watchOnScreen(figure, (visible) => {
      onScreenRef.current = visible;
      if (visible) redraw();
    });
  }, [redraw]);

  // biome-ignore lint/correctness/useExhaustiveDependencies: new data is what calls for a redraw.
  useLayoutEffect(() => {
    // Also one task per chart, for the same reason as above.
    const timer = setTimeout(redraw, 0);
    return () => clearTimeout(timer);
  }, [prepared, redraw]);

  return (
    <figure
      ref={figureRef}
      className={className ? `chart ${className}` : 'chart'}
      data-testid={`chart-${name}`}
      data-points={prepared.points}
      data-drawn-points={prepared.data[0].length}
    >
      <figcaption className="chart-title">
        {title}
        {constant && (
          <span className="chart-constant" data-testid={`chart-${name}-constant`}>
            {constant}
          </span>
        )}
      </figcaption>
      {caption && <p className="chart-caption">{caption}</p>}
      <div className="chart-plot" ref={plotRef} />
      <div className="chart-readout" ref={readoutRef} />
    </figure>
  );
}
