// The runs table: one row per run with its headline numbers, overlay/active/delete actions,
// and a column for each config field that differs between runs.
import { useMemo, useState } from 'react';
import { runColor } from '../charts/palette';
import { type RunRecord, useLabStore } from '../state/labStore';
import { deleteRun, setActiveRun, setRunVisible } from '../state/runActions';
import { configDiff, fieldLabel } from './configDiff';
import './runs.css';

/** The last value a run logged for `metric` (null when never). */
export function lastValue(run: RunRecord, metric: string): number | null {
  for (let i = run.points.length - 1; i >= 0; i--) {
    const value = run.points[i]?.values[metric];
    if (value !== undefined && Number.isFinite(value)) return value;
  }
  return null;
}

/** Best eval pass@1: the overall `eval/pass@1` when logged, else the mean over the tiers. */
export function bestPassAt1(run: RunRecord): number | null {
  let best: number | null = null;
  for (const point of run.points) {
    let value = point.values['eval/pass@1'];
    if (value === undefined) {
      const tiers = Object.entries(point.values).filter(([name]) =>
        name.startsWith('eval/pass@1/'),
      );
      if (tiers.length > 0) value = tiers.reduce((sum, [, v]) => sum + v, 0) / tiers.length;
    }
    if (value !== undefined && Number.isFinite(value) && (best === null || value > best)) {
      best = value;
    }
  }
  return best;
}

const fixed = (value: number | null, digits = 3) => (value === null ? '–' : value.toFixed(digits));

export function RunsTable() {
  const runs = useLabStore((state) => state.runs);
  const activeRunId = useLabStore((state) => state.activeRunId);
  const status = useLabStore((state) => state.status);
  const diff = useMemo(() => configDiff(runs.map((run) => run.config)), [runs]);
  const busy = status === 'training' || status === 'stepping';
  /** The run whose delete waits for a second click. */
  const [confirming, setConfirming] = useState<string | null>(null);

  if (runs.length === 0) {
    return <p className="runs-empty">No runs yet.</p>;
  }
  return (
    <div className="runs-table-wrap">
      <table className="runs-table" data-testid="runs-table">
        <thead>
          <tr>
            <th title="Overlay on the charts">show</th>
            <th>run</th>
            <th>steps</th>
            <th>coder reward</th>
            <th>planner reward</th>
            <th>best pass@1</th>
            {diff.fields.map((field) => (
              <th key={field} title={field} className="runs-diff">
                {fieldLabel(field)}
              </th>
            ))}
            <th />
          </tr>
        </thead>
        <tbody>
          {runs.map((run, index) => {
            const active = run.id === activeRunId;
            const lastStep = run.points.at(-1)?.step ?? 0;
            return (
              <tr key={run.id} className={active ? 'active' : undefined} data-testid="run-row">
                <td>
                  <input
                    type="checkbox"
                    checked={run.visible}
                    aria-label={`show ${run.name} on the charts`}
                    onChange={(event) => setRunVisible(run.id, event.target.checked)}
                  />
                </td>
                <td>
                  <button
                    type="button"
                    className="runs-name"
                    aria-pressed={active}
                    title="Make this the active run"
                    onClick={() => setActiveRun(run.id)}
                  >
                    <i style={{ background: runColor(index) }} />
                    {run.name}
                  </button>
                </td>
                <td>{lastStep}</td>
                <td>{fixed(lastValue(run, 'coder/reward'))}</td>
                <td>{fixed(lastValue(run, 'planner/reward'))}</td>
                <td>{fixed(bestPassAt1(run), 2)}</td>
                {diff.fields.map((field) => (
                  <td key={field} className="runs-diff">
                    {String(diff.values[index]?.[field] ?? '–')}
                  </td>
                ))}
                <td>
                  {confirming === run.id ? (
                    <span className="runs-confirm" title={`Delete ${run.name}?`}>
                      Delete?{' '}
                      <button
                        type="button"
                        className="runs-delete"
                        onClick={() => {
                          setConfirming(null);
                          deleteRun(run.id);
                        }}
                      >
                        Yes, delete
                      </button>{' '}
                      <button type="button" onClick={() => setConfirming(null)}>
                        Keep
                      </button>
                    </span>
                  ) : (
                    <button
                      type="button"
                      className="runs-delete"
                      disabled={busy && active}
                      title={busy && active ? 'Stop training to delete this run' : 'Delete run'}
                      onClick={() => setConfirming(run.id)}
                    >
                      delete
                    </button>
                  )}
                </td>
              </tr>
            );
          })}
        </tbody>
      </table>
    </div>
  );
}
