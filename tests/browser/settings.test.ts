// Settings that cannot run are refused before they run: where they are typed, in words,
// with the engine's own validation, and they never reach the URL; a link with one bad
// value keeps its other values and names the one it ignored.
import type { Browser, Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  bannerMessages,
  launchBrowser,
  openLab,
  SMALL,
  unexpectedBannerMessages,
  waitIdle,
} from './browser';

const problemOf = (page: Page, name: string) =>
  page
    .locator('.field-row', { has: page.locator(`[name="${name}"]`) })
    .locator('.field-problem')
    .textContent({ timeout: 5_000 });
// From the page itself: page.url() learns of history.replaceState only a moment later.
const urlParam = (page: Page, key: string) =>
  page.evaluate((key) => new URLSearchParams(location.search).get(key), key);

describe('run settings', () => {
  let browser: Browser;
  beforeAll(async () => {
    browser = await launchBrowser();
  });
  afterAll(async () => {
    await browser?.close();
  });

  it('refuses values the engine would reject where they are typed, and keeps them out of the URL', async () => {
    const { page, errors } = await openLab(browser, SMALL);
    await waitIdle(page);

    await page.locator('input[name=n]').fill('1');
    expect(await problemOf(page, 'n')).toBe(
      'N plans per task must be at least 2 in core mode: the Planner needs a group Not applied.',
    );
    expect(await urlParam(page, 'n')).toBe('2');

    await page.locator('input[name=lr]').fill('-0.001');
    expect(await problemOf(page, 'lr')).toMatch(/^Learning rate must be a finite number > 0/);
    expect(await urlParam(page, 'lr')).toBeNull();

    // A good value is taken at once, and clears the refusal.
    await page.locator('input[name=lr]').fill('0.0002');
    expect(await page.locator('input[name=lr]').getAttribute('aria-invalid')).toBeNull();
    expect(await urlParam(page, 'lr')).toBe('0.0002');

    // N = 1 is fine without a Planner group; core mode is then the setting refused.
    await page.locator('input[name=n]').fill('3');
    expect(await urlParam(page, 'n')).toBe('3');
    await page.locator('select[name=mode]').selectOption('single');
    await page.locator('input[name=n]').fill('1');
    expect(await urlParam(page, 'n')).toBe('1');
    await page.locator('select[name=mode]').selectOption('core');
    expect(await problemOf(page, 'mode')).toMatch(/^N plans per task must be at least 2 in core/);
    expect(await urlParam(page, 'mode')).toBe('single');
    expect(await page.locator('select[name=mode]').inputValue()).toBe('single');

    await page.locator('input[name=m]').fill('');
    expect(await problemOf(page, 'm')).toBe('M programs per plan needs a number. Not applied.');
    // The link's m=2 is the default M, so the URL leaves it out; the empty value stays out too.
    expect(await urlParam(page, 'm')).toBeNull();
    expect(await page.evaluate(() => location.search)).not.toMatch(/[?&]m=/);

    expect(await unexpectedBannerMessages(page)).toEqual([]);
    expect(errors).toEqual([]);
    await page.close();
  });

  it('on the defaults (no query string), lr = −5 is refused in words and the URL stays bare', async () => {
    const { page, errors } = await openLab(browser);
    await waitIdle(page, 180_000);
    await page.locator('input[name=lr]').fill('-5');
    expect(await problemOf(page, 'lr')).toMatch(/^Learning rate must be a finite number > 0/);
    expect(await page.locator('input[name=lr]').getAttribute('aria-invalid')).toBe('true');
    expect(await page.evaluate(() => location.search)).toBe('');
    // The refusal is the field's description for screen readers too: role alert, beside it.
    expect(
      await page
        .locator('.field-row', { has: page.locator('[name="lr"]') })
        .getByRole('alert')
        .count(),
    ).toBe(1);
    expect(await unexpectedBannerMessages(page)).toEqual([]);
    expect(errors).toEqual([]);
    await page.close();
  });

  it('the Model choice: a suggested Hub model trains rank-8 adapters at the LoRA rate and says how slow a step would be here; a typed id is checked; the lab’s models clear it', async () => {
    const { page, errors } = await openLab(browser);
    await waitIdle(page, 180_000);
    const model = page.locator('select[name=model]');
    expect(await model.inputValue()).toBe('lab');

    await model.selectOption('Qwen/Qwen2.5-Coder-0.5B-Instruct');
    await expect.poll(() => urlParam(page, 'base')).toBe('Qwen/Qwen2.5-Coder-0.5B-Instruct');
    // Rank 8 and LoRA's rate for a base are a base's defaults: the link needs neither.
    expect(await urlParam(page, 'lora')).toBeNull();
    expect(await urlParam(page, 'lr')).toBeNull();
    expect(await page.locator('input[name=lora]').inputValue()).toBe('8');
    expect(await page.locator('input[name=lr]').inputValue()).toBe('0.0001');
    expect(await page.getByTestId('model-about').textContent()).toMatch(
      /494M parameters · 988 MB to download\. Each role trains a rank-8 LoRA adapter over it at learning rate 0\.0001 \(LoRA default over a base: /,
    );
    // No hardware GPU here: a step of a 0.5B model on the CPU is called out before Train.
    const estimate = page.getByTestId('model-estimate');
    expect(await estimate.textContent()).toMatch(
      /^Slow here: a step would take about [\d.]+ (min|h) on this machine’s CPU/,
    );
    expect(await estimate.getAttribute('class')).toContain('slow');

    await model.selectOption('other');
    const typed = page.locator('input[name=base]');
    await typed.fill('not a hub id');
    await typed.press('Enter');
    expect(await problemOf(page, 'base')).toMatch(/"not a hub id" is not a Hub id/);
    expect(await urlParam(page, 'base')).toBe('Qwen/Qwen2.5-Coder-0.5B-Instruct');
    await typed.fill('lab-test/tiny-qwen2');
    await typed.press('Enter');
    await expect.poll(() => urlParam(page, 'base')).toBe('lab-test/tiny-qwen2');
    await page.locator('input[name=hub]').fill('http://127.0.0.1:9');
    await page.locator('input[name=hub]').press('Enter');
    await expect.poll(() => urlParam(page, 'hub')).toBe('http://127.0.0.1:9');

    await model.selectOption('lab');
    await expect.poll(() => urlParam(page, 'base')).toBeNull();
    expect(await urlParam(page, 'hub')).toBeNull();
    expect(await page.getByTestId('model-about').count()).toBe(0);
    // Back to full fine-tuning and its rate: both were the base's defaults, nobody set them.
    expect(await page.locator('input[name=lora]').inputValue()).toBe('');
    expect(await page.getByTestId('learning-rate-source').textContent()).toBe(
      'learning rate 0.00015 (full fine-tuning default: measured on the lab’s models)',
    );
    expect(await unexpectedBannerMessages(page)).toEqual([]);
    expect(errors).toEqual([]);
    await page.close();
  });

  it('opens a link with one bad value: the other values apply and the bad one is named', async () => {
    const { page, errors } = await openLab(browser, `${SMALL}&lr=-1&beta=0.1`);
    await waitIdle(page);
    await expect
      .poll(() => bannerMessages(page))
      .toEqual([
        "Link setting ignored: lr=-1 (learningRate must be a finite number > 0, got -1); the link's other settings apply.",
      ]);
    expect(await page.locator('input[name=n]').inputValue()).toBe('2');
    expect(await page.locator('input[name=beta]').inputValue()).toBe('0.1');
    expect(await page.locator('input[name=lr]').inputValue()).toBe('0.00015');
    await expect.poll(() => urlParam(page, 'lr')).toBeNull();
    expect(await urlParam(page, 'beta')).toBe('0.1');
    expect(await urlParam(page, 'tasks')).toBe('1');
    expect(errors).toEqual([]);
    await page.close();
  });
});
