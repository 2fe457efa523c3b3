import type { Browser, Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { launchBrowser, openLab } from './browser';

async function replaceCode(page: Page, code: string) {
  await page.getByTestId('editor-code').click();
  await page.keyboard.press('Control+A');
  await page.keyboard.insertText(code);
}

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
    // The entry point is shown with the verdicts, and offered in its field.
    expect(await page.getByTestId('entry-called').textContent()).toContain('sumEvenSquares(…)');
    expect(await page.locator('input[name=entry]').getAttribute('placeholder')).toBe(
      'sumEvenSquares (found)',
    );
    expect(errors).toEqual([]);
    await page.close();
  });

  it('calls the function the tests call, not a helper declared first; the field overrides it', async () => {
    const { page, errors } = await openLab(browser, '#playground');
    await replaceCode(
      page,
      'function square(x) { return x * x; }\nfunction sumEvenSquares(xs) { return xs.filter((x) => x % 2 === 0).map(square).reduce((s, x) => s + x, 0); }',
    );
    await page.getByRole('button', { name: 'Run' }).click();
    await expect
      .poll(() => page.getByTestId('summary').textContent(), { timeout: 30_000 })
      .toContain('4 / 4 tests passed');
    expect(await page.getByTestId('entry-called').textContent()).toContain('sumEvenSquares(…)');
    // Named in the field, the helper is what the tests call (and it fails them).
    await page.locator('input[name=entry]').fill('square');
    await page.getByRole('button', { name: 'Run' }).click();
    await expect
      .poll(() => page.getByTestId('entry-called').textContent(), { timeout: 30_000 })
      .toContain('square(…)');
    expect(await page.getByTestId('summary').textContent()).not.toContain('4 / 4');
    await page.locator('input[name=entry]').fill('not a name');
    await page.getByRole('button', { name: 'Run' }).click();
    await expect
      .poll(() => page.locator('.results .error').textContent())
      .toContain('Entry point "not a name" is not a function name.');
    expect(errors).toEqual([]);
    await page.close();
  });

  it('reports the memory a memory hog reached', async () => {
    const { page, errors } = await openLab(browser, '#playground');
    const memory = async () =>
      (await page.getByTestId('cost').textContent())?.match(/peak memory\s*(.*)$/)?.[1] ?? '';
    const toBytes = (text: string) => {
      const [, value, unit] = /^([\d.]+) (B|KB|MB|GB)/.exec(text) ?? [];
      const scale = { B: 1, KB: 2 ** 10, MB: 2 ** 20, GB: 2 ** 30 }[unit as 'B'] ?? Number.NaN;
      return Number(value) * scale;
    };
    // Grows until the deadline: the verdict is a timeout, with the megabytes it held.
    await replaceCode(
      page,
      'function sumEvenSquares(xs) { const a = []; while (true) a.push(1); }',
    );
    await page.getByRole('button', { name: 'Run' }).click();
    await expect
      .poll(() => page.getByTestId('summary').textContent(), { timeout: 30_000 })
      .toContain('0 / 4 tests passed');
    expect(toBytes(await memory())).toBeGreaterThan(2 ** 20);
    // Runs into the memory limit: out_of_memory, at the limit (64 MB).
    await replaceCode(page, 'function sumEvenSquares(xs) { return "x".repeat(2 ** 28).length; }');
    await page.getByRole('button', { name: 'Run' }).click();
    await expect
      .poll(() => page.getByTestId('verdict').first().textContent(), { timeout: 30_000 })
      .toContain('out_of_memory');
    expect(await memory()).toBe('64.00 MB');
    // Inside native code (Array.fill) nothing is sampled and only the watchdog stops it: the
    // verdict says the memory was not measured rather than "0 B".
    await replaceCode(
      page,
      'function sumEvenSquares(xs) { const a = []; for (;;) a.push(new Array(1e5).fill(1)); }',
    );
    await page.getByRole('button', { name: 'Run' }).click();
    // The first test's verdict names how it stopped (the summary lists a kind only when every
    // test stopped the same way, which a loaded machine's timings do not promise).
    await expect
      .poll(() => page.getByTestId('verdict').first().textContent(), { timeout: 30_000 })
      .toMatch(/watchdog_killed|timeout|out_of_memory/);
    expect(await page.getByTestId('summary').textContent()).toContain('0 / 4 tests passed');
    const hog = await memory();
    expect(hog).not.toBe('0 B');
    if ((await page.getByTestId('verdict').first().textContent())?.includes('watchdog_killed')) {
      expect(hog).toMatch(/^not measured/);
    } else {
      expect(toBytes(hog)).toBeGreaterThan(0);
    }
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
