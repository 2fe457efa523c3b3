// Issue 13's explainer on the built page: groups with signal marked and reachable, the
// explainer opening on one, formulas that never run past its edge (1440 and 1024 px, normal
// and presentation mode), the "engine Â" column explained, presentation mode's own
// controls (one switch; previous/next step, group and plan; follows new steps unless
// pinned), and one group under grpo, dapo and dr_grpo side by side.
import type { Browser, Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  caughtUp,
  launchBrowser,
  openLab,
  stepCount,
  unexpectedBannerMessages,
  waitIdle,
} from './browser';

// Three tasks a step, 2 plans × 2 programs: several groups, a few seconds a step on wasm.
const THREE_TASKS = '?tasks=3&n=2&m=2&eval=0&seed=3';
/** Each role's token cap on the defaults (dr_grpo divides by G × this). */
const TOKEN_CAP = { planner: 64, coder: 96 };

async function stepOnce(page: Page) {
  const before = await stepCount(page);
  await page.getByRole('button', { name: 'Step', exact: true }).click();
  await expect.poll(() => stepCount(page), { timeout: 240_000, interval: 250 }).toBe(before + 1);
  await waitIdle(page);
}

/**
 * Display formulas wider than their box, or reaching past the explainer's right edge, as a
 * reader sees them: each formula is scrolled to first (one off screen is fitted when it
 * scrolls in).
 */
async function overflowingFormulas(page: Page) {
  await page.evaluate(async () => {
    const frames = () =>
      new Promise((resolve) => requestAnimationFrame(() => requestAnimationFrame(resolve)));
    for (const box of document.querySelectorAll<HTMLElement>(
      '[data-testid="explainer"] .tex-display',
    )) {
      box.scrollIntoView({ block: 'center' });
      await frames();
    }
    await frames();
  });
  return page.evaluate(() => {
    const explainer = document.querySelector('[data-testid="explainer"]') as HTMLElement;
    const edge = explainer.getBoundingClientRect().right;
    const bad: string[] = [];
    for (const box of explainer.querySelectorAll<HTMLElement>('.tex-display')) {
      const formula = box.querySelector<HTMLElement>('.katex-html') ?? box;
      const right = Math.max(
        ...[...formula.querySelectorAll<HTMLElement>('.base')].map(
          (b) => b.getBoundingClientRect().right,
        ),
      );
      const display = box.querySelector<HTMLElement>('.katex-display') ?? box;
      if (display.scrollWidth > display.clientWidth + 1 || right > edge + 0.5) {
        bad.push(`${box.textContent?.slice(0, 40)} (right ${right.toFixed(0)} > ${edge})`);
      }
    }
    return { bad, count: explainer.querySelectorAll('.tex-display').length };
  });
}

const signalOf = (page: Page) =>
  page.locator('.task-tabs button[aria-selected="true"]').getAttribute('data-signal');

