// Node only: a checkpoint folder on disk as a CheckpointSource (hfCheckpoint.ts).
import { closeSync, openSync, readSync } from 'node:fs';
import { readFile, stat } from 'node:fs/promises';
import { join } from 'node:path';
import type { CheckpointSource } from './hfCheckpoint';

export function folderSource(dir: string): CheckpointSource {
  return {
    label: dir,
    async read(file, maxBytes) {
      try {
        const path = join(dir, file);
        const { size } = await stat(path);
        if (maxBytes !== undefined && size > maxBytes)
          throw new Error(
            `${dir}: ${file} is ${size} bytes, over the ${maxBytes} its checkpoint can need`,
          );
        const buf = await readFile(path);
        return new Uint8Array(buf.buffer, buf.byteOffset, buf.byteLength);
      } catch (err) {
        const code = (err as NodeJS.ErrnoException).code;
        if (code === 'ENOENT') return null;
        if (code === undefined) throw err;
        throw new Error(`${dir}: cannot read ${file} (${(err as Error).message})`);
      }
    },
    local: {
      async size(file) {
        try {
          return (await stat(join(dir, file))).size;
        } catch (err) {
          if ((err as NodeJS.ErrnoException).code === 'ENOENT') return null;
          throw new Error(`${dir}: cannot read ${file} (${(err as Error).message})`);
        }
      },
      readAt(file, offset, length) {
        const out = new Uint8Array(length);
        const fd = openSync(join(dir, file), 'r');
        try {
          let done = 0;
          while (done < length) {
            const n = readSync(fd, out, done, length - done, offset + done);
            if (n === 0)
              throw new Error(
                `${dir}: ${file} ended at ${offset + done} bytes (changed while read?)`,
              );
            done += n;
          }
        } finally {
          closeSync(fd);
        }
        return out;
      },
    },
  };
}
