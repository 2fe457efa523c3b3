// The GPU bundle (bench/gpu: what a lent GPU runs, in plain Node with Dawn) builds and runs its
// `peers` part here, on SwiftShader, as run.sh would start it on the device: the lab's kernel
// rows of `npm run bench -- peers` at a cut-down SmolLM2 shape. The device machine itself is
// not reachable from tests; this checks that what is carried there runs.
import { execFileSync } from 'node:child_process';
import { cpSync, mkdirSync, mkdtempSync, readdirSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, expect, it } from 'vitest';

const bundle = mkdtempSync(join(tmpdir(), 'gpu-bundle-'));
afterAll(() => rmSync(bundle, { recursive: true, force: true }));

it("the GPU bundle builds and its peers part prints the lab's kernel rows", () => {
  execFileSync(
    process.execPath,
    [
      'node_modules/vite/bin/vite.js',
      'build',
      '--config',
      'bench/gpu/vite.config.ts',
      '--outDir',
      bundle,
      '--logLevel',
      'warn',
    ],
    { stdio: 'pipe' },
  );
  // As bench/gpu/pack.sh lays it out: the launcher and Dawn's package beside the entries.
  cpSync('bench/gpu/launch.mjs', join(bundle, 'launch.mjs'));
  const webgpu = join(bundle, 'node_modules', 'webgpu');
  mkdirSync(join(webgpu, 'dist', 'linux-x64'), { recursive: true });
  for (const file of readdirSync('node_modules/webgpu'))
    if (file === 'package.json' || file.endsWith('.js'))
      cpSync(join('node_modules/webgpu', file), join(webgpu, file));
  cpSync(
    'node_modules/webgpu/dist/linux-x64/dawn.node',
    join(webgpu, 'dist', 'linux-x64', 'dawn.node'),
  );
  const out = execFileSync(process.execPath, ['launch.mjs', 'gpuSections.mjs'], {
    cwd: bundle,
    encoding: 'utf8',
    env: {
      ...process.env,
      BENCH_SECTIONS: 'peers',
      PEERS_MODELS: 'smollm2',
      PEERS_LAYERS: '1',
      PEERS_PROMPT: '8',
      PEERS_DECODE: '4',
    },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  const rows = out.split('\n').filter((line) => line.startsWith('| SmolLM2-135M shape, 1 layers'));
  expect(rows.map((row) => row.split('|')[2]!.trim())).toEqual([
    'prompt (8 tokens)',
    'decode (4 tokens, batch 1)',
    'decode (4 tokens, batch 4: a GRPO group, rows together)',
    'decode (4 tokens, batch 8: a GRPO group, rows together)',
  ]);
  for (const row of rows) expect(Number(row.split('|')[3])).toBeGreaterThan(0);
}, 600_000);
