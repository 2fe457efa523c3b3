import { useId, useRef, useState } from 'react';
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

type ParsedRun = ReturnType<typeof filesToRun>;

function refuseImport(name: string, error: unknown) {
  useLabStore.setState((state) => ({
    errors: [
      ...state.errors,
      {
        id: Date.now(),
        message: `Import of ${name} refused: ${(error as Error).message}`,
        recoverable: true,
      },
    ],
  }));
}

async function readRunFile(file: File): Promise<ParsedRun | null> {
  try {
    return filesToRun(readZip(new Uint8Array(await file.arrayBuffer())));
  } catch (error) {
    refuseImport(file.name, error);
    return null;
  }
}

function importRun(parsed: ParsedRun, replace: boolean) {
  void addImportedRun(parsed.run, parsed.snapshot, parsed.groups, replace);
}

/** Export the active run as one ZIP (checkpoint, metrics CSV/JSONL, samples JSONL); import one back. */
export function ExportImport() {
  const input = useRef<HTMLInputElement>(null);
  const hasRun = useLabStore((s) => s.activeRunId !== null);
  /** A file whose run is already in this browser, waiting for the user's choice. */
  const [conflict, setConflict] = useState<{ parsed: ParsedRun; existing: string } | null>(null);
  const titleId = useId();
  const onFile = async (file: File) => {
    const parsed = await readRunFile(file);
    if (!parsed) return;
    const existing = useLabStore.getState().runs.find((run) => run.id === parsed.run.id);
    if (existing) setConflict({ parsed, existing: existing.name });
    else importRun(parsed, true);
  };
  const choose = (replace: boolean) => {
    if (conflict) importRun(conflict.parsed, replace);
    setConflict(null);
  };
  return (
    <div className="export-import">
      {conflict && (
        <div className="import-dialog" role="dialog" aria-labelledby={titleId}>
          <p id={titleId}>
            “{conflict.existing}” is already in this browser. Replace it with the file’s copy, or
            keep both (the import gets a name of its own)?
          </p>
          <button type="button" onClick={() => choose(true)}>
            Replace it
          </button>
          <button type="button" onClick={() => choose(false)}>
            Keep both
          </button>
          <button type="button" onClick={() => setConflict(null)}>
            Cancel
          </button>
        </div>
      )}
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
          if (file) void onFile(file);
          event.target.value = '';
        }}
      />
    </div>
  );
}
