// The lab page end to end in headless Chromium: train, pause, step, inspect, share, reload,
// export/import, and a responsive main thread. Small batches keep steps quick on a CPU.
import { mkdirSync } from 'node:fs';
import type { Browser, Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  launchBrowser,
  openLab,
  SMALL,
  status,
  stepCount,
  unexpectedBannerMessages,
  waitIdle,
} from './browser';

async function trainSteps(page: Page, steps: number) {
  const start = await stepCount(page);
  await page.getByRole('button', { name: 'Train' }).click();
  await expect
    .poll(() => stepCount(page), { timeout: 240_000, interval: 250 })
    .toBeGreaterThanOrEqual(start + steps);
  await page.getByRole('button', { name: 'Pause' }).click();
  await waitIdle(page);
}

const chartPoints = (page: Page, name: string) =>
  page.getByTestId(`chart-${name}`).getAttribute('data-points').then(Number);

describe('the lab page', () => {
  let browser: Browser;
  beforeAll(async () => {
    browser = await launchBrowser();
  });
  afterAll(async () => {
    await browser?.close();
  });

  it('trains, pauses, steps exactly once, and the charts hold the steps', async () => {
    const { page, errors } = await openLab(browser, SMALL);
    await waitIdle(page);
    expect(await page.getByTestId('backend').textContent()).toMatch(/^(wasm|webgpu|kernels)/);

    // The main thread while the engine trains in its Worker, through the browser's own
    // long-animation-frame entries: the scripts of the page's origin that ran in long frames.
    await page.evaluate(() => {
      const w = window as unknown as { ownScripts: number[]; stepsAt: number[] };
      w.ownScripts = [];
      w.stepsAt = [];
      new PerformanceObserver((list) => {
        for (const frame of list.getEntries() as unknown as {
          scripts: { sourceURL: string; duration: number }[];
        }[]) {
          for (const script of frame.scripts) {
            if (script.sourceURL.startsWith(location.origin)) w.ownScripts.push(script.duration);
          }
        }
      }).observe({ type: 'long-animation-frame' });
      new PerformanceObserver((list) => {
        for (const entry of list.getEntries() as PerformanceMeasure[]) {
          if (entry.detail === 'step') w.stepsAt.push(entry.startTime);
        }
      }).observe({ type: 'measure' });
    });
    const trainStart = Date.now();
    await trainSteps(page, 3);
    const trainingMs = Date.now() - trainStart;
    const afterPause = await stepCount(page);
    expect(afterPause).toBeGreaterThanOrEqual(3);
    const { ownScripts, stepsAt } = await page.evaluate(() => {
      const w = window as unknown as { ownScripts: number[]; stepsAt: number[] };
      return { ownScripts: w.ownScripts, stepsAt: w.stepsAt };
    });
    // No freeze, judged against the steps themselves rather than the clock, so a loaded
    // machine (which slows the Worker's steps and the page's scripts alike) does not fail it:
    // the page's own scripts take a small share of the training time, and none comes near a
    // step's length. A step's work on the main thread would take all of both.
    const gaps = stepsAt.slice(1).map((at, i) => at - (stepsAt[i] ?? at));
    const stepMs = gaps.sort((a, b) => a - b)[Math.floor(gaps.length / 2)] ?? trainingMs;
    const ownMs = ownScripts.reduce((sum, ms) => sum + ms, 0);
    expect(
      ownMs / trainingMs,
      `page scripts ${ownMs.toFixed(0)} ms of ${trainingMs} ms`,
    ).toBeLessThan(0.25);
    expect(Math.max(0, ...ownScripts), `a step every ${stepMs.toFixed(0)} ms`).toBeLessThan(
      stepMs / 2,
    );

    expect(await chartPoints(page, 'coder-reward')).toBe(afterPause);
    expect(await chartPoints(page, 'step-time')).toBe(afterPause);

    // Paused: no more steps arrive.
    await page.waitForTimeout(1500);
    expect(await stepCount(page)).toBe(afterPause);

    await page.getByRole('button', { name: 'Step' }).click();
    await expect.poll(() => stepCount(page), { timeout: 120_000 }).toBe(afterPause + 1);
    await waitIdle(page);
    await page.waitForTimeout(1000);
    expect(await stepCount(page)).toBe(afterPause + 1);
    expect(await chartPoints(page, 'coder-reward')).toBe(afterPause + 1);

    mkdirSync('test-results', { recursive: true });
    await page.screenshot({ path: 'test-results/lab-mid-training.png', fullPage: false });
    expect(errors).toEqual([]);
    expect(await unexpectedBannerMessages(page)).toEqual([]);
    await page.close();
  });

  it('reloads into the same run from IndexedDB and continues it', async () => {
    const context = await browser.newContext({ viewport: { width: 1400, height: 900 } });
    const page = await context.newPage();
    const { baseUrl } = await import('vitest').then((v) => ({ baseUrl: v.inject('baseUrl') }));
    await page.goto(`${baseUrl}${SMALL}`);
    await waitIdle(page);
    await page.getByRole('button', { name: 'Step' }).click();
    await expect.poll(() => stepCount(page), { timeout: 120_000 }).toBe(1);
    await waitIdle(page);
    await page.getByRole('button', { name: 'Step' }).click();
    await expect.poll(() => stepCount(page), { timeout: 120_000 }).toBe(2);
    await waitIdle(page);

    await page.reload();
    await waitIdle(page);
    expect(await stepCount(page)).toBe(2);
    expect(await chartPoints(page, 'coder-reward')).toBe(2);
    await page.getByRole('button', { name: 'Step' }).click();
    await expect.poll(() => stepCount(page), { timeout: 120_000 }).toBe(3);
    expect(await unexpectedBannerMessages(page)).toEqual([]);
    await context.close();
  });

  it('opens a sample in the inspector, runs it, and re-judges an edit', async () => {
    const { page, errors } = await openLab(browser, SMALL);
    await waitIdle(page);
    await page.getByRole('button', { name: 'Step' }).click();
    await expect.poll(() => page.getByTestId('sample-cell').count(), { timeout: 120_000 }).toBe(4);
    await page.getByTestId('sample-cell').nth(1).click();
    await expect(page.getByTestId('sample-detail')).toBeDefined();
    await page.getByRole('button', { name: 'Run in sandbox' }).click();
    await expect
      .poll(() => page.getByTestId('sample-detail').getByTestId('verdict').count(), {
        timeout: 30_000,
      })
      .toBeGreaterThan(0);

    await page.getByRole('button', { name: 'Edit', exact: true }).click();
    const editor = page.getByTestId('editor-sample-code');
    await editor.click();
    await page.keyboard.press('Control+A');
    await page.keyboard.insertText('function solve() { return "edited"; }');
    await page.getByRole('button', { name: 'Run in sandbox' }).click();
    await expect
      .poll(
        () =>
          page
            .getByTestId('sample-detail')
            .getByTestId('verdict')
            .first()
            .locator('td')
            .last()
            .textContent(),
        { timeout: 30_000 },
      )
      .toBe('"edited"');
    expect(errors).toEqual([]);
    expect(await unexpectedBannerMessages(page)).toEqual([]);
    await page.close();
  });

  it('answers "your own task" with judged plans and programs, and names a bad field', async () => {
    const { page, errors } = await openLab(browser, SMALL);
    await waitIdle(page);
    await page.getByRole('button', { name: 'Ask the models' }).click();
    const panel = page.getByRole('region', { name: 'Your own task' });
    await expect.poll(() => panel.getByTestId('sample-cell').count(), { timeout: 120_000 }).toBe(4);
    expect(await panel.locator('.statement').textContent()).toContain('Keep the even numbers');

    const editor = page.getByTestId('editor-own-task');
    await editor.click();
    await page.keyboard.press('Control+A');
    await page.keyboard.insertText('{"tasks": [{"statement": "x", "tests": []}]}');
    await page.getByRole('button', { name: 'Ask the models' }).click();
    await expect
      .poll(() => panel.getByRole('alert').textContent(), { timeout: 30_000 })
      .toMatch(/entryPoint/);
    expect(errors).toEqual([]);
    expect(await unexpectedBannerMessages(page)).toEqual([]);
    await page.close();
  });

  it('trains a warm start from scratch with a progress bar, then steps on it', async () => {
    const { page, errors } = await openLab(browser, SMALL);
    await waitIdle(page);
    await page.getByLabel('Warm start minutes').selectOption('0.25');
    await page.getByRole('button', { name: 'Warm start from scratch' }).click();
    await expect.poll(() => status(page), { timeout: 30_000 }).toMatch(/^warmstart/);
    await expect
      .poll(() => page.getByTestId('progress').textContent(), { timeout: 60_000 })
      .toMatch(/Warm start: (planner|coder) step \d+ · loss [\d.]+.*ETA \d+ s/);
    // Its loss, per role, as it trains.
    await expect
      .poll(() => page.getByTestId('chart-warmstart-planner').getAttribute('data-points'), {
        timeout: 60_000,
      })
      .not.toBe('0');
    await waitIdle(page, 120_000);
    expect(await page.getByTestId('run-row').count()).toBe(2);
    expect(await page.getByTestId('runs-table').textContent()).toContain('warm start from scratch');
    // A loss chart per role and a summary at the end.
    for (const role of ['planner', 'coder']) {
      const chart = page.getByTestId(`chart-warmstart-${role}`);
      expect(Number(await chart.getAttribute('data-points')), role).toBeGreaterThan(0);
      expect(await chart.locator('.chart-title').textContent()).toMatch(/(Planner|Coder) loss/);
    }
    const summary = (await page.getByTestId('warmstart-summary').textContent()) ?? '';
    expect(summary).toMatch(/^Finished after \d+ s\./);
    expect(summary).toMatch(
      /Planner: \d+ steps, [\d,]+ examples, [\d.]+M parameters, loss [\d.]+ → [\d.]+/,
    );
    expect(summary).toMatch(/Coder: \d+ steps/);
    await page.getByRole('button', { name: 'Step' }).click();
    await expect.poll(() => stepCount(page), { timeout: 120_000 }).toBe(1);
    expect(errors).toEqual([]);
    expect(await unexpectedBannerMessages(page)).toEqual([]);
    await page.close();
  });

  it('round-trips the config through the URL', async () => {
    const { page } = await openLab(browser, SMALL);
    await waitIdle(page);
    await page.locator('select[name=mode]').selectOption('single');
    await page.locator('input[name=beta]').fill('0.1');
    await page.locator('select[name=loss]').selectOption('dr_grpo');
    const url = page.url();
    expect(url).toContain('mode=single');
    expect(url).toContain('beta=0.1');
    expect(url).toContain('loss=dr_grpo');
    const second = await browser.newPage();
    await second.goto(url);
    await expect.poll(() => second.locator('select[name=mode]').inputValue()).toBe('single');
    expect(await second.locator('input[name=beta]').inputValue()).toBe('0.1');
    expect(await second.locator('select[name=loss]').inputValue()).toBe('dr_grpo');
    expect(await second.locator('input[name=n]').inputValue()).toBe('2');
    expect(await unexpectedBannerMessages(page)).toEqual([]);
    expect(await unexpectedBannerMessages(second)).toEqual([]);
    await page.close();
    await second.close();
  });

  it('exports a run and imports it back into an identical run view', async () => {
    const source = await browser.newContext({
      acceptDownloads: true,
      viewport: { width: 1400, height: 900 },
    });
    const page = await source.newPage();
    const { inject } = await import('vitest');
    await page.goto(`${inject('baseUrl')}${SMALL}`);
    await waitIdle(page);
    await page.getByRole('button', { name: 'Step' }).click();
    await expect.poll(() => stepCount(page), { timeout: 120_000 }).toBe(1);
    await waitIdle(page);
    const points = await chartPoints(page, 'coder-reward');
    const statement = await page.locator('.statement').textContent();
    const [download] = await Promise.all([
      page.waitForEvent('download'),
      page.getByRole('button', { name: 'Export run' }).click(),
    ]);
    const path = await download.path();

    const target = await browser.newContext({ viewport: { width: 1400, height: 900 } });
    const fresh = await target.newPage();
    await fresh.goto(`${inject('baseUrl')}`);
    await waitIdle(fresh);
    await fresh.getByTestId('import-input').setInputFiles(path);
    await expect.poll(() => stepCount(fresh), { timeout: 60_000 }).toBe(1);
    await waitIdle(fresh);
    expect(await chartPoints(fresh, 'coder-reward')).toBe(points);
    expect(await fresh.locator('.statement').textContent()).toBe(statement);
    expect(await fresh.getByTestId('sample-cell').count()).toBe(4);

    // A file that is not a run export is refused with a message, and the run stays.
    await fresh.getByTestId('import-input').setInputFiles({
      name: 'bad.zip',
      mimeType: 'application/zip',
      buffer: Buffer.from('not a zip'),
    });
    await expect
      .poll(() => fresh.getByTestId('errors').textContent())
      .toMatch(/Import of bad\.zip refused/);
    expect(await stepCount(fresh)).toBe(1);
    expect(await unexpectedBannerMessages(page)).toEqual([]);
    expect(await unexpectedBannerMessages(fresh, [/^Import of bad\.zip refused/])).toEqual([]);
    await source.close();
    await target.close();
  });
});
