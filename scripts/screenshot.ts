// `npm run screenshot`: docs/screenshot.png (1440 px) and docs/screenshot-1024.png, the lab
// mid-training on its defaults, and docs/screenshot-presentation.png, the explainer in
// presentation mode on a group with signal.
// Needs a build (`npm run build`) and Debian's Chromium.

import { preview } from 'vite';
import { launchChromium } from '../src/cli/chromium';

const server = await preview({ preview: { port: 0, host: '127.0.0.1' } });
const address = server.httpServer.address();
if (!address || typeof address === 'string') throw new Error('preview server has no port');
const browser = await launchChromium();
// The page a newcomer gets (no query string), mid-training, at a laptop and a narrow width.
for (const [width, file] of [
  [1440, 'docs/screenshot.png'],
  [1024, 'docs/screenshot-1024.png'],
] as const) {
  const page = await browser.newPage({ viewport: { width, height: 1500 } });
  await page.goto(`http://127.0.0.1:${address.port}/`);
  const status = () => page.getByTestId('engine-status').textContent();
  while (!(await status())?.startsWith('idle')) await page.waitForTimeout(250);
  await page.getByRole('button', { name: 'Train' }).click();
  while (Number(await page.getByTestId('step-count').textContent()) < 6)
    await page.waitForTimeout(500);
  await page.getByTestId('sample-cell').nth(2).click();
  await page.waitForTimeout(800);
  // Clicking the cell scrolls the inspector into view: the picture starts at the top.
  await page.evaluate(() => window.scrollTo(0, 0));
  await page.waitForTimeout(200);
  await page.screenshot({ path: file, fullPage: false });
  if (width === 1440) {
    // The same page as a class sees it: presentation mode, on a group whose rewards differ.
    await page.getByRole('button', { name: 'Pause' }).click();
    while (!(await status())?.startsWith('idle')) await page.waitForTimeout(250);
    await page.getByRole('checkbox', { name: 'Presentation' }).check();
    const nextSignal = page.getByRole('button', { name: 'Next group with signal' });
    if (await nextSignal.isEnabled()) await nextSignal.click();
    await page.waitForTimeout(800);
    await page.screenshot({ path: 'docs/screenshot-presentation.png', fullPage: true });
    console.log('wrote docs/screenshot-presentation.png');
    await page.getByRole('checkbox', { name: 'Presentation' }).uncheck();
  } else {
    await page.getByRole('button', { name: 'Pause' }).click();
  }
  await page.close();
  console.log(`wrote ${file}`);
}
await browser.close();
await server.close();
process.exit(0);
