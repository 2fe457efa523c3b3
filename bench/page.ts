// `npm run bench -- page`: the default page (no query string) training for 60 s in headless
// Chromium, seen through the browser's own long-animation-frame entries (LoAF). Builds the
// page first (skip with --no-build). The table gives the frames over 200 ms, the slowest
// frame, and the main-thread time each engine message costs: the page marks every Worker
// message it handles (`engine-message` measures, handler plus the store update and React's
// synchronous render it triggers), and LoAF entries attribute the long frames to scripts
// (which of them are the engine's messages) and to rendering.
// `--seconds S` changes the 60 s; `--path '?tasks=1'` measures another page; `--trace` also
// records Chrome's timeline over the first 15 s of Train and lists its longest style and layout
// passes with how many elements they restyled and objects they laid out.
import type { Page } from 'playwright-core';
import { launchChromium } from '../src/cli/chromium';
import { serveBuiltPage } from './servePage';
import type { BenchSection } from './table';

const argValue = (name: string) => {
  const at = process.argv.indexOf(`--${name}`);
  return at >= 0 ? process.argv[at + 1] : undefined;
};

/** One long animation frame as the page's observer kept it. */
interface FrameEntry {
  duration: number;
  /** Style, layout and paint: from renderStart to the frame's end. */
  renderMs: number;
  /** Style and layout alone (from styleAndLayoutStart), and layout forced by scripts. */
  layoutMs: number;
  forcedLayoutMs: number;
  /** ms after Train was pressed. */
  at: number;
  scripts: { invoker: string; source: string; duration: number }[];
}

interface PageFigures {
  frames: FrameEntry[];
  /** performance.measure('engine-message') durations with the message's type. */
  messages: { type: string; duration: number; at: number }[];
  steps: number;
}

/** Installs the observers before the page's own scripts run. */
function observeFrames() {
  const w = window as unknown as { __frames: unknown[] };
  w.__frames = [];
  new PerformanceObserver((list) => {
    for (const entry of list.getEntries() as unknown as {
      duration: number;
      startTime: number;
      renderStart: number;
      styleAndLayoutStart: number;
      scripts: {
        invoker: string;
        sourceURL: string;
        sourceFunctionName: string;
        duration: number;
        forcedStyleAndLayoutDuration: number;
      }[];
    }[]) {
      w.__frames.push({
        duration: entry.duration,
        renderMs: entry.renderStart > 0 ? entry.startTime + entry.duration - entry.renderStart : 0,
        layoutMs:
          entry.styleAndLayoutStart > 0
            ? entry.startTime + entry.duration - entry.styleAndLayoutStart
            : 0,
        forcedLayoutMs: entry.scripts.reduce((sum, s) => sum + s.forcedStyleAndLayoutDuration, 0),
        at: entry.startTime - ((window as unknown as { __trainAt?: number }).__trainAt ?? 0),
        scripts: entry.scripts.map((s) => ({
          invoker: s.invoker,
          source: `${s.sourceURL.split('/').pop()}:${s.sourceFunctionName}`,
          duration: s.duration,
        })),
      });
    }
  }).observe({ type: 'long-animation-frame', buffered: true });
}

async function collect(page: Page): Promise<PageFigures> {
  return page.evaluate(() => {
    const w = window as unknown as { __frames: FrameEntry[] };
    const trainAt = (window as unknown as { __trainAt?: number }).__trainAt ?? 0;
    const messages = performance.getEntriesByName('engine-message').map((entry) => ({
      type: String((entry as PerformanceMeasure).detail ?? ''),
      duration: entry.duration,
      at: entry.startTime - trainAt,
    }));
    const steps = Number(document.querySelector('[data-testid="step-count"]')?.textContent ?? 0);
    return { frames: w.__frames, messages, steps };
  });
}

interface TraceEvent {
  name: string;
  ph: string;
  ts: number;
  dur?: number;
  tid: number;
  args?: {
    elementCount?: number;
    beginData?: { dirtyObjects?: number; totalObjects?: number; partialLayout?: boolean };
  };
}

/** Chrome's timeline over a stretch; stop() names its longest style recalcs and layouts. */
async function startTrace(page: Page): Promise<{ stop: () => Promise<string> }> {
  const cdp = await page.context().newCDPSession(page);
  const events: TraceEvent[] = [];
  cdp.on('Tracing.dataCollected', (data) =>
    events.push(...(data.value as unknown as TraceEvent[])),
  );
  await cdp.send('Tracing.start', {
    categories: 'devtools.timeline,disabled-by-default-devtools.timeline',
    transferMode: 'ReportEvents',
  });
  return {
    async stop() {
      const done = new Promise<void>((resolve) =>
        cdp.once('Tracing.tracingComplete', () => resolve()),
      );
      await cdp.send('Tracing.end');
      await done;
      const passes = events
        .filter(
          (e) => (e.name === 'UpdateLayoutTree' || e.name === 'Layout') && e.dur !== undefined,
        )
        .sort((a, b) => (b.dur ?? 0) - (a.dur ?? 0))
        .slice(0, 6);
      const t0 = Math.min(...events.filter((e) => e.ts > 0).map((e) => e.ts));
      return `Longest style and layout passes in the first 15 s (s after tracing began: ms, what): ${passes
        .map((e) => {
          const what =
            e.name === 'Layout'
              ? `layout of ${e.args?.beginData?.dirtyObjects ?? '?'} dirty / ${e.args?.beginData?.totalObjects ?? '?'} objects${e.args?.beginData?.partialLayout ? ' (partial)' : ''}`
              : `style of ${e.args?.elementCount ?? '?'} elements`;
          return `${((e.ts - t0) / 1e6).toFixed(1)}: ${((e.dur ?? 0) / 1000).toFixed(0)} ms, ${what}`;
        })
        .join('; ')}.`;
    },
  };
}

