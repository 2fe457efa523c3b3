// Issue 13's teaching behaviours on the built page: the "Is it learning?" chart first, its
// baseline and the status while the engine evaluates; axes that fit, whole steps, constant
// series said so, reward charts that differ; every setting explained where it stands; the
// first-visit introduction; and nothing cut off at 1440 and 1024 px.
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

// One task, 2 plans × 2 programs, an evaluation every 2 steps: a few seconds a step on wasm.
const SMALL_EVAL = '?tasks=1&n=2&m=2&eval=2&evaltasks=2&seed=3';

/** How the page lays out one element: whether its content is clipped, whether it leaves its box. */
function layoutOf(page: Page, selector: string, containerSelector: string) {
  return page.locator(selector).evaluate((el: HTMLElement, container: string) => {
    const box = el.getBoundingClientRect();
    const outer = (el.closest(container) as HTMLElement).getBoundingClientRect();
    let textWidth = 0;
    if (el instanceof HTMLSelectElement) {
      const style = getComputedStyle(el);
      const ctx = document.createElement('canvas').getContext('2d') as CanvasRenderingContext2D;
      ctx.font = `${style.fontWeight} ${style.fontSize} ${style.fontFamily}`;
      const text = el.selectedOptions[0]?.textContent ?? '';
      // The text, the padding and the drop-down arrow (about 20 px in Chromium).
      textWidth =
        ctx.measureText(text).width +
        Number.parseFloat(style.paddingLeft) +
        Number.parseFloat(style.paddingRight) +
        20;
    }
    const row = el.closest('.field-row')?.getBoundingClientRect();
    return {
      rowRight: row?.right ?? Number.NaN,
      left: box.left,
      right: box.right,
      containerLeft: outer.left,
      containerRight: outer.right,
      clipped: el.scrollWidth > el.clientWidth + 1,
      textWidth,
      width: el.clientWidth,
      viewport: document.documentElement.clientWidth,
      pageOverflow: document.documentElement.scrollWidth > document.documentElement.clientWidth,
    };
  }, containerSelector);
}

