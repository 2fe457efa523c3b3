// Issue 13's runs on the built page: importing a run already here asks (replace / keep
// both), delete asks to confirm, deleting the active run leaves no empty run behind,
// links with new settings do not pile up empty runs, names are distinct, and the metrics
// CSV has one `step` column.
import { readFileSync } from 'node:fs';
import { unzipSync } from 'fflate';
import type { Browser, Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import { launchBrowser, SMALL, stepCount, unexpectedBannerMessages, waitIdle } from './browser';

const runNames = (page: Page) =>
  page.getByTestId('run-row').locator('.runs-name').allTextContents();
const activeName = (page: Page) =>
  page.locator('[data-testid="run-row"] .runs-name[aria-pressed="true"]').textContent();

describe('runs', () => {
  let browser: Browser;
  beforeAll(async () => {
    browser = await launchBrowser();
  });
  afterAll(async () => {
    await browser?.close();
  });

  it('asks before an import replaces a run, confirms deletes, and keeps names distinct', async () => {
    const context = await browser.newContext({
      acceptDownloads: true,
      viewport: { width: 1400, height: 900 },
    });
    const page = await context.newPage();
    const errors: string[] = [];
    page.on('pageerror', (error) => errors.push(error.message));
    await page.goto(`${inject('baseUrl')}${SMALL}`);
    await waitIdle(page);
    await page.getByRole('button', { name: 'Step', exact: true }).click();
    await expect.poll(() => stepCount(page), { timeout: 120_000 }).toBe(1);
    await waitIdle(page);

    const [download] = await Promise.all([
      page.waitForEvent('download'),
      page.getByRole('button', { name: 'Export run' }).click(),
    ]);
    const path = await download.path();
    // The metrics CSV: one `step` column, first.
    const files = unzipSync(new Uint8Array(readFileSync(path)));
    const header = new TextDecoder().decode(files['metrics.csv']).split('\n')[0]?.split(',') ?? [];
    expect(header[0]).toBe('step');
    expect(header.filter((name) => name === 'step')).toHaveLength(1);

    // The same run again: the page asks, and changes nothing until answered.
    const [original] = await runNames(page);
    await page.getByTestId('import-input').setInputFiles(path);
    const dialog = page.getByRole('dialog');
    await expect.poll(() => dialog.count()).toBe(1);
    expect(await dialog.textContent()).toContain('is already in this browser');
    await dialog.getByRole('button', { name: 'Cancel' }).click();
    expect(await runNames(page)).toEqual([original]);

    // Keep both: a second run, with a name of its own, made active.
    await page.getByTestId('import-input').setInputFiles(path);
    await dialog.getByRole('button', { name: 'Keep both' }).click();
    await expect.poll(() => runNames(page)).toHaveLength(2);
    await waitIdle(page);
    const names = await runNames(page);
    expect(new Set(names).size).toBe(2);
    expect(names[1]).toBe(`${original} (2)`);
    expect(await activeName(page)).toContain(`${original} (2)`);
    expect(await stepCount(page)).toBe(1);

    // Replace: still two runs.
    await page.getByTestId('import-input').setInputFiles(path);
    await dialog.getByRole('button', { name: 'Replace it' }).click();
    await waitIdle(page);
    await expect.poll(() => runNames(page)).toHaveLength(2);

    // Delete asks first; "Keep" keeps it.
    const rows = page.getByTestId('run-row');
    await rows.nth(1).getByRole('button', { name: 'delete' }).click();
    expect(await rows.count()).toBe(2);
    await rows.nth(1).getByRole('button', { name: 'Keep' }).click();
    expect(await rows.count()).toBe(2);
    // Deleting the active run moves to the one left, with no new empty run.
    await page.locator('.runs-name[aria-pressed="true"]').click(); // already active: no-op
    const active = await activeName(page);
    const activeRow = rows.filter({ has: page.locator('.runs-name[aria-pressed="true"]') });
    await activeRow.getByRole('button', { name: 'delete' }).click();
    await activeRow.getByRole('button', { name: 'Yes, delete' }).click();
    await expect.poll(() => runNames(page)).toHaveLength(1);
    await waitIdle(page);
    expect(await activeName(page)).not.toBe(active);
    expect(await stepCount(page)).toBe(1);
    expect(errors).toEqual([]);
    expect(await unexpectedBannerMessages(page)).toEqual([]);
    await context.close();
  });

  it('opens links with new settings without piling up empty runs (the defaults first)', async () => {
    const context = await browser.newContext({ viewport: { width: 1400, height: 900 } });
    const page = await context.newPage();
    const errors: string[] = [];
    page.on('pageerror', (error) => errors.push(error.message));
    // The page on its defaults: one empty run.
    await page.goto(`${inject('baseUrl')}`);
    await waitIdle(page, 180_000);
    expect(await runNames(page)).toHaveLength(1);
    // A link with other settings replaces the empty run rather than adding to it.
    await page.goto(`${inject('baseUrl')}${SMALL}`);
    await waitIdle(page);
    expect(await runNames(page)).toHaveLength(1);
    await page.getByRole('button', { name: 'Step', exact: true }).click();
    await expect.poll(() => stepCount(page), { timeout: 120_000 }).toBe(1);
    await waitIdle(page);
    // A run with a step is kept; a new link adds one run, a second new link replaces it.
    await page.goto(`${inject('baseUrl')}${SMALL}&beta=0.1`);
    await waitIdle(page);
    expect(await runNames(page)).toHaveLength(2);
    await page.goto(`${inject('baseUrl')}${SMALL}&beta=0.2`);
    await waitIdle(page);
    expect(await runNames(page)).toHaveLength(2);
    // Reopening the first link resumes its run at step 1.
    await page.goto(`${inject('baseUrl')}${SMALL}`);
    await waitIdle(page);
    expect(await runNames(page)).toHaveLength(2);
    expect(await stepCount(page)).toBe(1);
    // Reset on a run with steps adds a run; Reset again on that empty one replaces it.
    await page.getByRole('button', { name: 'Reset' }).click();
    await expect.poll(() => runNames(page)).toHaveLength(3);
    await expect.poll(() => stepCount(page)).toBe(0);
    await waitIdle(page);
    const reset = await activeName(page);
    await page.getByRole('button', { name: 'Reset' }).click();
    // The empty run's place and name go to the new one.
    await page.waitForTimeout(500);
    await waitIdle(page);
    const names = await runNames(page);
    expect(names).toHaveLength(3);
    expect(await activeName(page)).toBe(reset);
    expect(new Set(names).size).toBe(3);
    expect(errors).toEqual([]);
    expect(await unexpectedBannerMessages(page)).toEqual([]);
    await context.close();
  });
});
