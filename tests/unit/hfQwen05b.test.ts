// Qwen2.5-Coder-0.5B's published shape (24 layers, hidden 896, intermediate 4864, 14 query and
// 2 key/value heads of 64, vocabulary 151,936, tied, BF16, rope_theta 1e6, q/k/v bias) with
// random weights: it loads on tfjs cpu, gives the numpy reference's last-position logits for a
// short input, and the process stays under 3.5 GB resident (its peak, VmHWM). Kept short (a few
// tokens) so the default run can afford it; the time it takes is in the README.
import '@tensorflow/tfjs-core'; // first: its ops must load before register_all_gradients (backend.ts)
import { execFileSync } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, expect, it } from 'vitest';
import { runHfCommand } from '../../src/cli/modelHf';
import { initBackend } from '../../src/gpu/backend';
import { qwen05bSpec, writeHfCheckpoint } from './hf-fixtures';

const root = mkdtempSync(join(tmpdir(), 'hf-05b-'));
afterAll(() => rmSync(root, { recursive: true, force: true }));

/** The process's peak resident memory in bytes (Linux), else its current one. */
function peakRssBytes(): number {
  try {
    const kb = /VmHWM:\s+(\d+) kB/.exec(readFileSync('/proc/self/status', 'utf8'))?.[1];
    if (kb) return Number(kb) * 1024;
  } catch {}
  return process.memoryUsage().rss;
}

it('a random Qwen2.5-Coder-0.5B loads on tfjs cpu, gives the reference logits, under 3.5 GB', async () => {
  await initBackend('cpu');
  const dir = join(root, 'qwen2.5-coder-0.5b');
  let t = Date.now();
  const config = writeHfCheckpoint(dir, qwen05bSpec(), 1);
  const writeSeconds = (Date.now() - t) / 1000;
  expect(config.numLayers).toBe(24);
  expect(statSync(join(dir, 'model.safetensors')).size).toBeGreaterThan(0.98e9); // 494M BF16 weights

  t = Date.now();
  const out = (await runHfCommand({
    command: 'logits',
    checkpoint: dir,
    text: 'the fun',
    chat: false,
    maxNewTokens: 1,
    temperature: 0,
    topK: 0,
    seed: 1,
  })) as { ids: number[]; logits: number[] };
  const labSeconds = (Date.now() - t) / 1000;
  const peak = peakRssBytes();

  t = Date.now();
  const reference = JSON.parse(
    execFileSync(
      'python3',
      [join(__dirname, '../reference/hf_llama.py'), dir, '--ids', out.ids.join(',')],
      {
        encoding: 'utf8',
        maxBuffer: 1 << 26,
      },
    ),
  ).logits as number[];
  const referenceSeconds = (Date.now() - t) / 1000;

  expect(out.logits).toHaveLength(151936);
  let diff = 0;
  let scale = 0;
  out.logits.forEach((v, i) => {
    diff = Math.max(diff, Math.abs(v - reference[i]!));
    scale = Math.max(scale, Math.abs(reference[i]!));
  });
  console.log(
    `0.5B: write ${writeSeconds.toFixed(1)} s, load + forward of ${out.ids.length} tokens ${labSeconds.toFixed(1)} s, ` +
      `reference ${referenceSeconds.toFixed(1)} s, peak RSS ${(peak / 2 ** 30).toFixed(2)} GiB, relative error ${(diff / scale).toExponential(2)}`,
  );
  expect(diff / scale).toBeLessThan(2e-3);
  expect(peak).toBeLessThan(3.5 * 2 ** 30);
}, 900_000);
