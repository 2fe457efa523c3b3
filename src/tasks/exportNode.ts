// Writes an engine export to a folder (Node only): the engine's dataset for the split, the lab's
// task file the reward server loads, and the Python reward file that calls the server.
import { mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import {
  type EngineFormat,
  EXPORT_FORMATS,
  type ExportFormat,
  engineExportFiles,
} from './exportFormats';
import type { Split, Task } from './types';

export const REWARD_PY = 'core_code_reward.py';

export function rewardPySource(): string {
  return readFileSync(new URL(`./${REWARD_PY}`, import.meta.url), 'utf8');
}

/** Writes the files and returns their paths, dataset first. */
export function writeEngineExport(
  format: EngineFormat,
  tasks: readonly Task[],
  split: Split,
  dir: string,
): string[] {
  mkdirSync(dir, { recursive: true });
  const files = [
    ...engineExportFiles(format, tasks, split),
    { name: REWARD_PY, content: rewardPySource() },
  ];
  return files.map((file) => {
    const path = join(dir, file.name);
    writeFileSync(path, file.content);
    return path;
  });
}

/** `--format`'s value, checked: one of EXPORT_FORMATS (default lab). */
export function exportFormat(text: string | undefined): ExportFormat {
  const format = (text ?? 'lab') as ExportFormat;
  if (!EXPORT_FORMATS.includes(format)) {
    throw new Error(`--format takes one of ${EXPORT_FORMATS.join(', ')}, got "${text}"`);
  }
  return format;
}

/** An engine export for `tasks -- export --format F --out DIR`; returns one line to print. */
export function exportForEngine(
  format: EngineFormat,
  tasks: readonly Task[],
  split: Split,
  dir: string | undefined,
): string {
  if (!dir)
    throw new Error(`--format ${format} writes several files: give a folder with --out DIR`);
  const paths = writeEngineExport(format, tasks, split, dir);
  return `wrote ${tasks.length} ${split} tasks for ${format}: ${paths.join(', ')}`;
}
