import { dismissError } from '../engineClient';
import { useLabStore } from '../state/labStore';

/** Errors from the engine, the sandbox or an import, in words; the run continues. */
export function ErrorBanner() {
  const errors = useLabStore((s) => s.errors);
  if (errors.length === 0) return null;
  return (
    <div className="errors" role="alert" data-testid="errors">
      {errors.map((error) => (
        <div key={error.id} className="error-item">
          <span>{error.message}</span>
          <button type="button" onClick={() => dismissError(error.id)} aria-label="Dismiss">
            ×
          </button>
        </div>
      ))}
    </div>
  );
}
