// WGSL sources live in shaders/ at the repository root. Under Vite (the page, its Worker, and
// vite-node / vitest in Node) they are bundled as strings by an eager `?raw` glob; without Vite
// (plain Node) they are read from disk.

import { importNodeOnly } from '../host';

const cache = new Map<string, Promise<string>>();
let bundledHits = 0;

/** How many shaders came from the bundle rather than the disk (tests check the page's path). */
export function shadersFromBundle(): number {
  return bundledHits;
}

/** shaders/NAME.wgsl → its source, as Vite bundles it (absent outside Vite). */
const bundled = bundledShaders();

function bundledShaders(): Record<string, string> {
  try {
    // Vite rewrites this call into the sources themselves; elsewhere import.meta.glob is absent.
    return import.meta.glob('../../../shaders/*.wgsl', {
      query: '?raw',
      import: 'default',
      eager: true,
    }) as Record<string, string>;
  } catch {
    return {};
  }
}

/**
 * shaders/NAME.wgsl's source; `NAME.wgsl?CONST=value&…` is a variant with those `const` u32s
 * rewritten (array sizes, which WGSL's `override` cannot set for function-scope arrays).
 */
export function loadShader(name: string): Promise<string> {
  let source = cache.get(name);
  if (!source) {
    const [file = name, query] = name.split('?');
    const inline = bundled[`../../../shaders/${file}`];
    const base = inline !== undefined ? Promise.resolve(inline) : readFromRepo(file);
    bundledHits += inline !== undefined ? 1 : 0;
    source = query ? base.then((code) => withConstants(name, code, query)) : base;
    cache.set(name, source);
  }
  return source;
}

function withConstants(name: string, code: string, query: string): string {
  let out = code;
  for (const pair of query.split('&')) {
    const [key, value] = pair.split('=');
    const line = new RegExp(`const ${key}: u32 = \\d+u;`);
    if (!key || !value || !/^\d+$/.test(value) || !line.test(out))
      throw new Error(`shader variant ${name}: no const ${key} to set`);
    out = out.replace(line, `const ${key}: u32 = ${value}u;`);
  }
  return out;
}

async function readFromRepo(file: string): Promise<string> {
  const { readFile } = await importNodeOnly<{
    readFile(path: string, encoding: 'utf8'): Promise<string>;
  }>('node:fs/promises');
  const { fileURLToPath } = await importNodeOnly<{ fileURLToPath(url: URL): string }>('node:url');
  // This file is src/gpu/kernels/loadShader.ts, three levels below the root.
  return readFile(fileURLToPath(new URL(`../../../shaders/${file}`, import.meta.url)), 'utf8');
}
