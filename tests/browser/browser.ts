import { type Browser, chromium, type Page } from 'playwright-core';
import { inject } from 'vitest';

const chromiumPath = process.env.CHROMIUM_PATH ?? '/usr/bin/chromium';

/** Debian's Chromium, headless, with WebGPU enabled (SwiftShader on GPU-less machines). */
export function launchBrowser(): Promise<Browser> {
  return chromium.launch({
    executablePath: chromiumPath,
    args: [
      '--no-sandbox',
      '--enable-unsafe-webgpu',
      '--disable-background-networking',
      '--disable-component-update',
      '--disable-sync',
      '--no-first-run',
      '--disable-quic',
    ],
  });
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
