// Starting the sandbox worker under Node. worker_threads cannot load TypeScript, so the worker
// entry is bundled once with Vite's build API into a cached .mjs inside node_modules/.cache
// (keyed by a hash of this folder's sources, so edits rebuild it); quickjs-emscripten stays
// external and resolves from the repo's node_modules.
import { createHash } from 'node:crypto';
import { existsSync, mkdirSync, readdirSync, readFileSync, renameSync, rmSync } from 'node:fs';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { Worker } from 'node:worker_threads';
import type { PoolWorker } from './pool';
import type { FromWorker } from './protocol';

const sandboxDir = dirname(fileURLToPath(import.meta.url));
const repoRoot = resolve(sandboxDir, '../..');
const cacheDir = join(repoRoot, 'node_modules', '.cache', 'core-code-sandbox');

let bundled: Promise<string> | undefined;

/** Path of the bundled worker script, building it on first use. */
export function nodeWorkerScript(): Promise<string> {
  bundled ??= bundleWorker();
  return bundled;
}

async function bundleWorker(): Promise<string> {
  const hash = createHash('sha256');
  for (const name of readdirSync(sandboxDir).sort()) {
    if (name.endsWith('.ts')) hash.update(name).update(readFileSync(join(sandboxDir, name)));
  }
  const fileName = `worker-${hash.digest('hex').slice(0, 16)}.mjs`;
  const target = join(cacheDir, fileName);
  if (existsSync(target)) return target;
  const tmpDir = join(cacheDir, `tmp-${process.pid}-${Date.now()}`);
  mkdirSync(tmpDir, { recursive: true });
  const { build } = await import('vite');
  await build({
    configFile: false,
    logLevel: 'error',
    root: repoRoot,
    build: {
      ssr: join(sandboxDir, 'worker.ts'),
      outDir: tmpDir,
      emptyOutDir: false,
      minify: false,
      target: 'node20',
      copyPublicDir: false,
      rollupOptions: { output: { format: 'es', entryFileNames: fileName } },
    },
  });
  // Rename is atomic, so a concurrent process never loads a half-written bundle.
  renameSync(join(tmpDir, fileName), target);
  rmSync(tmpDir, { recursive: true, force: true });
  return target;
}

export function spawnNodeWorker(script: string): PoolWorker {
  const worker = new Worker(script);
  return {
    post: (message) => worker.postMessage(message),
    onMessage: (listener) => worker.on('message', (message: FromWorker) => listener(message)),
    onError: (listener) => {
      worker.on('error', listener);
      worker.on('exit', (code) => listener(new Error(`worker exited with code ${code}`)));
    },
    terminate: () => void worker.terminate(),
    setRef: (keepAlive) => (keepAlive ? worker.ref() : worker.unref()),
  };
}
