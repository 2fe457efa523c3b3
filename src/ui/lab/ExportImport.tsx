import { useId, useRef, useState } from 'react';
import { addImportedRun, requestGguf, requestSnapshot } from '../engineClient';
import { filesToRun, runToFiles } from '../persist/runFiles';
import * as db from '../persist/runsDb';
import { readZip, writeZip } from '../persist/zip';
import { activeRun, useLabStore } from '../state/labStore';

function download(parts: Uint8Array[], name: string, type = 'application/zip') {
  const url = URL.createObjectURL(new Blob(parts as BlobPart[], { type }));
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
    [writeZip(runToFiles(run, groups, snapshot))],
    `${run.name.replace(/[^\w.-]+/g, '_')}.zip`,
  );
}

/** A run over a base: the role's adapter merged into the base, as GGUF for llama.cpp. */
async function exportRoleGguf(role: string) {
  const { file, error } = await requestGguf(role);
  if (file) download(file.parts, file.name, 'application/octet-stream');
  else refuse(`Export as GGUF refused: ${error}`);
}

type ParsedRun = ReturnType<typeof filesToRun>;

function refuse(message: string) {
  useLabStore.setState((state) => ({
    errors: [...state.errors, { id: Date.now(), message, recoverable: true }],
  }));
}

function refuseImport(name: string, error: unknown) {
  refuse(`Import of ${name} refused: ${(error as Error).message}`);
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
  const run = useLabStore(activeRun);
  // Roles with an adapter over a base: the run's agents (planner,coder by default).
  const roles = run?.config.base ? (run.config.grpo.agents ?? 'planner,coder').split(',') : [];
  const [role, setRole] = useState('coder');
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
      {roles.length > 0 && (
        <span className="export-gguf">
          <select
            aria-label="Role to export as GGUF"
            value={roles.includes(role) ? role : roles[roles.length - 1]}
            onChange={(event) => setRole(event.target.value)}
          >
            {roles.map((r) => (
              <option key={r}>{r}</option>
            ))}
          </select>
          <button
            type="button"
            title="The base with this role's LoRA merged in, as a GGUF file for llama.cpp, Ollama or LM Studio"
            onClick={() =>
              void exportRoleGguf(roles.includes(role) ? role : roles[roles.length - 1]!)
            }
          >
            Export as GGUF
          </button>
        </span>
      )}
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
