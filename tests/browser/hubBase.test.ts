// The page over a pretrained base from a Hub: a tiny random Qwen2 checkpoint (tests/unit's
// fixtures; and a GPT-2 in openai-community/gpt2's layout) served by a real HTTP server on
// 127.0.0.1 in the Hub's layout, the page opened with
// base= and hub= (and no lora=: rank-8 adapters at the LoRA rate, said on the page). It
// downloads the base in its Worker, names it, steps, and after a reload reads
// the weights from Cache Storage (the server sees model.safetensors once). A missing model, an
// unreachable hub and a base too large for tfjs are each refused in words. On the kernels
// (SwiftShader), the self-check of its config's kernels runs once the base is loaded, and the line counts it.
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { createServer, type Server } from 'node:http';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { Browser, Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import { readGguf } from '../unit/gguf-reader';
import {
  chatFixtureSpec,
  fixtureSpec,
  writeGpt2HubCheckpoint,
  writeHfCheckpoint,
} from '../unit/hf-fixtures';
import {
  backendLine,
  bannerMessages,
  confirmDownload,
  copyGpuReport,
  launchBrowser,
  recordProgress,
  status,
  stepCount,
  waitIdle,
} from './browser';

const REPO = 'lab-test/tiny-qwen2';
/** A random GPT-2 in openai-community/gpt2's layout (its original names, no chat template). */
const GPT2 = 'lab-test/tiny-gpt2';
/** config.json only: Qwen2.5-1.5B's shape, whose float32 weights tfjs cannot hold. */
const HUGE = 'lab-test/huge-qwen2';
/**
 * One task, 2 plans × 2 programs, no evaluation, on wasm, and no `lora`: a base alone means
 * rank-8 adapters at the LoRA rate (issue 33).
 */
const RUN = 'backend=wasm&tasks=1&n=2&m=2&eval=0&seed=3';

let root: string;
let server: Server;
let hub: string;
/** Requests per `{repo}/{file}`, as the server saw them. */
const served = new Map<string, number>();

beforeAll(async () => {
  root = mkdtempSync(join(tmpdir(), 'hub-base-'));
  writeHfCheckpoint(join(root, REPO), chatFixtureSpec(), 23);
  writeGpt2HubCheckpoint(
    join(root, GPT2),
    { nEmbd: 32, nLayer: 2, nHead: 4, nPositions: 1024, original: true },
    24,
  );
  writeHfCheckpoint(join(root, HUGE), fixtureSpec('qwen2'), 5);
  writeFileSync(
    join(root, HUGE, 'config.json'),
    JSON.stringify({
      model_type: 'qwen2',
      vocab_size: 151936,
      hidden_size: 1536,
      intermediate_size: 8960,
      num_hidden_layers: 28,
      num_attention_heads: 12,
      num_key_value_heads: 2,
      tie_word_embeddings: true,
      max_position_embeddings: 32768,
    }),
  );
  server = createServer((req, res) => {
    // The page is served from another port: the Hub's files are cross-origin to it.
    res.setHeader('access-control-allow-origin', '*');
    res.setHeader('access-control-allow-headers', 'authorization');
    if (req.method === 'OPTIONS') {
      res.writeHead(204).end();
      return;
    }
    const match = /^\/([^/]+\/[^/]+)\/resolve\/main\/([^/?]+)$/.exec(req.url ?? '');
    if (!match) {
      res.writeHead(404).end('not found');
      return;
    }
    const [, repo, file] = match as unknown as [string, string, string];
    const key = `${repo}/${file}`;
    served.set(key, (served.get(key) ?? 0) + 1);
    let bytes: Buffer;
    try {
      bytes = readFileSync(join(root, repo, file));
    } catch {
      res.writeHead(404).end('Entry not found');
      return;
    }
    res.writeHead(200, { 'content-length': bytes.length }).end(bytes);
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const address = server.address();
  if (!address || typeof address === 'string') throw new Error('hub server has no port');
  hub = `http://127.0.0.1:${address.port}`;
});

afterAll(async () => {
  await new Promise((resolve) => server?.close(resolve));
  rmSync(root, { recursive: true, force: true });
});

const pageUrl = (base: string, hubUrl = hub) =>
  `${inject('baseUrl')}?base=${encodeURIComponent(base)}&hub=${encodeURIComponent(hubUrl)}&${RUN}`;

/** The page's Export as GGUF, the downloaded file read back. */
async function exportGgufFrom(page: Page) {
  const download = page.waitForEvent('download');
  await page.getByRole('button', { name: 'Export as GGUF' }).click();
  return readGguf(readFileSync((await (await download).path()) as string));
}

describe('the page over a base model from a Hub', () => {
  let browser: Browser;
  beforeAll(async () => {
    browser = await launchBrowser();
  });
  afterAll(async () => {
    await browser?.close();
  });

  /** A fresh context on `url`, its page errors and download progress recorded. */
  async function openPage(url: string) {
    const context = await browser.newContext({ viewport: { width: 1400, height: 900 } });
    const page = await context.newPage();
    const errors: string[] = [];
    page.on('pageerror', (error) => errors.push(error.message));
    const progressSeen = await recordProgress(page);
    await page.goto(url);
    return { context, page, errors, progressSeen };
  }

  it('downloads the base in its Worker, steps, and after a reload reads it from Cache Storage', async () => {
    const { context, page, errors, progressSeen } = await openPage(pageUrl(REPO));
    // A foreign hub's model not yet cached: the page asks before it downloads.
    await confirmDownload(page);
    await waitIdle(page, 240_000);
    expect(await page.getByTestId('base-model').textContent()).toContain(REPO);
    expect(served.get(`${REPO}/model.safetensors`)).toBe(1);
    // The size before the download (its parameters), the download as it went.
    expect((await progressSeen()).join('\n')).toMatch(/qwen2 · [\d.]+M parameters/);
    // No `lora` in the link: rank-8 adapters at the LoRA rate for a base, said on the page.
    expect(await page.getByTestId('model-about').textContent()).toMatch(
      /Each role trains a rank-8 LoRA adapter over it at learning rate 0\.0001 \(LoRA default over a base: /,
    );
    expect(await page.getByTestId('learning-rate-source').textContent()).toMatch(
      /^learning rate 0\.0001 \(LoRA default over a base: /,
    );
    expect(await page.locator('input[name="lr"]').inputValue()).toBe('0.0001');

    // Its decode goes through the lab's own WebAssembly row kernel on tfjs wasm's memory
    // (model/fewRowsLinear.ts), which the backend line names where it instantiated.
    expect(await backendLine(page)).toMatch(
      /^wasm · tfjs wasm SIMD \+ the lab's decode-row kernel/,
    );
    await page.getByRole('button', { name: 'Step' }).click();
    await expect.poll(() => stepCount(page), { timeout: 240_000 }).toBe(1);
    await waitIdle(page);

    // Export as GGUF (issue 32): the Coder's adapter merged into the base, read again from Cache
    // Storage, one file in llama.cpp's layout.
    const gguf = await exportGgufFrom(page);
    expect(gguf.metadata.get('general.architecture')).toBe('qwen2');
    expect(gguf.metadata.get('general.name')).toBe(`${REPO}+coder`);
    expect(gguf.tensors.get('blk.1.attn_q.bias')?.dims).toEqual([32]);

    await page.reload();
    await waitIdle(page, 240_000);
    expect(await stepCount(page)).toBe(1);
    await page.getByRole('button', { name: 'Step' }).click();
    await expect.poll(() => stepCount(page), { timeout: 240_000 }).toBe(2);
    await waitIdle(page);
    expect(await bannerMessages(page)).toEqual([]);
    expect(errors).toEqual([]);
    // The reload read every file from Cache Storage: the weights crossed the network once.
    expect(served.get(`${REPO}/model.safetensors`)).toBe(1);
    expect(served.get(`${REPO}/config.json`)).toBe(1);
    await context.close();
  });

  it("on the kernels: its config's kernels are checked once the base is loaded, before its first step, and the backend line counts them", async () => {
    const context = await browser.newContext({
      permissions: ['clipboard-read', 'clipboard-write'],
      viewport: { width: 1400, height: 900 },
    });
    const page = await context.newPage();
    const errors: string[] = [];
    page.on('pageerror', (error) => errors.push(error.message));
    const line = () => backendLine(page);
    await page.goto(pageUrl(REPO).replace('backend=wasm', 'backend=kernels'));
    await confirmDownload(page);
    await waitIdle(page, 240_000);
    expect(await line()).toMatch(/^kernels · verified on .*swiftshader.* \(\d+ checks\)/i);
    // The engine that samples and updates, and apart from it the tfjs backend kept for the fall-back.
    expect(await page.getByTestId('backend-fallback').textContent()).toBe(
      ' · fall-back: tfjs wasm',
    );
    const report = await copyGpuReport(page);
    // The start's checks and those of the base's config, every one passed, all counted in the line.
    expect(report).toMatch(/\| matmul\/v4_vec4 \| start \| ok \|/);
    for (const name of ['rmsnorm/forward+backward', 'attention/gqa_decode', 'matmul/v5_b16_bf16'])
      expect(report).toContain(`| ${name} | fixed sizes | ok |`);
    const checks = Number((await line()).match(/\((\d+) checks\)/)?.[1]);
    expect(checks).toBe(
      report.match(/^\| [a-z_0-9]+\/[^|]+ \| (start|fixed sizes) \| ok \|/gm)?.length,
    );
    await page.getByRole('button', { name: 'Step' }).click();
    await expect.poll(() => stepCount(page), { timeout: 240_000 }).toBe(1);
    await waitIdle(page);
    expect(await line()).toMatch(/^kernels · verified on /);
    expect(await bannerMessages(page)).toEqual([]);
    expect(errors).toEqual([]);
    await context.close();
  });

  it("takes a Hub GPT-2 as its base: steps, and exports the Coder as llama.cpp's gpt2", async () => {
    const { context, page, errors, progressSeen } = await openPage(pageUrl(GPT2));
    await confirmDownload(page);
    await waitIdle(page, 240_000);
    expect(await page.getByTestId('base-model').textContent()).toContain(GPT2);
    expect((await progressSeen()).join('\n')).toMatch(/gpt2 · [\d.]+M parameters/);
    await page.getByRole('button', { name: 'Step' }).click();
    await expect.poll(() => stepCount(page), { timeout: 240_000 }).toBe(1);
    await waitIdle(page);
    const gguf = await exportGgufFrom(page);
    expect(gguf.metadata.get('general.architecture')).toBe('gpt2');
    expect(gguf.tensors.get('blk.1.attn_qkv.weight')?.dims).toEqual([32, 96]);
    expect(await bannerMessages(page)).toEqual([]);
    expect(errors).toEqual([]);
    await context.close();
  });

  it('names a missing model, an unreachable hub and a base too large for tfjs in words', async () => {
    const cases: [string, string, RegExp][] = [
      ['lab-test/no-such-model', hub, /lab-test\/no-such-model.*was not found on .*HTTP 404/],
      [REPO, 'http://127.0.0.1:1', /cannot reach http:\/\/127\.0\.0\.1:1 for lab-test\/tiny-qwen2/],
      [
        HUGE,
        hub,
        /base lab-test\/huge-qwen2 cannot fit: qwen2 · 1\.\d+B parameters.*tfjs holds at most/,
      ],
    ];
    for (const [base, hubUrl, expected] of cases) {
      const context = await browser.newContext();
      const page = await context.newPage();
      await page.goto(pageUrl(base, hubUrl));
      await confirmDownload(page);
      await expect.poll(() => status(page), { timeout: 120_000 }).toMatch(/^failed/);
      const messages = await bannerMessages(page);
      expect(
        messages.some((m) => expected.test(m)),
        messages.join(' | '),
      ).toBe(true);
      await context.close();
    }
    // Refused from config.json alone: the large base's weights were never asked for.
    expect(served.get(`${HUGE}/model.safetensors`)).toBeUndefined();
  });
});
