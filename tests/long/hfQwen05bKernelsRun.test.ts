// A GRPO run's base at Qwen2.5-Coder-0.5B's shape (random BF16 weights) on the lab's kernels
// (SwiftShader here), loaded as `train --base DIR --backend kernels` loads it: the base goes to
// the device from the checkpoint's files, 16-bit, and tfjs holds no copy of it (issue 31,
// "weights live in one place"). The Coder role samples with its adapter attached; tfjs then
// holds the adapters only, and this process (its own vitest worker) peaks under 2.4 GB
// resident. Before, tfjs held the base as float32 (1.84 GiB) and the device's copy was made
// from it: 3.7 GiB peak, and the first sampling ran the JS heap out in the conversion.

import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import * as tf from '@tensorflow/tfjs-core';
import { afterAll, expect, it } from 'vitest';
import { loadBaseModel } from '../../src/engine/baseModel';
import { createBaseRoles } from '../../src/engine/baseRoles';
import { defaultRunConfig } from '../../src/engine/session';
import { initBackend } from '../../src/gpu/backend';
import { roleDeviceCalls } from '../../src/gpu/engine/kernelRoles';
import { folderSource } from '../../src/model/families/folderSourceNode';
import { KvCacheSampler } from '../../src/rollout';
import { qwen05bSpec, writeHfCheckpoint } from '../unit/hf-fixtures';

process.env.VK_ICD_FILENAMES ??= '/usr/lib/chromium/vk_swiftshader_icd.json';
process.env.XDG_RUNTIME_DIR ??= '/tmp';

const root = mkdtempSync(join(tmpdir(), 'hf-05b-run-'));
afterAll(() => rmSync(root, { recursive: true, force: true }));

const peakRssBytes = () =>
  Number(/VmHWM:\s+(\d+) kB/.exec(readFileSync('/proc/self/status', 'utf8'))?.[1]) * 1024;

it('a 0.5B base on the kernels is held by the device alone while a role samples', async () => {
  const report = await initBackend('kernels');
  expect(report.kernels).toBe(true);
  const dir = join(root, 'qwen2.5-coder-0.5b');
  writeHfCheckpoint(dir, qwen05bSpec(), 1);
  const config = defaultRunConfig({ loraRank: 8, base: dir });
  const { base } = await loadBaseModel(folderSource(dir), dir, config);
  expect(base.model.weights.size).toBe(0);
  const roles = createBaseRoles(config, base);
  const coder = roles.roles.get('coder')!;
  const t = Date.now();
  const calls = roleDeviceCalls.sample;
  const out = await new KvCacheSampler(coder).sample([[1, 2, 3, 4]], {
    maxNewTokens: 2,
    temperature: 1,
    topK: 0,
    seed: 1,
    stopId: 0,
  });
  expect(roleDeviceCalls.sample).toBe(calls + 1);
  expect(out.tokens[0]).toHaveLength(2);
  const tfjsBytes = tf.memory().numBytes;
  const peak = peakRssBytes();
  console.log(
    `0.5B base on the kernels, a role's sampling: ${((Date.now() - t) / 1000).toFixed(1)} s, tfjs ${(tfjsBytes / 2 ** 20).toFixed(1)} MiB, peak RSS ${(peak / 2 ** 30).toFixed(2)} GiB`,
  );
  expect(base.model.weights.size).toBe(0);
  expect(tfjsBytes).toBeLessThan(64 * 2 ** 20);
  expect(peak).toBeLessThan(2.4e9);
}, 900_000);
