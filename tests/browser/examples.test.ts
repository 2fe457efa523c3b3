// The examples task set on the page (issue 30): a link with taskset=examples and sees=plan
// starts from the examples warm start; after a step the inspector and the explainer list the
// task's input/output examples (its statement names no step), and after the evaluation the
// "Does the Planner help?" chart draws the four pass@1 values.
import type { Browser } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { launchBrowser, openLab, stepCount, unexpectedBannerMessages, waitIdle } from './browser';

let browser: Browser;
beforeAll(async () => {
  browser = await launchBrowser();
});
afterAll(async () => {
  await browser?.close();
});

describe('the examples task set on the page', () => {
  it('shows the examples in the inspector and the explainer, and the four-value chart', async () => {
    const { page, errors } = await openLab(
      browser,
      '?tasks=1&n=2&m=2&eval=1&seed=3&taskset=examples&sees=plan',
    );
    await waitIdle(page);
    await expect
      .poll(() => page.getByLabel('Task set', { exact: true }).inputValue())
      .toBe('examples');
    await expect
      .poll(() => page.getByLabel('Coder sees', { exact: true }).inputValue())
      .toBe('plan');
    await page.getByRole('button', { name: 'Step' }).click();
    await expect.poll(() => stepCount(page), { timeout: 300_000 }).toBe(1);
    await waitIdle(page, 300_000);
    const examples = page.locator('.statement').getByTestId('task-examples');
    await expect.poll(() => examples.locator('li').count(), { timeout: 30_000 }).toBeGreaterThan(2);
    expect(await examples.locator('li').first().textContent()).toMatch(/^solve\(\[.*\]\) = /);
    expect(await page.locator('.statement').textContent()).toMatch(
      /solve\(a\) takes a list of numbers and returns/,
    );
    await page.getByTestId('sample-cell').first().click();
    const explained = page.locator('.explainer-task').getByTestId('task-examples');
    await expect
      .poll(() => explained.locator('li').count(), { timeout: 30_000 })
      .toBeGreaterThan(2);
    const chart = page.getByTestId('chart-collaboration');
    await expect.poll(() => chart.count(), { timeout: 60_000 }).toBe(1);
    expect(await chart.locator('.chart-caption').textContent()).toMatch(/another task’s plan/);
    expect(Number(await chart.getAttribute('data-points'))).toBeGreaterThanOrEqual(1);
    expect(await unexpectedBannerMessages(page)).toEqual([]);
    expect(errors).toEqual([]);
    await page.close();
  }, 600_000);
});
