// Node only: a checkpoint folder on disk as a CheckpointSource (hfCheckpoint.ts).
import { readFile } from 'node:fs/promises';
import { join } from 'node:path';
import type { CheckpointSource } from './hfCheckpoint';

export function folderSource(dir: string): CheckpointSource {
  return {
    label: dir,
    async read(file) {
      try {
        const buf = await readFile(join(dir, file));
        return new Uint8Array(buf.buffer, buf.byteOffset, buf.byteLength);
      } catch (err) {
        if ((err as NodeJS.ErrnoException).code === 'ENOENT') return null;
        throw new Error(`${dir}: cannot read ${file} (${(err as Error).message})`);
      }
    },
  };
}
