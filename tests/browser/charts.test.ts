import type { Browser } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { launchBrowser, openLab } from './browser';

// The chart benchmark page in its small modes: a LineChart must draw a canvas, report the
// points it holds, and take appended points through setData without being rebuilt.
describe('line chart (chart-bench.html)', () => {
  let browser: Browser;
  beforeAll(async () => {
    browser = await launchBrowser();
  });
  afterAll(async () => {
    await browser?.close();
  });

  it('renders a canvas and reports its 500 points', async () => {
    const { page, errors } = await openLab(browser, 'chart-bench.html?points=500&frames=0');
    const chart = page.getByTestId('chart-bench');
    await expect.poll(() => chart.getAttribute('data-points'), { timeout: 30_000 }).toBe('500');
    expect(await chart.locator('canvas').count()).toBe(1);
    const size = await chart
      .locator('canvas')
      .evaluate((c: HTMLCanvasElement) => [c.width, c.height]);
    expect(size[0]).toBeGreaterThan(100);
    expect(size[1]).toBeGreaterThan(100);
    // Something was drawn: the plot area is not all one colour.
    const colours = await chart.locator('canvas').evaluate((c: HTMLCanvasElement) => {
      const ctx = c.getContext('2d');
      if (!ctx) return 0;
      const pixels = ctx.getImageData(0, 0, c.width, c.height).data;
      const seen = new Set<number>();
      for (let i = 0; i < pixels.length; i += 4 * 97) {
        seen.add((pixels[i]! << 16) | (pixels[i + 1]! << 8) | pixels[i + 2]!);
      }
      return seen.size;
    });
    expect(colours).toBeGreaterThan(3);
    const readout = chart.locator('.chart-readout');
    expect(await readout.textContent()).toContain('step 500');
    // Hover: the readout follows the cursor.
    const box = await chart.locator('.u-over').boundingBox();
    if (!box) throw new Error('no plot area');
    await page.mouse.move(box.x + box.width * 0.25, box.y + box.height / 2);
    await expect.poll(() => readout.textContent()).not.toContain('step 500');
    // Resize: the canvas follows its container.
    await page.locator('main').evaluate((main: HTMLElement) => {
      main.style.width = '500px';
    });
    await expect
      .poll(() => chart.locator('canvas').evaluate((c: HTMLCanvasElement) => c.width))
      .toBeLessThan(size[0] as number);
    expect(errors).toEqual([]);
    await page.close();
  });

  it('appends points frame by frame into the same canvas (setData, not a new chart)', async () => {
    const { page, errors } = await openLab(browser, 'chart-bench.html?points=300&frames=20');
    const chart = page.getByTestId('chart-bench');
    await expect.poll(() => chart.getAttribute('data-points'), { timeout: 30_000 }).not.toBeNull();
    const canvas = await chart.locator('canvas').elementHandle();
    await page.waitForFunction(() => window.__chartBench !== undefined, null, { timeout: 60_000 });
    expect(await chart.getAttribute('data-points')).toBe('320');
    expect(await canvas?.evaluate((c) => c.isConnected)).toBe(true);
    expect(await chart.locator('canvas').count()).toBe(1);
    const result = await page.evaluate(() => window.__chartBench);
    expect(result?.frames).toBe(20);
    expect(result?.framesPerSecond).toBeGreaterThan(0);
    expect(errors).toEqual([]);
    await page.close();
  });

  it('demo lab: charts hold the steps, the table shows differing config, the explainer typesets', async () => {
    const { page, errors } = await openLab(browser, 'chart-bench.html?demo=lab&steps=40');
    const points = (name: string) => page.getByTestId(`chart-${name}`).getAttribute('data-points');
    await expect.poll(() => points('coder-reward'), { timeout: 30_000 }).toBe('40');
    expect(await points('entropy')).toBe('40');
    expect(await points('kl')).toBe('40');
    expect(await points('step-time')).toBe('40');
    expect(await points('pass-at-1')).toBe('4'); // eval every 10 steps
    // The learning chart and the Planner's spread come from metrics the demo runs lack.
    expect(await points('learning')).toBe('0');
    expect(await page.locator('.chart canvas').count()).toBe(11);

    // Controls write the store: log scale rebuilds the positive-valued charts, smoothing
    // changes the values shown but not the points held.
    const klReadout = page.getByTestId('chart-kl').locator('.chart-readout');
    const rawKl = await klReadout.textContent();
    await page.getByTestId('charts-log-scale').check();
    await page.getByTestId('charts-smoothing').fill('0.9');
    await expect.poll(() => klReadout.textContent()).not.toBe(rawKl);
    expect(await points('kl')).toBe('40');

    expect(await page.getByTestId('run-row').count()).toBe(2);
    const headers = await page.locator('.runs-table th.runs-diff').allTextContents();
    expect(headers).toEqual(['beta']);

    // The explainer typesets once it is seen (or skipped off screen): scrolled to, as a reader would.
    const explainer = page.getByTestId('explainer');
    await explainer.scrollIntoViewIfNeeded();
    await expect.poll(() => explainer.locator('.katex').count()).toBeGreaterThan(5);
    expect(await page.getByTestId('explainer-coder').textContent()).toContain('programs');
    await explainer.getByLabel('Presentation').check();
    await expect.poll(() => explainer.getAttribute('class')).toContain('presentation');

    // Hiding both runs empties the charts.
    for (const box of await page.locator('.runs-table input[type=checkbox]').all())
      await box.uncheck();
    await expect.poll(() => points('coder-reward')).toBe('0');
    expect(errors).toEqual([]);
    await page.close();
  });
});