describe('a page to teach with', () => {
  let browser: Browser;
  beforeAll(async () => {
    browser = await launchBrowser();
  });
  afterAll(async () => {
    await browser?.close();
  });

  it('introduces itself once, explains every setting, and cuts nothing off at 1440 and 1024 px', async () => {
    const { page, errors } = await openLab(browser, SMALL);
    await waitIdle(page);

    // First visit: the introduction says what Train does and where the models come from.
    const intro = page.getByTestId('intro');
    expect(await intro.isVisible()).toBe(true);
    const introText = (await intro.textContent()) ?? '';
    expect(introText).toContain('Train');
    expect(introText).toMatch(/45–55 minutes/);
    expect(introText).toMatch(/first minute/i);
    expect(introText).toMatch(/the warm start is evaluated/);

    // Each setting's explanation is its control's description, shown by its "?" button.
    const described = ['preset', 'mode', 'n', 'm', 'beta', 'epsl', 'epsh', 'loss', 'weff', 'wfmt'];
    const descriptions: Record<string, string> = {};
    for (const name of described) {
      const control = page.locator(`.controls [name="${name}"]`);
      const id = await control.getAttribute('aria-describedby');
      expect(id, name).toBeTruthy();
      descriptions[name] = (await page.locator(`[id="${id}"]`).textContent()) ?? '';
      expect(descriptions[name].length, name).toBeGreaterThan(40);
    }
    expect(descriptions.beta).toMatch(/k3/);
    expect(descriptions.loss).toMatch(/grpo.*dapo.*dr_grpo/s);
    expect(descriptions.weff).toMatch(/λ/);
    expect(descriptions.n).toMatch(/group/);
    // Chromium computes the description screen readers read.
    const cdp = await page.context().newCDPSession(page);
    const { nodes } = (await cdp.send('Accessibility.getFullAXTree')) as {
      nodes: {
        role?: { value: string };
        name?: { value: string };
        description?: { value: string };
      }[];
    };
    const beta = nodes.find((n) => n.name?.value === 'β (KL)' && n.role?.value === 'spinbutton');
    expect(beta?.description?.value).toContain('k3');
    // The "?" buttons do not take the toolbar's names: Train, Step and Pause name one button each.
    for (const name of ['Train', 'Step', 'Pause', 'Reset'])
      expect(await page.getByRole('button', { name }).count(), name).toBe(1);
    // The explanation opens in place.
    const betaRow = page.locator('.field-row', { has: page.locator('[name="beta"]') });
    expect(await betaRow.locator('.field-help').isVisible()).toBe(false);
    const explain = betaRow.getByRole('button', { name: 'Explain this setting' });
    expect(await explain.getAttribute('aria-expanded')).toBe('false');
    await explain.click();
    expect(await explain.getAttribute('aria-expanded')).toBe('true');
    expect(await betaRow.locator('.field-help').isVisible()).toBe(true);
    // k3, zero reward std: the charts say what they show.
    expect(await page.getByTestId('chart-kl').locator('.chart-caption').textContent()).toMatch(
      /k3/,
    );
    expect(
      await page.getByTestId('chart-frac-zero-std').locator('.chart-caption').textContent(),
    ).toMatch(/Â are all 0/);

    // Nothing cut off: the selects show their whole choice, the backend label its whole text,
    // the Temperature field lines up with the others, and the page never scrolls sideways.
    for (const width of [1440, 1024]) {
      await page.setViewportSize({ width, height: 900 });
      await page.waitForTimeout(300);
      for (const name of ['preset', 'mode']) {
        const select = await layoutOf(page, `.controls select[name="${name}"]`, '.controls');
        expect(select.textWidth, `${name} at ${width}`).toBeLessThanOrEqual(select.width);
        expect(select.right, `${name} at ${width}`).toBeLessThanOrEqual(select.containerRight);
      }
      const backend = await layoutOf(page, '[data-testid="backend"]', '.run-toolbar');
      expect(backend.clipped, `backend at ${width}`).toBe(false);
      expect(backend.right, `backend at ${width}`).toBeLessThanOrEqual(backend.containerRight);
      const temperature = await layoutOf(page, '.controls input[name="temp"]', '.controls');
      const beta = await layoutOf(page, '.controls input[name="beta"]', '.controls');
      expect(temperature.right, `temperature at ${width}`).toBeLessThanOrEqual(
        temperature.containerRight,
      );
      // Lined up: flush with its row's right edge and as wide as the other number fields.
      expect(
        Math.abs(temperature.right - temperature.rowRight),
        `temperature at ${width}`,
      ).toBeLessThan(1);
      expect(Math.abs(beta.right - beta.rowRight), `β at ${width}`).toBeLessThan(1);
      expect(Math.abs(temperature.width - beta.width), `temperature at ${width}`).toBeLessThan(1);
      expect(temperature.pageOverflow, `page at ${width}`).toBe(false);
    }

    // Dismissed, it stays dismissed.
    await intro.getByRole('button', { name: 'Got it' }).click();
    expect(await intro.count()).toBe(0);
    await page.reload();
    await waitIdle(page);
    expect(await page.getByTestId('intro').count()).toBe(0);
    expect(errors).toEqual([]);
    await page.close();
  });

  it('on the defaults (no query string), cuts nothing off at 1440 and 1024 px', async () => {
    const { page, errors } = await openLab(browser);
    await waitIdle(page, 180_000);
    for (const width of [1440, 1024]) {
      await page.setViewportSize({ width, height: 900 });
      await page.waitForTimeout(300);
      const backend = await layoutOf(page, '[data-testid="backend"]', '.run-toolbar');
      expect(backend.clipped, `backend at ${width}`).toBe(false);
      expect(backend.right, `backend at ${width}`).toBeLessThanOrEqual(backend.containerRight);
      for (const name of ['preset', 'mode', 'loss']) {
        const select = await layoutOf(page, `.controls select[name="${name}"]`, '.controls');
        expect(select.textWidth, `${name} at ${width}`).toBeLessThanOrEqual(select.width);
      }
      const temperature = await layoutOf(page, '.controls input[name="temp"]', '.controls');
      expect(Math.abs(temperature.right - temperature.rowRight), `temp at ${width}`).toBeLessThan(
        1,
      );
      // No control, label or button anywhere clips its own text, and nothing scrolls sideways.
      const clipped = await page.evaluate(() =>
        [...document.querySelectorAll<HTMLElement>('button, label, select, .status, .backend')]
          .filter((el) => el.offsetParent !== null && el.scrollWidth > el.clientWidth + 1)
          .map((el) => `${el.tagName} "${el.textContent?.slice(0, 30)}"`),
      );
      expect(clipped, `at ${width}`).toEqual([]);
      expect(temperature.pageOverflow, `page at ${width}`).toBe(false);
    }
    expect(errors).toEqual([]);
    await page.close();
  });

  it('shows whether it learns: the learning chart first, smoothed, its baseline, and "evaluating…"', async () => {
    const { page, errors } = await openLab(browser, SMALL_EVAL);
    await waitIdle(page);
    const charts = page.locator('.charts-grid .chart');
    expect(await charts.first().getAttribute('data-testid')).toBe('chart-learning');
    expect(await charts.first().locator('.chart-title').textContent()).toContain('Is it learning?');
    expect(Number(await page.getByTestId('charts-smoothing').inputValue())).toBeGreaterThan(0);

    await page.getByRole('button', { name: 'Train' }).click();
    // Before the first step the warm start is evaluated (step 0): the status says so.
    await page.waitForFunction(() => document.querySelector('[data-testid="evaluating"]'), null, {
      timeout: 240_000,
      polling: 50,
    });
    expect(await status(page)).toMatch(/^training · evaluating… · step 0/);
    // Step 2 evaluates too, and says so.
    await page.waitForFunction(
      () =>
        document.querySelector('[data-testid="evaluating"]') &&
        document.querySelector('[data-testid="step-count"]')?.textContent === '1',
      null,
      { timeout: 240_000, polling: 50 },
    );
    await expect
      .poll(() => stepCount(page), { timeout: 240_000, interval: 250 })
      .toBeGreaterThanOrEqual(3);
    await page.getByRole('button', { name: 'Pause' }).click();
    await waitIdle(page);
    const steps = await stepCount(page);
    expect(await page.getByTestId('evaluating').count()).toBe(0);
    expect(await page.getByTestId('seconds-per-step').textContent()).toMatch(/\d+(\.\d)? s\/step/);

    const learning = page.getByTestId('chart-learning');
    expect(Number(await learning.getAttribute('data-points'))).toBeGreaterThanOrEqual(steps);
    const readout = (await learning.locator('.chart-readout').textContent()) ?? '';
    expect(readout).toContain('sampled programs');
    expect(readout).toContain('eval pass@1');
    expect(readout).toContain('baseline');
    // The step-0 evaluation is the baseline: the warm start's level, said so.
    expect(await learning.locator('.chart-caption').textContent()).toContain(
      'the warm start’s level (the step-0 evaluation)',
    );

    // Axes: whole steps, ranges that fit, constant series said so.
    for (const name of ['learning', 'kl', 'clip-ratio', 'coder-reward', 'step-time']) {
      const chart = page.getByTestId(`chart-${name}`);
      const ticks = ((await chart.getAttribute('data-x-ticks')) ?? '').split(',').map(Number);
      expect(ticks.length, name).toBeGreaterThan(0);
      expect(ticks.every(Number.isInteger), `${name}: ${ticks}`).toBe(true);
    }
    const clip = page.getByTestId('chart-clip-ratio');
    expect(await page.getByTestId('chart-clip-ratio-constant').textContent()).toBe('constant: 0');
    const [lo, hi] = ((await clip.getAttribute('data-y-range')) ?? '').split(',').map(Number);
    expect([lo, hi]).toEqual([0, 1]);

    // The reward charts differ: the Planner's spread between plans, the Coder's within a plan.
    const planner = page.getByTestId('chart-planner-reward');
    const coder = page.getByTestId('chart-coder-reward');
    expect(Number(await planner.getAttribute('data-points'))).toBe(steps);
    expect(await planner.locator('.chart-readout').textContent()).toContain('best − worst plan');
    expect(await coder.locator('.chart-readout').textContent()).toContain('best − worst program');
    expect(await planner.locator('.chart-caption').textContent()).toMatch(
      /mean reward of the M programs/,
    );
    expect(await coder.locator('.chart-caption').textContent()).toMatch(/format penalty/);
    expect(errors).toEqual([]);
    expect(await unexpectedBannerMessages(page)).toEqual([]);
    await page.close();
  });
});
