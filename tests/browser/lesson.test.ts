// The classroom lesson "When does a plan help?" (issue 30) on the built page. Opened by its
// link, it starts run 1, CoRe on the examples task set: after a step the inspector and the
// explainer list the task's input/output examples (its statement names no step), and after
// the evaluation the "Does the Planner help?" chart draws the four pass@1 values. Run 2,
// self-plan, starts from the lesson's button with as many programs per task (N·M), shows each
// sequence's own plan, and the first run stays in the runs table, overlaid; a reload stays on
// run 2 with the lesson open.
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

describe('the lesson "When does a plan help?"', () => {
  it('opens CoRe on the examples world, then self-plan beside it', async () => {
    const { page, errors } = await openLab(
      browser,
      '?lesson=plan-help&tasks=1&n=2&m=2&eval=1&evaltasks=2&seed=3',
    );
    await waitIdle(page);
    const lesson = page.getByTestId('lesson');
    await expect.poll(() => lesson.count()).toBe(1);
    expect(await lesson.textContent()).toMatch(/When does a plan help\?.*steps are hidden/);
    expect(await page.getByTestId('lesson-run').count()).toBe(4);
    await expect
      .poll(() => page.getByLabel('Task set', { exact: true }).inputValue())
      .toBe('examples');
    expect(await page.getByLabel('Mode', { exact: true }).inputValue()).toBe('core');
    expect(await page.getByLabel('Lesson', { exact: true }).inputValue()).toBe('plan-help');

    await page.getByRole('button', { name: 'Step', exact: true }).click();
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

    // Run 2: self-plan, N = 1 and M = N·M = 4, from its own warm start.
    await page.getByRole('button', { name: /2: self-plan · examples/ }).click();
    await waitIdle(page, 300_000);
    await expect
      .poll(() => page.getByLabel('Mode', { exact: true }).inputValue())
      .toBe('self-plan');
    expect(await page.getByLabel('M programs per plan', { exact: true }).inputValue()).toBe('4');
    await page.getByRole('button', { name: 'Step', exact: true }).click();
    await expect.poll(() => stepCount(page), { timeout: 300_000 }).toBe(1);
    await waitIdle(page, 300_000);
    await page.getByTestId('sample-cell').first().click();
    await expect
      .poll(() => page.getByTestId('sample-plan').textContent(), { timeout: 30_000 })
      .toMatch(/its own plan/);
    const rows = page.getByTestId('runs-table').locator('tbody tr');
    await expect.poll(() => rows.count()).toBe(2);
    expect(await page.getByTestId('runs-table').textContent()).toMatch(
      /CoRe · examples · seed 3.*self-plan · examples · seed 3/s,
    );
    expect(new URL(page.url()).searchParams.get('lesson')).toBe('plan-help');
    // A reload stays on the lesson's run it was on, with the lesson open.
    await page.reload();
    await waitIdle(page, 300_000);
    await expect
      .poll(() => page.getByLabel('Mode', { exact: true }).inputValue())
      .toBe('self-plan');
    expect(await page.getByTestId('lesson').count()).toBe(1);
    expect(await stepCount(page)).toBe(1);
    expect(await rows.count()).toBe(2);
    expect(await unexpectedBannerMessages(page)).toEqual([]);
    expect(errors).toEqual([]);
    await page.close();
  }, 600_000);
});
