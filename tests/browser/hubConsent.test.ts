// A link cannot make the page download a model silently, and a hostile checkpoint served by a hub
// is refused in the page as in the CLI (issue 34). A real HTTP server on 127.0.0.1 in the Hub's
// layout serves a loadable random Qwen2 and hostile variants (tests/unit/hostile-checkpoints.ts).
// - A link with a foreign hub= shows the hub's host and the model and waits: no request reaches
//   the hub until the click; then the base downloads and the run starts.
// - With the default hub and a model already in Cache Storage, the link starts without asking.
// - Hostile files (and a hub that answers with HTML): one line in the banner naming the file,
//   within the bound; the page keeps its previous run (switched back to, at its step) and
//   nothing of the refused model stays cached.
import { mkdtempSync, readdirSync, readFileSync, rmSync } from 'node:fs';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { Browser, Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import { HOSTILE_CASES, writeGoodCheckpoint } from '../unit/hostile-checkpoints';
import {
  bannerMessages,
  confirmDownload,
  launchBrowser,
  SMALL,
  status,
  stepCount,
  waitIdle,
} from './browser';

/** One task, 2 plans × 2 programs, no evaluation, on wasm: a LoRA rank 4 over the base. */
const RUN = 'lora=4&backend=wasm&tasks=1&n=2&m=2&eval=0&seed=3';
const GOOD = 'lab-test/good-qwen2';
const HOSTILE = [
  ...[
    'config.json: a million layers',
    'safetensors: overlapping tensors',
    'tokenizer.json: ids offset by 10^9',
    'chat template: a loop of 10^10 steps',
  ].map((name) => HOSTILE_CASES.find((c) => c.name === name)!),
  // A server fault: the weights answered with a sign-in page (see the server below).
  {
    name: 'server: a 200 that serves HTML instead of the file',
    spoil: () => undefined,
    expected: /model\.safetensors with an HTML page, not the file/,
  },
];
const HTML_REPO = `lab-test/hostile-${HOSTILE.length - 1}`;
const repoOf = (index: number) => `lab-test/hostile-${index}`;

let root: string;
let server: Server;
let hub: string;
/** Every request the hub saw, as `{repo}/{file}`. */
const served: string[] = [];

beforeAll(async () => {
  root = mkdtempSync(join(tmpdir(), 'hub-consent-'));
  writeGoodCheckpoint(join(root, GOOD));
  HOSTILE.forEach((c, i) => {
    writeGoodCheckpoint(join(root, repoOf(i)));
    c.spoil(join(root, repoOf(i)));
  });
  server = createServer((req, res) => {
    res.setHeader('access-control-allow-origin', '*');
    const match = /^\/([^/]+\/[^/]+)\/resolve\/main\/([^/?]+)$/.exec(req.url ?? '');
    if (!match) {
      res.writeHead(404).end();
      return;
    }
    const [, repo, file] = match as unknown as [string, string, string];
    served.push(`${repo}/${file}`);
    if (repo === HTML_REPO && file === 'model.safetensors') {
      res.writeHead(200, { 'content-type': 'text/html' }).end('<html>Sign in</html>');
      return;
    }
    try {
      const bytes = readFileSync(join(root, repo, file));
      res.writeHead(200, { 'content-length': bytes.length }).end(bytes);
    } catch {
      res.writeHead(404).end('Entry not found');
    }
  });
  await new Promise<void>((done) => server.listen(0, '127.0.0.1', done));
  hub = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
});

afterAll(async () => {
  await new Promise((done) => server?.close(done));
  rmSync(root, { recursive: true, force: true });
});

const link = (base: string, hubUrl?: string) =>
  `${inject('baseUrl')}?base=${encodeURIComponent(base)}${hubUrl ? `&hub=${encodeURIComponent(hubUrl)}` : ''}&${RUN}`;

/** The URLs the page's hub cache holds. */
const cachedUrls = (page: Page) =>
  page.evaluate(async () =>
    (await (await caches.open('core-code-lab-hub')).keys()).map((request) => request.url),
  );

describe('links that name a base', () => {
  let browser: Browser;
  beforeAll(async () => {
    browser = await launchBrowser();
  });
  afterAll(async () => {
    await browser?.close();
  });

  it('a foreign hub= waits for the click: no request reaches the hub before it', async () => {
    const context = await browser.newContext({ viewport: { width: 1400, height: 900 } });
    const page = await context.newPage();
    served.length = 0;
    await page.goto(link(GOOD, hub));
    const consent = page.getByTestId('download-consent');
    await consent.waitFor({ timeout: 60_000 });
    const text = (await consent.textContent()) ?? '';
    expect(text).toContain(GOOD);
    expect(text).toContain(new URL(hub).host);
    // Time for anything that would have started on its own.
    await page.waitForTimeout(2000);
    expect(served).toEqual([]);
    await page.getByRole('button', { name: 'Download and run' }).click();
    await waitIdle(page, 240_000);
    expect(await page.getByTestId('base-model').textContent()).toContain(GOOD);
    expect(served).toContain(`${GOOD}/model.safetensors`);
    expect(await bannerMessages(page)).toEqual([]);
    await context.close();
  });

  it('the default hub with the model in Cache Storage starts without asking', async () => {
    const context = await browser.newContext({ viewport: { width: 1400, height: 900 } });
    const page = await context.newPage();
    await page.goto(inject('baseUrl'));
    await waitIdle(page, 240_000);
    // The Hub's own files, put where the page keeps them (nothing here can reach the Hub).
    const dir = join(root, GOOD);
    const files = readdirSync(dir).map((file) => [
      `${GOOD}/main/${file}`,
      readFileSync(join(dir, file)).toString('base64'),
    ]);
    files.push([`${GOOD}/main/model.safetensors.index.json.absent`, '']);
    await page.evaluate(async (entries) => {
      const cache = await caches.open('core-code-lab-hub');
      for (const [key, base64] of entries) {
        const bytes = Uint8Array.from(atob(base64!), (c) => c.charCodeAt(0));
        await cache.put(`https://hub-cache.invalid/${key}`, new Response(bytes));
      }
    }, files);
    await page.goto(link(GOOD));
    await waitIdle(page, 240_000);
    expect(await page.getByTestId('download-consent').count()).toBe(0);
    expect(await page.getByTestId('base-model').textContent()).toContain(GOOD);
    expect(await bannerMessages(page)).toEqual([]);
    await context.close();
  });

  it('hostile files are refused in one line each; the previous run stays, nothing bad is cached', async () => {
    const context = await browser.newContext({ viewport: { width: 1400, height: 900 } });
    const page = await context.newPage();
    const errors: string[] = [];
    page.on('pageerror', (error) => errors.push(error.message));
    // The previous run: the lab's tiny models on a small step (the defaults' own steps are
    // defaults.test.ts'), one step taken.
    await page.goto(`${inject('baseUrl')}${SMALL}`);
    await waitIdle(page, 240_000);
    await page.getByRole('button', { name: 'Step' }).click();
    await expect.poll(() => stepCount(page), { timeout: 240_000 }).toBe(1);
    await waitIdle(page);
    for (const [i, c] of HOSTILE.entries()) {
      await page.goto(link(repoOf(i), hub));
      await confirmDownload(page);
      const started = Date.now();
      await expect.poll(() => status(page), { timeout: 60_000 }).toMatch(/^failed/);
      const seconds = (Date.now() - started) / 1000;
      const messages = await bannerMessages(page);
      console.log(`page · ${c.name}: refused in ${seconds.toFixed(1)} s`);
      expect(
        messages.some((m) => c.expected.test(m) && !m.includes('\n')),
        messages.join(' | '),
      ).toBe(true);
      expect(seconds).toBeLessThan(10);
      // A refused file is never kept; a failed transfer keeps the files that arrived whole.
      const kept = (await cachedUrls(page)).filter((url) => url.includes(repoOf(i)));
      expect(kept.filter((url) => repoOf(i) !== HTML_REPO || url.endsWith('.safetensors'))).toEqual(
        [],
      );
    }
    // The previous run is still there, and the page (its Worker) runs it.
    await page.getByTestId('run-row').first().locator('.runs-name').click();
    await waitIdle(page, 240_000);
    expect(await stepCount(page)).toBe(1);
    expect(errors).toEqual([]);
    await context.close();
  });
});
