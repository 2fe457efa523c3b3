// `npm run screenshot`: docs/screenshot.png, the lab mid-training on its defaults.
// Needs a build (`npm run build`) and Debian's Chromium.

import { preview } from 'vite';
import { launchChromium } from '../src/cli/chromium';

const server = await preview({ preview: { port: 0, host: '127.0.0.1' } });
const address = server.httpServer.address();
if (!address || typeof address === 'string') throw new Error('preview server has no port');
const browser = await launchChromium();
const page = await browser.newPage({ viewport: { width: 1440, height: 1500 } });
await page.goto(`http://127.0.0.1:${address.port}/?tasks=2&eval=2&evaltasks=4`);
const status = () => page.getByTestId('engine-status').textContent();
while (!(await status())?.startsWith('idle')) await page.waitForTimeout(250);
await page.getByRole('button', { name: 'Train' }).click();
while (Number(await page.getByTestId('step-count').textContent()) < 6)
  await page.waitForTimeout(500);
await page.getByTestId('sample-cell').nth(2).click();
await page.waitForTimeout(800);
await page.screenshot({ path: 'docs/screenshot.png', fullPage: false });
await page.getByRole('button', { name: 'Pause' }).click();
await browser.close();
await server.close();
console.log('wrote docs/screenshot.png');
process.exit(0);
