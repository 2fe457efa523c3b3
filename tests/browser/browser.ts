import type { Browser, Page } from 'playwright-core';
import { inject } from 'vitest';
import { launchChromium } from '../../src/cli/chromium';

/** Debian's Chromium, headless, with WebGPU enabled (SwiftShader on GPU-less machines). */
export const launchBrowser = launchChromium;

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
