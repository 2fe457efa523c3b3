import { decideLinkDownload } from '../engineClient';
import { useLabStore } from '../state/labStore';

/**
 * A link that names a base not in this browser's cache: what it would fetch, from where, and a
 * click before anything is asked of that hub (the size follows once its config.json is read).
 */
export function DownloadConsent() {
  const pending = useLabStore((s) => s.pendingDownload);
  if (!pending) return null;
  return (
    <div className="download-consent" role="alertdialog" data-testid="download-consent">
      <p>
        This link asks to download the model <strong>{pending.model}</strong> from{' '}
        <strong>{pending.host}</strong> and run it in this page. Its size is shown once its
        config.json is read, before the weights download; a model too large is refused then.
      </p>
      <div className="download-consent-actions">
        <button type="button" onClick={() => decideLinkDownload(true)}>
          Download and run
        </button>
        <button type="button" onClick={() => decideLinkDownload(false)}>
          Not now
        </button>
      </div>
    </div>
  );
}
