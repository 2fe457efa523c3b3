import { useRef } from 'react';
import { addImportedRun, requestSnapshot } from '../engineClient';
import { filesToRun, runToFiles } from '../persist/runFiles';
import * as db from '../persist/runsDb';
import { readZip, writeZip } from '../persist/zip';
import { activeRun, useLabStore } from '../state/labStore';

function download(bytes: Uint8Array, name: string) {
  const url = URL.createObjectURL(new Blob([bytes as BlobPart], { type: 'application/zip' }));
  const link = document.createElement('a');
  link.href = url;
  link.download = name;
  link.click();
  setTimeout(() => URL.revokeObjectURL(url), 10_000);
}

async function exportActiveRun() {
  const run = activeRun(useLabStore.getState());
  if (!run) return;
  const status = useLabStore.getState().status;
  const snapshot =
    status === 'idle' ? await requestSnapshot(run.id) : await db.loadSnapshot(run.id);
  const groups = useLabStore.getState().groups;
  download(
    writeZip(runToFiles(run, groups, snapshot)),
    `${run.name.replace(/[^\w.-]+/g, '_')}.zip`,
  );
}

async function importFile(file: File) {
  try {
    const { run, groups, snapshot } = filesToRun(readZip(new Uint8Array(await file.arrayBuffer())));
    await addImportedRun(run, snapshot, groups);
  } catch (error) {
    useLabStore.setState((state) => ({
      errors: [
        ...state.errors,
        {
          id: Date.now(),
          message: `Import of ${file.name} refused: ${(error as Error).message}`,
          recoverable: true,
        },
      ],
    }));
  }
}

/** Export the active run as one ZIP (checkpoint, metrics CSV/JSONL, samples JSONL); import one back. */
export function ExportImport() {
  const input = useRef<HTMLInputElement>(null);
  const hasRun = useLabStore((s) => s.activeRunId !== null);
  return (
    <div className="export-import">
      <button type="button" onClick={() => void exportActiveRun()} disabled={!hasRun}>
        Export run
      </button>
      <button type="button" onClick={() => input.current?.click()}>
        Import run
      </button>
      <input
        ref={input}
        type="file"
        accept=".zip"
        hidden
        data-testid="import-input"
        onChange={(event) => {
          const file = event.target.files?.[0];
          if (file) void importFile(file);
          event.target.value = '';
        }}
      />
    </div>
  );
}
