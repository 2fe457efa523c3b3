// The engine survives failure: a step that breaks midway (a plain error, or a wasm heap
// wrecked as an out-of-memory leaves it) replaces the engine Worker, restores the run from
// its last saved step and carries on, in the same page, saying what happened; a GPU device
// lost under the lab's kernels hands the run to wasm from its last finished step.
import type { Browser, Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  backendLine,
  launchBrowser,
  openLab,
  stepCount,
  unexpectedBannerMessages,
  waitIdle,
} from './browser';

// Small steps (a few seconds on wasm); `test=1` exposes window.__labTest.
const SMALL_TEST = '?tasks=1&n=2&m=2&eval=0&seed=3&test=1';

const chartPoints = (page: Page, name: string) =>
  page.getByTestId(`chart-${name}`).getAttribute('data-points').then(Number);

async function waitForStep(page: Page, step: number, timeout = 180_000) {
  await expect.poll(() => stepCount(page), { timeout, interval: 250 }).toBeGreaterThanOrEqual(step);
}

/** A mark on the page's window: still there afterwards means the page never reloaded. */
async function markDocument(page: Page) {
  await page.evaluate(() => {
    (window as unknown as { documentMark: string }).documentMark = 'before the failure';
  });
}
const documentMark = (page: Page) =>
  page.evaluate(() => (window as unknown as { documentMark?: string }).documentMark);

function failNextStep(page: Page, how: 'throw' | 'abort') {
  return page.evaluate((how) => {
    const hooks = (window as unknown as { __labTest?: { failNextStep(how: string): void } })
      .__labTest;
    if (!hooks) throw new Error('window.__labTest is missing: open the page with ?test=1');
    hooks.failNextStep(how);
  }, how);
}

function loseDevice(page: Page) {
  return page.evaluate(() => {
    const hooks = (window as unknown as { __labTest?: { loseDevice(): void } }).__labTest;
    if (!hooks) throw new Error('window.__labTest is missing: open the page with ?test=1');
    hooks.loseDevice();
  });
}

/**
 * Training goes on by itself to `step`; paused there, every step is on the chart once (none
 * lost, none doubled), the page never reloaded, and nothing but `expected` was said.
 */
async function trainsOnUnharmed(page: Page, step: number, expected: RegExp, errors: string[]) {
  await waitForStep(page, step);
  await page.getByRole('button', { name: 'Pause' }).click();
  await waitIdle(page);
  expect(await chartPoints(page, 'coder-reward')).toBe(await stepCount(page));
  expect(await documentMark(page)).toBe('before the failure');
  expect(await unexpectedBannerMessages(page, [expected])).toEqual([]);
  expect(errors).toEqual([]);
  await page.close();
}

/** The banner message that matches `pattern`, once it shows. */
async function bannerMessage(page: Page, pattern: RegExp, timeout = 120_000): Promise<string> {
  let found = '';
  await expect
    .poll(
      async () => {
        const messages = await page
          .getByTestId('errors')
          .locator('.error-item span')
          .allTextContents();
        found = messages.find((message) => pattern.test(message)) ?? '';
        return found;
      },
      { timeout, interval: 250 },
    )
    .toMatch(pattern);
  return found;
}

describe('the engine survives failure', () => {
  let browser: Browser;
  beforeAll(async () => {
    browser = await launchBrowser();
  });
  afterAll(async () => {
    await browser?.close();
  });

  it('a step that throws midway: the engine restarts from the last saved step and training goes on', async () => {
    const { page, errors } = await openLab(browser, SMALL_TEST);
    await waitIdle(page);
    await markDocument(page);
    await page.getByRole('button', { name: 'Train' }).click();
    await waitForStep(page, 2);
    const landedBefore = await stepCount(page);
    await failNextStep(page, 'throw');

    const expected =
      /^The engine failed in .+ \(Test failure: the engine was told to fail mid-step\.\); restarted it and retrying from its last saved step \((\d+)\)\.$/;
    const message = await bannerMessage(page, expected);
    const savedStep = Number(expected.exec(message)?.[1]);
    // Every step that landed before the failure was saved: none is lost.
    expect(savedStep).toBeGreaterThanOrEqual(landedBefore);

    // Training resumes by itself and continues the count from the saved step.
    await trainsOnUnharmed(page, savedStep + 2, expected, errors);
  });

  it('a wasm abort mid-step: the engine restarts with smaller micro-batches and the step is retried', async () => {
    const { page, errors } = await openLab(browser, SMALL_TEST);
    await waitIdle(page);
    await markDocument(page);
    await page.getByRole('button', { name: 'Step' }).click();
    await waitForStep(page, 1);
    await waitIdle(page);

    await failNextStep(page, 'abort');
    await page.getByRole('button', { name: 'Step' }).click();
    const expected =
      /^Ran out of memory in .+; retrying from its last saved step \(1\) with smaller micro-batches \((\d+) MiB\)\.$/;
    const message = await bannerMessage(page, expected);
    const budget = Number(expected.exec(message)?.[1]);
    expect(budget).toBeGreaterThanOrEqual(16);

    // The failed step is retried on a fresh engine, with the halved budget in the run's link.
    await waitForStep(page, 2);
    await waitIdle(page);
    expect(await stepCount(page)).toBe(2);
    expect(await chartPoints(page, 'coder-reward')).toBe(2);
    expect(await page.evaluate(() => new URLSearchParams(location.search).get('mem'))).toBe(
      String(budget),
    );
    expect(await page.locator('input[name=mem]').inputValue()).toBe(String(budget));

    // The replaced engine works as before: another step lands.
    await page.getByRole('button', { name: 'Step' }).click();
    await waitForStep(page, 3);
    await waitIdle(page);
    expect(await documentMark(page)).toBe('before the failure');
    expect(await unexpectedBannerMessages(page, [expected])).toEqual([]);
    expect(errors).toEqual([]);
    await page.close();
  });

  it('a GPU device lost under the lab’s kernels: the run goes on on wasm from its last finished step', async () => {
    // backend=kernels: the lab's kernels even on the SwiftShader adapter headless Chromium has
    // (auto leaves a software adapter to wasm), so the loss happens where a real GPU's would.
    const { page, errors } = await openLab(browser, `${SMALL_TEST}&backend=kernels`);
    await waitIdle(page);
    await expect.poll(() => backendLine(page), { timeout: 60_000 }).toMatch(/^kernels · /);
    await markDocument(page);
    await page.getByRole('button', { name: 'Train' }).click();
    await waitForStep(page, 1);
    const landedBefore = await stepCount(page);
    await loseDevice(page);

    const expected =
      /^The lab's WebGPU kernels stopped \(the GPU device (was lost|failed) \(.*\)\); continuing on tfjs wasm from the last finished step\.$/;
    // Said once: an in-flight call failing and the device's lost promise are one event.
    await bannerMessage(page, expected);
    // The status bar names what computes now.
    await expect.poll(() => backendLine(page)).toMatch(/^wasm · /);
    // Training goes on by itself, on wasm, counting on from the steps that landed.
    await trainsOnUnharmed(page, landedBefore + 2, expected, errors);
  });
});