describe('the GRPO explainer', () => {
  let browser: Browser;
  beforeAll(async () => {
    browser = await launchBrowser();
  });
  afterAll(async () => {
    await browser?.close();
  });

  it('marks groups with signal, opens on one, jumps to the next, and fits its formulas', async () => {
    const { page, errors } = await openLab(browser, THREE_TASKS);
    await waitIdle(page);
    // Steps until some kept group has signal (most do; a step where none has is possible).
    for (let i = 0; i < 4; i++) {
      await stepOnce(page);
      if ((await page.locator('.task-tabs button[data-signal="true"]').count()) > 0) break;
    }
    const tabs = page.locator('.task-tabs button');
    const marks = await tabs.evaluateAll((buttons) =>
      buttons.map((b) => ({
        signal: b.getAttribute('data-signal'),
        marked: b.classList.contains('has-signal') && (b.textContent ?? '').includes('σ>0'),
      })),
    );
    expect(marks.length).toBe(3);
    for (const mark of marks) expect(mark.marked).toBe(mark.signal === 'true');
    const withSignal = marks.filter((m) => m.signal === 'true').length;
    expect(withSignal, 'no group with signal in 4 steps').toBeGreaterThan(0);
    // The newest step opened on a group with signal.
    expect(await signalOf(page)).toBe('true');
    // Inside it, a plan whose programs scored differently (a Coder group with σ > 0) says so.
    const planMarks = await page.locator('.group-grid .plan-cell .signal-mark').count();
    const planCells = await page.locator('.group-grid .plan-cell').count();
    expect(planCells).toBe(2);
    expect(planMarks).toBeLessThanOrEqual(planCells);

    // "Next group with signal" visits only groups with signal, and wraps around.
    const next = page.getByRole('button', { name: 'Next group with signal' });
    const seen = new Set<string>();
    for (let i = 0; i < 4; i++) {
      await next.click();
      await caughtUp(page);
      const step = await page.getByLabel('Inspected step').inputValue();
      const tab = await page
        .locator('.task-tabs button')
        .evaluateAll((b) => b.findIndex((x) => x.getAttribute('aria-selected') === 'true'));
      expect(await signalOf(page)).toBe('true');
      seen.add(`${step}/${tab}`);
    }
    expect(seen.size).toBeGreaterThan(0);

    // The "engine Â" column says what it is.
    const engineColumn = page.locator('[data-testid="explainer-coder"] th', {
      hasText: 'engine Â',
    });
    const noteId = await engineColumn.getAttribute('aria-describedby');
    expect(await page.locator(`[id="${noteId}"]`).textContent()).toMatch(
      /engine Â is the value the trainer recorded/,
    );

    // Formulas fit at both widths, in the normal layout and in presentation mode.
    for (const presentation of [false, true]) {
      if (presentation) await page.getByRole('checkbox', { name: 'Presentation' }).check();
      for (const width of [1440, 1024]) {
        await page.setViewportSize({ width, height: 900 });
        await page.waitForTimeout(400);
        const { bad, count } = await overflowingFormulas(page);
        expect(count).toBeGreaterThan(6);
        expect(bad, `${presentation ? 'presentation' : 'normal'} at ${width}`).toEqual([]);
        const pageOverflow = await page.evaluate(
          () => document.documentElement.scrollWidth > document.documentElement.clientWidth,
        );
        expect(pageOverflow, `page at ${width}`).toBe(false);
      }
    }
    expect(errors).toEqual([]);
    expect(await unexpectedBannerMessages(page)).toEqual([]);
    await page.close();
  });

  it('presentation mode: one switch, its own step/group/plan controls, follows unless pinned', async () => {
    const { page, errors } = await openLab(browser, THREE_TASKS);
    await waitIdle(page);
    await stepOnce(page);
    await caughtUp(page);
    // One Presentation switch on the page.
    expect(await page.getByRole('checkbox', { name: /presentation/i }).count()).toBe(1);
    await page.getByRole('checkbox', { name: 'Presentation' }).check();
    expect(await page.getByTestId('explainer').getAttribute('class')).toContain('presentation');
    expect(await page.getByRole('region', { name: 'Group inspector' }).count()).toBe(0);

    const stepText = () => page.getByTestId('presentation-step').textContent();
    const groupText = () => page.getByTestId('presentation-group').textContent();
    const planText = () => page.getByTestId('presentation-plan').textContent();
    const task = () => page.locator('.explainer-task').textContent();

    // Groups: next and previous change the group on screen.
    const firstTask = await task();
    const startGroup = (await groupText()) ?? '';
    const toNext = startGroup.startsWith('group 3')
      ? page.getByRole('button', { name: 'Previous group', exact: true })
      : page.getByRole('button', { name: 'Next group', exact: true });
    await toNext.click();
    expect(await groupText()).not.toBe(startGroup);
    // The explainer renders the selection deferred (typesetting is background work).
    await caughtUp(page);
    expect(await task()).not.toBe(firstTask);
    // Plans: 2 per task.
    expect(await planText()).toMatch(/^plan [12] of 2$/);
    const plan = await planText();
    await page
      .getByRole('button', {
        name: plan?.startsWith('plan 1') ? 'Next plan' : 'Previous plan',
        exact: true,
      })
      .click();
    expect(await planText()).not.toBe(plan);

    // A new step takes the screen while following.
    expect(await page.getByTestId('follow-steps').isChecked()).toBe(true);
    await stepOnce(page);
    await expect.poll(stepText).toMatch(/^step 2 /);
    // Pinned, the class stays on step 2 while step 3 lands.
    await page.getByTestId('follow-steps').uncheck();
    await stepOnce(page);
    expect(await stepCount(page)).toBe(3);
    expect(await stepText()).toMatch(/^step 2 /);
    // Its own step controls: back to step 1 and forward again.
    await page.getByRole('button', { name: 'Previous step', exact: true }).click();
    expect(await stepText()).toMatch(/^step 1 /);
    await page.getByRole('button', { name: 'Next step', exact: true }).click();
    await page.getByRole('button', { name: 'Next step', exact: true }).click();
    expect(await stepText()).toMatch(/^step 3 /);
    // Following again jumps to the newest, and the next step follows.
    await page.getByRole('button', { name: 'Previous step', exact: true }).click();
    await page.getByTestId('follow-steps').check();
    expect(await stepText()).toMatch(/^step 3 /);
    await stepOnce(page);
    await expect.poll(stepText).toMatch(/^step 4 /);

    // The same switch leaves presentation mode.
    await page.getByRole('checkbox', { name: 'Presentation' }).uncheck();
    expect(await page.getByRole('region', { name: 'Group inspector' }).count()).toBe(1);
    expect(errors).toEqual([]);
    expect(await unexpectedBannerMessages(page)).toEqual([]);
    await page.close();
  });

  it('shows one group under grpo, dapo and dr_grpo side by side, token by token (defaults)', async () => {
    // The page on its defaults: no query string.
    const { page, errors } = await openLab(browser);
    await waitIdle(page, 180_000);
    await page.setViewportSize({ width: 1440, height: 900 });
    await stepOnce(page);
    // On a group with signal when one is kept (else every Â, and every bar, is 0).
    const nextSignal = page.getByRole('button', { name: 'Next group with signal' });
    if (await nextSignal.isEnabled()) await nextSignal.click();
    await caughtUp(page);
    const section = page.getByTestId('explainer-aggregations');
    const cards = ['grpo', 'dapo', 'dr_grpo'].map((t) => page.getByTestId(`aggregation-${t}`));
    const boxes = await Promise.all(cards.map((c) => c.boundingBox()));
    // Side by side: one row, left to right, not overlapping.
    expect(boxes.every((b) => b && Math.abs(b.y - (boxes[0]?.y ?? 0)) < 1)).toBe(true);
    for (let i = 1; i < boxes.length; i++) {
      expect((boxes[i]?.x ?? 0) >= (boxes[i - 1]?.x ?? 0) + (boxes[i - 1]?.width ?? 0) - 1).toBe(
        true,
      );
    }
    // The run's own aggregation (dapo on the defaults) is marked.
    expect(await page.getByTestId('aggregation-dapo').getAttribute('class')).toContain('active');

    // Each token is a bar; the losses are the aggregations' formulas at ρ = 1 (ℓ = −Â).
    const members = await cards[0]!.locator('.aggregation-member').evaluateAll((rows) =>
      rows.map((r) => ({
        tokens: Number(r.getAttribute('data-tokens')),
        advantage: Number(r.getAttribute('data-advantage')),
      })),
    );
    // The selected plan's M = 2 programs, or (when they all scored the same) the N = 4 plans.
    expect([2, 4]).toContain(members.length);
    const role = (await section.getAttribute('data-role')) as 'planner' | 'coder';
    const totalTokens = members.reduce((sum, m) => sum + m.tokens, 0);
    for (const card of cards) {
      expect(await card.locator('.token-bar').count()).toBe(totalTokens);
    }
    const G = members.length;
    const expected = {
      grpo: members.reduce((s, m) => s + (m.tokens > 0 ? -m.advantage : 0), 0) / G,
      dapo: members.reduce((s, m) => s - m.advantage * m.tokens, 0) / Math.max(totalTokens, 1),
      dr_grpo: members.reduce((s, m) => s - m.advantage * m.tokens, 0) / (G * TOKEN_CAP[role]),
    };
    for (const [type, value] of Object.entries(expected)) {
      const shown = Number(await page.getByTestId(`aggregation-loss-${type}`).textContent());
      expect(shown, type).toBeCloseTo(value, 3);
    }
    expect(await section.textContent()).toMatch(/short (program|plan)’s\s+tokens count more/);
    expect(errors).toEqual([]);
    expect(await unexpectedBannerMessages(page)).toEqual([]);
    await page.close();
  });
});
