// WGSL sources live in shaders/ at the repository root. Node reads them with fs; the
// browser path (Vite `?raw` imports) is not wired yet, so these kernels are Node-only for now.

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
  // Variable specifiers keep browser bundlers from trying to resolve Node built-ins.
  const fsName = 'node:fs/promises';
  const urlName = 'node:url';
  const { readFile } = (await import(
    /* @vite-ignore */ fsName
  )) as typeof import('node:fs/promises');
  const { fileURLToPath } = (await import(/* @vite-ignore */ urlName)) as typeof import('node:url');
  // This file is src/gpu/kernels/loadShader.ts, three levels below the root.
  return readFile(fileURLToPath(new URL(`../../../shaders/${file}`, import.meta.url)), 'utf8');
}
