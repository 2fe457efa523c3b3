// chart-bench.html: LineChart with many points per series, redrawn once per animation frame
// with one more point appended each frame (setData through React, as the lab does per step).
// URL parameters: points (per series, 10000), series (4), band (1 = mean ± std bands),
// frames (120; 0 = draw once and stop, for tests), smoothing (0.6), decimate (1; 0 hands
// uPlot every point), chart (1; 0 runs the same frame loop with no chart: the frame-rate
// ceiling of the browser on this machine).
// The result goes to window.__chartBench and to the page as JSON.
// ?demo=lab&steps=N instead shows the charts panel, runs table and explainer on synthetic runs.
import { useEffect, useMemo, useRef, useState } from 'react';
import { flushSync } from 'react-dom';
import { createRoot } from 'react-dom/client';
import type { ChartSeries } from '../../src/ui/charts/chartData';
import { LineChart } from '../../src/ui/charts/LineChart';
import { runColor } from '../../src/ui/charts/palette';
import { DemoLab, seedDemoLab } from './demoLab';
import '../../src/ui/styles.css';

export interface ChartBenchResult {
  points: number;
  series: number;
  band: boolean;
  decimate: boolean;
  frames: number;
  framesPerSecond: number;
  /** Time from the data change to uPlot's draw hook, per frame. */
  updateMsMean: number;
  updateMsP50: number;
  updateMsP95: number;
  finalPoints: number;
}

declare global {
  interface Window {
    __chartBench?: ChartBenchResult;
  }
}

const params = new URLSearchParams(location.search);
const intParam = (name: string, fallback: number) => {
  const value = Number(params.get(name));
  return params.has(name) && Number.isFinite(value) && value >= 0 ? Math.floor(value) : fallback;
};
const POINTS = intParam('points', 10_000);
const SERIES = Math.max(1, intParam('series', 4));
const FRAMES = intParam('frames', 120);
const BAND = params.get('band') !== '0';
const SMOOTHING = Number(params.get('smoothing') ?? 0.6);
const DECIMATE = params.get('decimate') !== '0';
const CHART = params.get('chart') !== '0';

/** Deterministic noisy learning curves (a seeded LCG, so every variant draws the same data). */
function makeData(length: number, count: number) {
  let seed = 12345;
  const random = () => {
    seed = (seed * 1664525 + 1013904223) >>> 0;
    return seed / 2 ** 32;
  };
  const steps = Float64Array.from({ length }, (_, i) => i + 1);
  const curves = Array.from({ length: count }, (_, s) => {
    const values = new Float64Array(length);
    const spread = new Float64Array(length);
    for (let i = 0; i < length; i++) {
      const trend = 1 - Math.exp(-i / (length / (3 + s)));
      values[i] = 0.2 + 0.6 * trend + (random() - 0.5) * 0.3;
      spread[i] = 0.05 + 0.1 * random();
    }
    return { values, spread };
  });
  return { steps, curves };
}

function percentile(sorted: number[], q: number): number {
  return sorted[Math.min(sorted.length - 1, Math.floor(q * sorted.length))] ?? 0;
}

function BenchPage() {
  const data = useMemo(() => makeData(POINTS + FRAMES, SERIES), []);
  const [length, setLength] = useState(POINTS);
  const [result, setResult] = useState<ChartBenchResult | null>(null);
  const changedAt = useRef(0);
  const updateMs = useRef<number[]>([]);

  const series = useMemo<ChartSeries[]>(() => {
    // One shared steps view: every series has the same x, as runs of one chart mostly do.
    const steps = data.steps.subarray(0, length);
    return data.curves.map((curve, s) => ({
      label: `run ${s + 1}`,
      color: runColor(s),
      steps,
      values: curve.values.subarray(0, length),
      spread: BAND ? curve.spread.subarray(0, length) : undefined,
    }));
  }, [data, length]);

  useEffect(() => {
    if (FRAMES === 0) {
      const done = { ...emptyResult(), finalPoints: POINTS };
      window.__chartBench = done;
      setResult(done);
      return;
    }
    let frame = 0;
    let first = 0;
    let handle = requestAnimationFrame(function tick(now) {
      if (frame === 0) first = now;
      if (frame === FRAMES) {
        const sorted = [...updateMs.current].sort((a, b) => a - b);
        const done: ChartBenchResult = {
          ...emptyResult(),
          frames: FRAMES,
          framesPerSecond: (FRAMES * 1000) / (now - first),
          updateMsMean: sorted.reduce((a, b) => a + b, 0) / Math.max(sorted.length, 1),
          updateMsP50: percentile(sorted, 0.5),
          updateMsP95: percentile(sorted, 0.95),
          finalPoints: POINTS + FRAMES,
        };
        window.__chartBench = done;
        setResult(done);
        return;
      }
      frame++;
      changedAt.current = performance.now();
      // Render and commit now, inside this frame (uPlot draws in the following microtask).
      flushSync(() => setLength(POINTS + frame));
      handle = requestAnimationFrame(tick);
    });
    return () => cancelAnimationFrame(handle);
  }, []);

  const onDraw = () => {
    if (changedAt.current > 0) {
      updateMs.current.push(performance.now() - changedAt.current);
      changedAt.current = 0;
    }
  };

  return (
    <main style={{ width: 960, padding: 16 }}>
      <h1 style={{ fontSize: '1rem' }}>
        Chart benchmark: {SERIES} series × {POINTS} points{BAND ? ' with bands' : ''}
      </h1>
      {CHART ? (
        <LineChart
          name="bench"
          title="bench"
          series={series}
          smoothing={SMOOTHING}
          height={300}
          maxPoints={DECIMATE ? undefined : 0}
          onDraw={onDraw}
        />
      ) : (
        <p>frame loop only, no chart ({series.length} series prepared)</p>
      )}
      <pre data-testid="bench-result">{result ? JSON.stringify(result, null, 2) : 'running…'}</pre>
    </main>
  );
}

function emptyResult(): ChartBenchResult {
  return {
    points: POINTS,
    series: SERIES,
    band: BAND,
    decimate: DECIMATE,
    frames: 0,
    framesPerSecond: 0,
    updateMsMean: 0,
    updateMsP50: 0,
    updateMsP95: 0,
    finalPoints: POINTS,
  };
}

const root = document.getElementById('root');
if (root && params.get('demo') === 'lab') {
  seedDemoLab(intParam('steps', 60));
  createRoot(root).render(<DemoLab />);
} else if (root) {
  createRoot(root).render(<BenchPage />);
}
