// Node only: the Hub cache as a folder, `$CORE_CODE_LAB_CACHE`, else `$XDG_CACHE_HOME/core-code-lab/hub`,
// else `~/.cache/core-code-lab/hub`, one file per `{org/name}/{revision}/{file}`. A file is
// written beside its place and renamed into it, so a killed download never leaves a half file
// under the real name (and hub.ts checks every file it reads back anyway).
import { mkdir, readFile, rename, rm, writeFile } from 'node:fs/promises';
import { homedir } from 'node:os';
import { dirname, join, resolve, sep } from 'node:path';
import type { HubCache } from './hub';

export function hubCacheDir(): string {
  const env = process.env;
  if (env.CORE_CODE_LAB_CACHE) return env.CORE_CODE_LAB_CACHE;
  return join(env.XDG_CACHE_HOME || join(homedir(), '.cache'), 'core-code-lab', 'hub');
}

export function nodeHubCache(root = hubCacheDir()): HubCache {
  const pathOf = (key: string) => {
    const path = resolve(root, key);
    if (!path.startsWith(resolve(root) + sep)) throw new Error(`hub cache: bad key ${key}`);
    return path;
  };
  return {
    where: root,
    async get(key) {
      try {
        const buf = await readFile(pathOf(key));
        return new Uint8Array(buf.buffer, buf.byteOffset, buf.byteLength);
      } catch {
        return null;
      }
    },
    async put(key, bytes) {
      const path = pathOf(key);
      await mkdir(dirname(path), { recursive: true });
      const partial = `${path}.${process.pid}.partial`;
      await writeFile(partial, bytes);
      await rename(partial, path);
    },
    async delete(key) {
      await rm(pathOf(key), { force: true });
    },
  };
}
