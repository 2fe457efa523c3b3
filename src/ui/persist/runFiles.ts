// A run as files: what Export writes and Import reads back. Besides the lab's own
// run.json, metrics come as JSONL and CSV and samples as JSONL for other tools, and the
// snapshot's files (checkpoints, optimizer state, LoRA adapters) under snapshot/; a LoRA run's
// adapters also under adapters/<role>/ in PEFT's layout.
import type { RunSnapshot } from '../../engine/api';
import type { MetricPoint, RunRecord } from '../state/labStore';
import type { StoredGroups } from './runsDb';

const encoder = new TextEncoder();
const decoder = new TextDecoder();

export function metricsCsv(points: MetricPoint[]): string {
  // A step's metrics carry their own `step`; the first column already is the step.
  const names = [...new Set(points.flatMap((p) => Object.keys(p.values)))]
    .filter((name) => name !== 'step')
    .sort();
  const rows = points.map((p) => [p.step, ...names.map((n) => p.values[n] ?? '')].join(','));
  return [['step', ...names].join(','), ...rows].join('\n');
}

export function runToFiles(
  run: RunRecord,
  groups: StoredGroups,
  snapshot?: RunSnapshot,
): Record<string, Uint8Array> {
  const files: Record<string, Uint8Array> = {
    'run.json': encoder.encode(JSON.stringify({ format: 'core-code-lab/run@1', run }, null, 1)),
    'config.json': encoder.encode(JSON.stringify(run.config, null, 2)),
    'metrics.jsonl': encoder.encode(
      run.points.map((p) => JSON.stringify({ step: p.step, ...p.values })).join('\n'),
    ),
    'metrics.csv': encoder.encode(metricsCsv(run.points)),
    'samples.jsonl': encoder.encode(
      groups
        .flatMap((g) => g.groups)
        .map((g) => JSON.stringify(g))
        .join('\n'),
    ),
  };
  if (snapshot) {
    files['snapshot/meta.json'] = encoder.encode(
      JSON.stringify({ step: snapshot.step, config: snapshot.config }),
    );
    for (const [name, bytes] of Object.entries(snapshot.files)) {
      files[`snapshot/${name}`] = bytes;
      // A LoRA run's adapters also at the top, adapters/<role>/, as PEFT loads them.
      if (name.startsWith('adapters/')) files[name] = bytes;
    }
  }
  return files;
}

/** Reads an exported run back; every refusal names the file and what is wrong with it. */
export function filesToRun(archive: Record<string, Uint8Array>): {
  run: RunRecord;
  groups: StoredGroups;
  snapshot?: RunSnapshot;
} {
  const files = unwrapFolder(archive);
  const runFile = files['run.json'];
  if (!runFile) throw new Error('Not a lab run export: run.json is missing.');
  let parsed: { format?: string; run?: RunRecord };
  try {
    parsed = JSON.parse(decoder.decode(runFile));
  } catch (error) {
    throw new Error(`run.json is not valid JSON: ${(error as Error).message}`);
  }
  const run = parsed.run;
  if (parsed.format !== 'core-code-lab/run@1' || !run)
    throw new Error('run.json: unknown format (expected core-code-lab/run@1).');
  if (typeof run.id !== 'string' || !Array.isArray(run.points) || typeof run.config !== 'object') {
    throw new Error('run.json: run must have an id, points and a config.');
  }
  const groupsByStep = new Map<number, StoredGroups[number]>();
  const samples = files['samples.jsonl'] ? decoder.decode(files['samples.jsonl']) : '';
  samples.split('\n').forEach((line, index) => {
    if (!line.trim()) return;
    let group: StoredGroups[number]['groups'][number];
    try {
      group = JSON.parse(line);
    } catch {
      throw new Error(`samples.jsonl line ${index + 1} is not valid JSON.`);
    }
    const entry = groupsByStep.get(group.step) ?? { step: group.step, groups: [] };
    entry.groups.push(group);
    groupsByStep.set(group.step, entry);
  });
  const groups = [...groupsByStep.values()].sort((a, b) => a.step - b.step);
  const metaFile = files['snapshot/meta.json'];
  if (!metaFile) return { run, groups };
  const meta = JSON.parse(decoder.decode(metaFile)) as {
    step: number;
    config: RunSnapshot['config'];
  };
  const snapshotFiles: RunSnapshot['files'] = {};
  for (const [name, bytes] of Object.entries(files)) {
    if (name.startsWith('snapshot/') && name !== 'snapshot/meta.json')
      snapshotFiles[name.slice('snapshot/'.length)] = bytes;
  }
  return { run, groups, snapshot: { step: meta.step, config: meta.config, files: snapshotFiles } };
}

/**
 * A user who unzipped an export and zipped the folder again gets every file under one
 * folder ("run-x/run.json", …): read them as if at the top.
 */
function unwrapFolder(files: Record<string, Uint8Array>): Record<string, Uint8Array> {
  if (files['run.json']) return files;
  const names = Object.keys(files);
  const folder = names[0]?.split('/')[0];
  if (!folder || !files[`${folder}/run.json`]) return files;
  if (!names.every((name) => name.startsWith(`${folder}/`))) return files;
  return Object.fromEntries(
    Object.entries(files).map(([name, bytes]) => [name.slice(folder.length + 1), bytes]),
  );
}
