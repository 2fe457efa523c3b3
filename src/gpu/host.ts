// What the engine needs to know about its host, without Node's or the DOM's types: whether
// it runs in Node, and (there only) the Dawn loader. The loader, src/gpu/nodeWebgpu.ts, is
// Node-only code (tsconfig.node.json); it is imported through a variable specifier so that
// neither the engine's type world nor a browser bundle ever sees it.

export const isNodeHost =
  typeof (globalThis as { process?: { versions?: { node?: unknown } } }).process?.versions?.node ===
  'string';

/** A Node built-in (or another Node-only module), out of reach of browser bundlers. */
export async function importNodeOnly<T>(specifier: string): Promise<T> {
  return (await import(/* @vite-ignore */ specifier)) as T;
}

/** Node only: a navigator.gpu from the `webgpu` package (Dawn), or null where it is missing. */
export async function installNodeWebgpu(): Promise<GPU | null> {
  const specifier = './nodeWebgpu'; // resolved from this file by vite-node and vitest
  const loader = await importNodeOnly<{ installNodeWebgpu(): Promise<GPU | null> }>(specifier);
  return loader.installNodeWebgpu();
}
