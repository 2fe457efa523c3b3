// What the engine needs to know about its host, without Node's or the DOM's types: whether
// it runs in Node, and (there only) the Dawn loader. The loader, src/gpu/nodeWebgpu.ts, is
// Node-only code (tsconfig.node.json); it is imported through a variable specifier so that
// neither the engine's type world nor a browser bundle ever sees it.

export const isNodeHost =
  typeof (globalThis as { process?: { versions?: { node?: unknown } } }).process?.versions?.node ===
  'string';

/** Node-only modules handed over by a Node entry, by the specifier the engine asks for. */
const providedModules = new Map<string, () => Promise<unknown>>();

/**
 * A Node entry gives the engine a Node-only module it asks for by a relative specifier. The
 * bundled CLIs must (src/cli/nodeModules.ts): in a bundle, a variable relative import finds
 * nothing; under vite-node and vitest the import below finds the source file itself.
 */
export function provideNodeOnly(specifier: string, load: () => Promise<unknown>): void {
  providedModules.set(specifier, load);
}

/** A Node built-in (or another Node-only module), out of reach of browser bundlers. */
export async function importNodeOnly<T>(specifier: string): Promise<T> {
  const provided = providedModules.get(specifier);
  return (await (provided ? provided() : import(/* @vite-ignore */ specifier))) as T;
}

/** Node only: a navigator.gpu from the `webgpu` package (Dawn), or null where it is missing. */
export async function installNodeWebgpu(): Promise<GPU | null> {
  const specifier = './nodeWebgpu'; // resolved from this file by vite-node and vitest
  const loader = await importNodeOnly<{ installNodeWebgpu(): Promise<GPU | null> }>(specifier);
  return loader.installNodeWebgpu();
}
