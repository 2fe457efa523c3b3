import type { Browser } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { launchBrowser, openLab } from './browser';

describe('sandbox playground', () => {
  let browser: Browser;
  beforeAll(async () => {
    browser = await launchBrowser();
  });
  afterAll(async () => {
    await browser?.close();
  });

  it('runs the example and shows per-test verdicts, cost and memory', async () => {
    const { page, errors } = await openLab(browser, '#playground');
    await page.getByRole('button', { name: 'Run' }).click();
    await expect.poll(() => page.getByTestId('verdict').count(), { timeout: 30_000 }).toBe(4);
    expect(await page.getByTestId('summary').textContent()).toContain('4 / 4 tests passed');
    const verdicts = await page.getByTestId('verdict').locator('td:nth-child(2)').allTextContents();
    expect(verdicts).toEqual(['pass', 'pass', 'pass', 'pass']);
    const cost = await page.getByTestId('cost').textContent();
    expect(cost).toMatch(/work\s*[\d,]+/);
    expect(cost).toMatch(/peak memory\s*[\d.]+ (B|KB|MB)/);
    expect(errors).toEqual([]);
    await page.close();
  });

  it('re-judges an edited program: a wrong answer and an infinite loop', async () => {
    const { page, errors } = await openLab(browser, '#playground');
    const editor = page.getByTestId('editor-code');
    await editor.click();
    await page.keyboard.press('Control+A');
    await page.keyboard.insertText('function sumEvenSquares(xs) { return xs.length; }');
    await page.getByRole('button', { name: 'Run' }).click();
    await expect
      .poll(() => page.getByTestId('summary').textContent(), { timeout: 30_000 })
      .toContain('1 / 4 tests passed');
    const verdicts = await page.getByTestId('verdict').locator('td:nth-child(2)').allTextContents();
    expect(verdicts).toEqual(['wrong', 'pass', 'wrong', 'wrong']);

    await editor.click();
    await page.keyboard.press('Control+A');
    await page.keyboard.insertText('function sumEvenSquares(xs) { while (true) {} }');
    await page.getByRole('button', { name: 'Run' }).click();
    await expect
      .poll(() => page.getByTestId('summary').textContent(), { timeout: 30_000 })
      .toContain('0 / 4 tests passed');
    const loopVerdicts = await page
      .getByTestId('verdict')
      .locator('td:nth-child(2)')
      .allTextContents();
    expect(loopVerdicts[0]).toMatch(/timeout|watchdog_killed/);
    expect(errors).toEqual([]);
    await page.close();
  });
});
