import { useState } from 'react';
import { encodeRunConfig, SELF_CHECK_ACTIVITY } from '../../engine/api';
import { newRun, pause, step, train, warmStartFromScratch } from '../engineClient';
import { activeRun, type MetricPoint, useLabStore } from '../state/labStore';
import { BackendLine } from './BackendLine';
import { ExportImport } from './ExportImport';

/** The session's activity while it runs the periodic evaluation (engine/session.ts). */
const EVALUATION_ACTIVITY = 'the evaluation';
/** Steps averaged for the seconds-per-step readout. */
const RECENT_STEPS = 5;

/** Mean `step_time` of the run's last few steps, null before its first. */
function secondsPerStep(points: readonly MetricPoint[] | undefined): number | null {
  const times: number[] = [];
  for (let i = (points?.length ?? 0) - 1; i >= 0 && times.length < RECENT_STEPS; i--) {
    const value = points?.[i]?.values.step_time;
    if (value !== undefined && Number.isFinite(value) && value > 0) times.push(value);
  }
  return times.length === 0 ? null : times.reduce((a, b) => a + b, 0) / times.length;
}

/** Train / Pause / Step / Reset, the engine's status, and which backend is computing. */
export function RunToolbar() {
  const status = useLabStore((s) => s.status);
  const currentStep = useLabStore((s) => s.step);
  const backend = useLabStore((s) => s.backend);
  const memoryBudgetMiB = useLabStore((s) => s.memoryBudgetMiB);
  const config = useLabStore((s) => s.config);
  const run = useLabStore(activeRun);
  const evaluating = useLabStore((s) => s.activity === EVALUATION_ACTIVITY);
  const checking = useLabStore((s) => s.activity === SELF_CHECK_ACTIVITY);
  const perStep = secondsPerStep(run?.points);
  const idle = status === 'idle';
  const [warmStartMinutes, setWarmStartMinutes] = useState(5);
  const pending =
    run && encodeRunConfig(run.config).toString() !== encodeRunConfig(config).toString();

  return (
    <div className="run-toolbar">
      <div className="buttons">
        <button type="button" className="primary" onClick={train} disabled={!idle}>
          Train
        </button>
        <button
          type="button"
          onClick={pause}
          disabled={status !== 'training' && status !== 'warmstart'}
        >
          Pause
        </button>
        <button type="button" onClick={step} disabled={!idle} title="Exactly one GRPO step">
          Step
        </button>
        <button
          type="button"
          onClick={() => void newRun()}
          disabled={status === 'training' || status === 'stepping'}
          title="A new run from the warm start with the settings on the left"
        >
          Reset
        </button>
      </div>
      <div className="status" data-testid="engine-status">
        <span className={`dot ${status}`} />
        {status}
        {evaluating && <span data-testid="evaluating"> · evaluating…</span>} · step{' '}
        <strong data-testid="step-count">{currentStep}</strong>
        {perStep !== null && (
          <span
            className="hint"
            data-testid="seconds-per-step"
            title="Mean wall time of the last steps (an evaluation step takes longer)"
          >
            {' '}
            · {perStep.toFixed(perStep < 10 ? 1 : 0)} s/step
          </span>
        )}
      </div>
      <div className="backend" data-testid="backend" title={backend?.reason}>
        <BackendLine backend={backend} checking={checking} />
        {run?.config.base !== undefined && (
          <span data-testid="base-model" title="The frozen base every role's adapter trains over">
            {' '}
            · base {run.config.base}
          </span>
        )}
        {memoryBudgetMiB !== null && (
          <span className="hint" data-testid="memory-budget">
            {' '}
            · micro-batches ≤ {memoryBudgetMiB} MiB
          </span>
        )}
      </div>
      <button
        type="button"
        onClick={() => void warmStartFromScratch(warmStartMinutes)}
        disabled={!idle}
        title="Supervised training of both roles from random weights, in this page; Pause ends it early"
      >
        Warm start from scratch
      </button>
      <select
        aria-label="Warm start minutes"
        value={warmStartMinutes}
        onChange={(e) => setWarmStartMinutes(Number(e.target.value))}
      >
        {[0.25, 1, 5, 15, 30].map((m) => (
          <option key={m} value={m}>
            {m < 1 ? `${m * 60} s` : `${m} min`}
          </option>
        ))}
      </select>
      {pending && <div className="pending">Settings changed: Reset starts a run with them.</div>}
      <div className="spacer" />
      <ExportImport />
    </div>
  );
}