function quantile(values: number[], q: number): number {
  if (values.length === 0) return 0;
  const sorted = [...values].sort((a, b) => a - b);
  return sorted[Math.min(sorted.length - 1, Math.floor(q * sorted.length))] ?? 0;
}

export const pageBench: BenchSection = async () => {
  const seconds = Number(argValue('seconds') ?? 60);
  const path = argValue('path') ?? '';
  const notes: string[] = [];
  const { origin, server, notes: buildNotes } = await serveBuiltPage();
  notes.push(...buildNotes);
  const browser = await launchChromium();
  try {
    const page = await browser.newPage({ viewport: { width: 1400, height: 900 } });
    await page.addInitScript(observeFrames);
    await page.goto(`${origin}/${path}`);
    await page
      .getByTestId('engine-status')
      .filter({ hasText: /^idle/ })
      .waitFor({ timeout: 180_000 });
    const idle = await collect(page);
    // The idle page's frames are the floor this machine gives any page.
    await page.evaluate(() => {
      (window as unknown as { __frames: unknown[] }).__frames = [];
      performance.clearMeasures('engine-message');
      (window as unknown as { __trainAt: number }).__trainAt = performance.now();
    });
    const trace = process.argv.includes('--trace') ? await startTrace(page) : null;
    await page.getByRole('button', { name: 'Train' }).click();
    if (trace) {
      await page.waitForTimeout(15_000);
      notes.push(await trace.stop());
      await page.waitForTimeout(Math.max(0, seconds - 15) * 1000);
    } else await page.waitForTimeout(seconds * 1000);
    const training = await collect(page);
    await page.getByRole('button', { name: 'Pause' }).click();

    const stepMessages = training.messages.filter((m) => m.type === 'step');
    const allMs = training.messages.map((m) => m.duration);
    const stepMs = stepMessages.map((m) => m.duration);
    const over200 = training.frames.filter((f) => f.duration > 200);
    const bySource = new Map<string, number>();
    for (const frame of training.frames) {
      for (const script of frame.scripts) {
        const key = `${script.invoker} (${script.source})`;
        bySource.set(key, (bySource.get(key) ?? 0) + script.duration);
      }
    }
    const top = [...bySource.entries()].sort((a, b) => b[1] - a[1]).slice(0, 6);
    notes.push(
      `Long frames' script time by invoker over ${seconds} s: ${
        top.map(([key, ms]) => `${key} ${ms.toFixed(0)} ms`).join('; ') || 'none'
      }.`,
      `Slowest frames (ms after Train: total / scripts / render / style+layout / forced layout): ${[
        ...training.frames,
      ]
        .sort((a, b) => b.duration - a.duration)
        .slice(0, 4)
        .map(
          (f) =>
            `${f.at.toFixed(0)} (after ${training.messages.filter((m) => m.at <= f.at + f.duration).at(-1)?.type ?? 'none'}): ${f.duration.toFixed(0)} / ${f.scripts.reduce((sum, s) => sum + s.duration, 0).toFixed(0)} / ${f.renderMs.toFixed(0)} / ${f.layoutMs.toFixed(0)} / ${f.forcedLayoutMs.toFixed(0)}`,
        )
        .join('; ')}.`,
      `Slowest engine messages (type ms): ${[...training.messages]
        .sort((a, b) => b.duration - a.duration)
        .slice(0, 5)
        .map((m) => `${m.type} ${m.duration.toFixed(0)}`)
        .join(', ')}.`,
      `Idle page before Train: ${idle.frames.length} long frames, slowest ${Math.max(0, ...idle.frames.map((f) => f.duration)).toFixed(0)} ms.`,
    );
    return {
      title: 'Page main thread while training',
      environment: `built page ${path || '(no query string: the defaults)'}, ${seconds} s of Train, headless Chromium, ${stepMessages.length} steps landed`,
      columns: ['figure', 'value', 'budget'],
      rows: [
        ['frames over 200 ms', over200.length, 0],
        ['slowest frame (ms)', Math.max(0, ...training.frames.map((f) => f.duration)), '≤ 200'],
        [
          'most render time in one frame (ms)',
          Math.max(0, ...training.frames.map((f) => f.renderMs)),
          '',
        ],
        ['long frames (> 50 ms)', training.frames.length, ''],
        ['engine messages handled', allMs.length, ''],
        ['main-thread ms per step message, median', quantile(stepMs, 0.5), '≤ 50'],
        ['main-thread ms per step message, max', Math.max(0, ...stepMs), ''],
        ['main-thread ms per engine message, median', quantile(allMs, 0.5), '≤ 50'],
      ],
      notes,
    };
  } finally {
    await browser.close();
    await server.close();
  }
};
