import { useState } from 'react';
import { type BackendReport, formatGpuReport, runsOn } from '../../engine/api';

/**
 * Which engine samples and updates, on which adapter, and what the kernels' self-check found
 * there: "checking the GPU kernels…" while it runs, then "kernels · verified on <adapter>
 * (N checks) · fall-back: tfjs wasm" or which kernels failed, with their numbers; a button
 * copies the GPU report.
 */
export function BackendLine({
  backend,
  checking,
}: {
  backend: BackendReport | null;
  checking: boolean;
}) {
  if (!backend) return <>{checking ? 'checking the GPU kernels…' : 'starting backend…'}</>;
  const check = backend.selfCheck;
  const { engine: name, fallback } = runsOn(backend);
  return (
    <>
      {check && backend.kernels && check.failed.length === 0 ? (
        <span data-testid="self-check">
          kernels · verified on {check.adapter} ({check.checks} checks)
        </span>
      ) : (
        `${name} · ${backend.adapter}`
      )}
      {fallback && <span data-testid="backend-fallback"> · fall-back: tfjs {fallback}</span>}
      {check && check.failed.length > 0 && (
        <span className="hint" data-testid="self-check">
          {' '}
          · {backend.kernels ? 'dropped' : 'kernels off'}: {check.failed.join(', ')} failed their
          self-check on {check.adapter}
        </span>
      )}
      {(backend.kernels || backend.backend !== 'webgpu') && (
        <span className="hint"> ({backend.reason})</span>
      )}
      {backend.gpu && <CopyGpuReport text={formatGpuReport(backend.gpu)} />}
    </>
  );
}

function CopyGpuReport({ text }: { text: string }) {
  const [copied, setCopied] = useState<'yes' | 'no' | null>(null);
  return (
    <button
      type="button"
      className="copy-gpu-report"
      title="The adapter, its limits and features, every kernel check and the matmul tuner's timings, as markdown for a bug report"
      onClick={() => {
        navigator.clipboard.writeText(text).then(
          () => setCopied('yes'),
          () => setCopied('no'),
        );
      }}
    >
      {copied === 'yes' ? 'GPU report copied' : copied === 'no' ? 'Copy failed' : 'Copy GPU report'}
    </button>
  );
}
