// `npm run train -- …` and the other CLIs: `node scripts/cli.mjs NAME ARGS…` runs src/cli/NAME.ts
// with plain Node from a bundle that Vite builds once per change of the sources, cached under
// node_modules/.cache/core-code-cli/<hash of src/, shaders/, package-lock.json and this file>.
//
// Why not vite-node: it transformed tfjs's ~600 ESM files (a package without "type": "module",
// so Node cannot load them itself) on every start, 12 s before `--help` printed on a 2-core
// machine. The bundle starts in about a second; the first run after an edit pays a few
// seconds of build. Each module keeps its own import.meta.url, so paths to public/, shaders/
// and reward.py resolve as they do from the sources.
import { createHash } from 'node:crypto';
import {
  existsSync,
  readdirSync,
  readFileSync,
  renameSync,
  rmSync,
  statSync,
  utimesSync,
  writeFileSync,
} from 'node:fs';
import { dirname, join, relative, resolve } from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';

const root = resolve(dirname(fileURLToPath(import.meta.url)), '..');
const cacheDir = join(root, 'node_modules', '.cache', 'core-code-cli');

/** The CLIs: src/cli/NAME.ts for each. */
export const CLI_NAMES = [
  'train',
  'model',
  'eval',
  'warmstart',
  'warmstartAgents',
  'sandbox',
  'tasks',
  'rewardServer',
];

function hashSources() {
  const hash = createHash('sha256');
  const walk = (dir) => {
    for (const entry of readdirSync(dir, { withFileTypes: true }).sort((a, b) =>
      a.name < b.name ? -1 : 1,
    )) {
      const path = join(dir, entry.name);
      if (entry.isDirectory()) walk(path);
      else hash.update(relative(root, path)).update(readFileSync(path));
    }
  };
  walk(join(root, 'src'));
  walk(join(root, 'shaders'));
  for (const file of ['package-lock.json', 'scripts/cli.mjs']) {
    const path = join(root, file);
    if (existsSync(path)) hash.update(file).update(readFileSync(path));
  }
  return hash.digest('hex').slice(0, 16);
}

/** import.meta.url in each source module becomes that module's own file URL. */
function keepModuleUrls() {
  return {
    name: 'core-code-keep-module-urls',
    enforce: 'pre',
    transform(code, id) {
      if (!id.startsWith(join(root, 'src')) || !code.includes('import.meta.url')) return null;
      const url = JSON.stringify(pathToFileURL(id.split('?')[0]).href);
      return { code: code.replaceAll('import.meta.url', url), map: null };
    },
  };
}

/** The bundle's folder, building it first if the sources changed since the last build. */
export async function cliBundle() {
  const target = join(cacheDir, hashSources());
  const done = join(target, 'done');
  if (existsSync(done)) {
    utimesSync(done, new Date(), new Date()); // last used: what pruning reads
    return target;
  }
  const tmpDir = `${target}.tmp-${process.pid}-${Date.now()}`;
  const { build } = await import('vite');
  await build({
    configFile: false,
    logLevel: 'error',
    root,
    plugins: [keepModuleUrls()],
    // tfjs's ESM files are not loadable by Node (see above): bundle them; other packages stay
    // external and load from node_modules as Node resolves them.
    ssr: { noExternal: [/^@tensorflow\//] },
    build: {
      ssr: true,
      outDir: tmpDir,
      emptyOutDir: true,
      minify: false,
      target: 'node20',
      copyPublicDir: false,
      reportCompressedSize: false,
      rollupOptions: {
        input: Object.fromEntries(
          CLI_NAMES.map((name) => [name, join(root, 'src/cli', `${name}.ts`)]),
        ),
        output: {
          format: 'es',
          entryFileNames: '[name].mjs',
          chunkFileNames: 'chunks/[name]-[hash].mjs',
          // tfjs-backend-wasm's emscripten glue was written for CommonJS.
          banner: [
            "import { createRequire as __cliCreateRequire } from 'node:module';",
            "import { dirname as __cliDirname } from 'node:path';",
            "import { fileURLToPath as __cliFileURLToPath } from 'node:url';",
            'const require = __cliCreateRequire(import.meta.url);',
            'const __filename = __cliFileURLToPath(import.meta.url);',
            'const __dirname = __cliDirname(__filename);',
            '',
          ].join('\n'),
        },
      },
    },
  });
  // Rename is atomic: a concurrent build that finished first wins, and nobody reads a half.
  writeFileSync(join(tmpDir, 'done'), '');
  try {
    renameSync(tmpDir, target);
  } catch {
    rmSync(tmpDir, { recursive: true, force: true });
  }
  pruneOldBundles(target);
  return target;
}

/** Vitest's globalSetup (vitest.shared.ts): build once, before test files spawn CLIs at once. */
export async function setup() {
  await cliBundle();
}

/**
 * Bundles of earlier sources not started for a week (~3 MB each). A week, not less: a long
 * experiment still loads chunks of the bundle it started from. Each start touches `done`.
 */
function pruneOldBundles(keep) {
  const weekAgo = Date.now() - 7 * 86_400_000;
  for (const name of readdirSync(cacheDir)) {
    const dir = join(cacheDir, name);
    const done = join(dir, 'done');
    const lastStarted = statSync(existsSync(done) ? done : dir).mtimeMs;
    if (dir !== keep && lastStarted < weekAgo) rmSync(dir, { recursive: true, force: true });
  }
}

const invokedDirectly =
  process.argv[1] && resolve(process.argv[1]) === fileURLToPath(import.meta.url);
if (invokedDirectly) {
  const [name, ...args] = process.argv.slice(2);
  if (!name || !CLI_NAMES.includes(name)) {
    console.error(`usage: node scripts/cli.mjs (${CLI_NAMES.join('|')}) [ARGS…]`);
    process.exit(2);
  }
  const entry = join(await cliBundle(), `${name}.mjs`);
  // The CLI reads process.argv after node and its script, as when Node runs it directly.
  process.argv = [process.argv[0] ?? 'node', entry, ...args];
  await import(pathToFileURL(entry).href);
}
