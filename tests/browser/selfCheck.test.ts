// The lab's kernels check themselves on the page's adapter (SwiftShader in headless Chromium)
// before they take the run: the backend line says "checking the GPU kernels…" meanwhile, then
// that they were verified there and how many checks ran; "Copy GPU report" copies the report.
import type { Browser } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import { backendLine, copyGpuReport, launchBrowser, waitIdle } from './browser';

let browser: Browser;
beforeAll(async () => {
  browser = await launchBrowser();
});
afterAll(async () => {
  await browser?.close();
});

describe('the kernels’ self-check on the page', () => {
  it('the backend line reports the self-check; the GPU report is copied', async () => {
    const context = await browser.newContext({
      permissions: ['clipboard-read', 'clipboard-write'],
      viewport: { width: 1400, height: 900 },
    });
    const page = await context.newPage();
    const errors: string[] = [];
    page.on('pageerror', (error) => errors.push(error.message));
    const line = () => backendLine(page);
    const seen: string[] = [];
    await page.goto(`${inject('baseUrl')}?tasks=1&n=2&m=2&eval=0&seed=3&backend=kernels`);
    await expect
      .poll(
        async () => {
          const text = await line();
          seen.push(text);
          return text;
        },
        { timeout: 150_000, interval: 100 },
      )
      .toMatch(/^kernels · verified on .*swiftshader.* \(\d+ checks\)/i);
    // The check takes seconds on SwiftShader: the line said so while it ran.
    expect(seen.some((t) => t.startsWith('checking the GPU kernels…'))).toBe(true);
    const checks = Number((await line()).match(/\((\d+) checks\)/)?.[1]);
    expect(checks).toBeGreaterThanOrEqual(10);
    await waitIdle(page);
    const copied = await copyGpuReport(page);
    expect(copied).toMatch(/^## GPU report/);
    expect(copied).toMatch(/\| matmul\/v1_regblock \| start \| ok \|/);
    expect(copied).toMatch(/maxStorageBufferBindingSize/);
    expect(errors).toEqual([]);
    await context.close();
  });
});
