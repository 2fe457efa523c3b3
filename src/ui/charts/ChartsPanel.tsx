// The training curves: one chart per metric group, every visible run overlaid, with the
// smoothing and log-scale controls (both live in the lab store).
import { useDeferredValue, useMemo } from 'react';
import { useLabStore } from '../state/labStore';
import { setLogScale, setSmoothing } from '../state/runActions';
import { baselineNote, CHART_SPECS, chartSeries, chartShown } from './chartSpecs';
import { LineChart } from './LineChart';
import './charts.css';

export function ChartsPanel() {
  const runs = useDeferredValue(useLabStore((state) => state.runs));
  const smoothing = useLabStore((state) => state.smoothing);
  const logScale = useLabStore((state) => state.logScale);
  const visible = useMemo(() => runs.filter((run) => run.visible), [runs]);
  // An agent's chart (the Debugger's, the Retriever's) only where a visible run has it.
  const specs = useMemo(() => CHART_SPECS.filter((spec) => chartShown(spec, visible)), [visible]);
  const seriesByChart = useMemo(
    () => specs.map((spec) => chartSeries(spec, runs, visible)),
    [specs, runs, visible],
  );

  return (
    <section className="charts-panel" aria-label="Training charts">
      <div className="charts-controls">
        <label>
          Smoothing
          <input
            type="range"
            min={0}
            max={0.99}
            step={0.01}
            value={smoothing}
            onChange={(event) => setSmoothing(Number(event.target.value))}
            data-testid="charts-smoothing"
          />
          <output>{smoothing.toFixed(2)}</output>
        </label>
        <label>
          <input
            type="checkbox"
            checked={logScale}
            onChange={(event) => setLogScale(event.target.checked)}
            data-testid="charts-log-scale"
          />
          Log scale <span className="charts-hint">(KL, entropy, length, cost, time)</span>
        </label>
        {visible.length === 0 && (
          <span className="charts-hint">No visible runs: train, or tick a run in the table.</span>
        )}
      </div>
      <div className="charts-grid">
        {specs.map((spec, index) => (
          <LineChart
            key={spec.name}
            name={spec.name}
            title={spec.title}
            caption={[spec.caption, baselineNote(spec, visible)].filter(Boolean).join(' ')}
            className={spec.name === 'learning' ? 'chart-learning' : undefined}
            height={spec.name === 'learning' ? 220 : undefined}
            series={seriesByChart[index] ?? []}
            smoothing={smoothing}
            logScale={logScale && spec.logOk === true}
            yRange={spec.yRange}
          />
        ))}
      </div>
    </section>
  );
}
