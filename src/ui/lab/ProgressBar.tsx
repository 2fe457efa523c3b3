import { useLabStore } from '../state/labStore';

/** Long engine work (loading, warm start) with its ETA. */
export function ProgressBar() {
  const progress = useLabStore((s) => s.progress);
  const status = useLabStore((s) => s.status);
  if (!progress && status !== 'loading' && status !== 'warmstart') return null;
  const fraction = progress?.fraction ?? 0;
  return (
    <div className="progress" data-testid="progress">
      <div className="progress-track">
        <div className="progress-fill" style={{ width: `${(fraction * 100).toFixed(1)}%` }} />
      </div>
      <span className="hint">
        {progress
          ? `${progress.task}: ${progress.message}${progress.etaSec !== null ? ` · ETA ${Math.ceil(progress.etaSec)} s` : ''}`
          : status === 'warmstart'
            ? 'Warm start: starting…'
            : 'Loading the warm-start checkpoints and the sandbox…'}
      </span>
    </div>
  );
}
