// WGSL sources live in shaders/ at the repository root. Node reads them with fs; the
// browser path (Vite `?raw` imports) is not wired yet, so these kernels are Node-only for now.

import { importNodeOnly } from '../host';

const cache = new Map<string, Promise<string>>();

export function loadShader(file: string): Promise<string> {
  let source = cache.get(file);
  if (!source) {
    source = readFromRepo(file);
    cache.set(file, source);
  }
  return source;
}

async function readFromRepo(file: string): Promise<string> {
  const { readFile } = await importNodeOnly<{
    readFile(path: string, encoding: 'utf8'): Promise<string>;
  }>('node:fs/promises');
  const { fileURLToPath } = await importNodeOnly<{ fileURLToPath(url: URL): string }>('node:url');
  // This file is src/gpu/kernels/loadShader.ts, three levels below the root.
  return readFile(fileURLToPath(new URL(`../../../shaders/${file}`, import.meta.url)), 'utf8');
}
