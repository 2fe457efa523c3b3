import type { Browser, Page } from 'playwright-core';
import { expect, inject } from 'vitest';
import { launchChromium } from '../../src/cli/chromium';

/** One task, 2 plans × 2 programs per step, no periodic evaluation: a few seconds a step on wasm. */
export const SMALL = '?tasks=1&n=2&m=2&eval=0&seed=3';

/** The step counter and the engine status line, as the page shows them. */
export const stepCount = async (page: Page) =>
  Number(await page.getByTestId('step-count').textContent());
export const status = async (page: Page) =>
  (await page.getByTestId('engine-status').textContent()) ?? '';

/** The backend line (what runs, on which adapter, and the kernels' self-check). */
export const backendLine = async (page: Page) =>
  (await page.getByTestId('backend').textContent()) ?? '';

/** Clicks "Copy GPU report" and returns what reached the clipboard (the context needs its permissions). */
export async function copyGpuReport(page: Page): Promise<string> {
  await page.getByRole('button', { name: 'Copy GPU report' }).click();
  await expect.poll(() => page.getByText('GPU report copied').count()).toBe(1);
  return page.evaluate(() => navigator.clipboard.readText());
}

/** Until the engine says idle (a finished step is saved by then) and the screen shows it. */
export async function waitIdle(page: Page, timeout = 120_000) {
  await expect.poll(() => status(page), { timeout, interval: 250 }).toMatch(/^idle/);
  await caughtUp(page);
}

/** Debian's Chromium, headless, with WebGPU enabled (SwiftShader on GPU-less machines). */
export const launchBrowser = launchChromium;

/** Waits until the inspector and the explainer show the live selection: both render it
 *  deferred, so right after a click they may still show the previous one. */
export async function caughtUp(page: Page) {
  await expect.poll(() => page.locator('[data-stale="true"]').count(), { timeout: 10_000 }).toBe(0);
}

/** Opens the lab and collects page errors, so a test can assert there were none. */
export async function openLab(
  browser: Browser,
  path = '',
): Promise<{ page: Page; errors: string[] }> {
  const page = await browser.newPage({ viewport: { width: 1400, height: 900 } });
  const errors: string[] = [];
  page.on('pageerror', (error) => errors.push(error.message));
  await page.goto(`${inject('baseUrl')}${path}`);
  return { page, errors };
}

/** The messages in the page's error banner, oldest first (the page keeps the last five). */
export function bannerMessages(page: Page): Promise<string[]> {
  return page.getByTestId('errors').locator('.error-item span').allTextContents();
}

/** The banner's messages that none of `expected` matches: a test's unexplained errors. */
export async function unexpectedBannerMessages(
  page: Page,
  expected: RegExp[] = [],
): Promise<string[]> {
  const messages = await bannerMessages(page);
  return messages.filter((message) => !expected.some((pattern) => pattern.test(message)));
}

/** A link that names a base not in the cache asks first: waits for the question and agrees. */
export async function confirmDownload(page: Page, timeout = 60_000) {
  await page.getByTestId('download-consent').waitFor({ timeout });
  await page.getByRole('button', { name: 'Download and run' }).click();
}

/** Records every text the progress bar shows, in the page itself (a MutationObserver installed
 *  before the page's scripts): a message shown for a few milliseconds (a small file's download)
 *  falls between any two polls. Call before `goto`; the returned function reads the record. */
export async function recordProgress(page: Page): Promise<() => Promise<string[]>> {
  await page.addInitScript(() => {
    const seen: string[] = [];
    (globalThis as unknown as { __progressSeen: string[] }).__progressSeen = seen;
    const note = () => {
      const text = document.querySelector('[data-testid="progress"]')?.textContent;
      if (text && seen[seen.length - 1] !== text) seen.push(text);
    };
    new MutationObserver(note).observe(document, {
      subtree: true,
      childList: true,
      characterData: true,
    });
  });
  return () =>
    page.evaluate(
      () => (globalThis as unknown as { __progressSeen?: string[] }).__progressSeen ?? [],
    );
}
