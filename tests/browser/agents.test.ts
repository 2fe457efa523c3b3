// The page with every agent (issue 14): the Agents setting from a link, one step with the
// Retriever and the Debugger, the inspector's chain under a sample (retrieved example → plan
// → program → sandbox report → repairs), and the agents' charts, which a default run lacks.
import type { Browser } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  launchBrowser,
  openLab,
  SMALL,
  stepCount,
  unexpectedBannerMessages,
  waitIdle,
} from './browser';

let browser: Browser;
beforeAll(async () => {
  browser = await launchBrowser();
});
afterAll(async () => {
  await browser?.close();
});

describe('the Debugger and the Retriever on the page', () => {
  it('runs a step with all four agents and shows the chain and their charts', async () => {
    // Programs cut at 12 tokens hold no whole function: every one fails, so the Debugger has work.
    const { page, errors } = await openLab(
      browser,
      `${SMALL}&agents=retriever,planner,coder,debugger&codetok=12`,
    );
    await waitIdle(page);
    await expect
      .poll(() => page.getByLabel('Agents', { exact: true }).inputValue())
      .toBe('retriever,planner,coder,debugger');
    expect(await page.getByLabel('D repairs per failing program').count()).toBe(1);
    await page.getByRole('button', { name: 'Step' }).click();
    await expect.poll(() => stepCount(page), { timeout: 180_000 }).toBe(1);
    await waitIdle(page);
    await expect.poll(() => page.getByTestId('sample-cell').count(), { timeout: 30_000 }).toBe(4);
    // Every plan read a retrieved example; a failing program shows its report and repairs.
    let repaired = 0;
    for (let i = 0; i < 4; i++) {
      await page.getByTestId('sample-cell').nth(i).click();
      const chain = page.getByTestId('agent-chain');
      await expect.poll(() => chain.getByTestId('chain-retrieval').count()).toBe(1);
      if ((await chain.getByTestId('chain-repair').count()) > 0) {
        repaired++;
        expect(await chain.getByTestId('chain-report').textContent()).toMatch(
          /should be|no function|fails/,
        );
      }
    }
    expect(repaired).toBe(4);
    expect(await page.getByTestId('chart-retriever').count()).toBe(1);
    expect(await page.getByTestId('chart-debugger').count()).toBe(1);
    expect(await unexpectedBannerMessages(page)).toEqual([]);
    expect(errors).toEqual([]);
    await page.close();
  });

  it('a default run shows neither agent’s chart nor setting', async () => {
    const { page } = await openLab(browser, SMALL);
    await waitIdle(page);
    expect(await page.getByLabel('Agents', { exact: true }).inputValue()).toBe('planner,coder');
    expect(await page.getByLabel('D repairs per failing program').count()).toBe(0);
    expect(await page.getByTestId('chart-debugger').count()).toBe(0);
    await page.close();
  });
});
