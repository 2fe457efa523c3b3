// One KaTeX formula. The TeX is built by the explainer from numbers, never from user text,
// so injecting KaTeX's HTML is safe. A display formula wider than its column is scaled down
// to fit (KaTeX never line-breaks display maths), so nothing runs past the explainer's edge.
import katex from 'katex';
import 'katex/dist/katex.min.css';
import { useLayoutEffect, useMemo, useRef } from 'react';
import { watchOnScreen } from '../onScreen';

/** Below this scale a formula gets too small to read; it scrolls inside its own box instead. */
const MIN_SCALE = 0.45;

/**
 * Formulas to fit at the next frame, all at once: every width is read first, then every
 * scale written, so a step's dozen formulas cost one layout, not one each.
 */
const pending = new Set<HTMLElement>();
let scheduled = false;

function scheduleFit(box: HTMLElement) {
  pending.add(box);
  if (scheduled) return;
  scheduled = true;
  requestAnimationFrame(fitPending);
}

/** The formula's own width, whatever its box's width (its glyphs' extent). */
function contentWidth(box: HTMLElement): number {
  const html = box.querySelector('.katex-html');
  if (!html) return 0;
  const range = document.createRange();
  range.selectNodeContents(html);
  return range.getBoundingClientRect().width;
}

/** Display formulas on screen now; one off screen is fitted when it scrolls in. */
const onScreen = new WeakSet<HTMLElement>();

function fitPending() {
  scheduled = false;
  // Measuring a formula off screen would force the layout the browser skips there.
  const boxes = [...pending].filter((box) => box.isConnected && onScreen.has(box));
  for (const box of boxes) pending.delete(box);
  const sizes = boxes.map((box) => ({
    box,
    available: box.clientWidth,
    // At the scale it has now; font-size scales every glyph alike.
    natural: contentWidth(box) / Number(box.dataset.scale ?? 1),
  }));
  for (const { box, available, natural } of sizes) {
    // A hair under the exact ratio: sub-pixel rounding must not leave a 1 px overflow.
    const scale =
      available > 0 && natural > available ? Math.max(MIN_SCALE, (available / natural) * 0.98) : 1;
    if (scale === Number(box.dataset.scale ?? 1)) continue;
    box.dataset.scale = String(scale);
    box.style.fontSize = scale === 1 ? '' : `${scale}em`;
  }
}

/** Typeset formulas by TeX, newest last: a step re-renders many formulas unchanged. */
const typeset = new Map<string, string>();
const TYPESET_KEPT = 400;

function typesetHtml(tex: string, display: boolean): string {
  const key = `${display ? 'D' : 'I'}${tex}`;
  let html = typeset.get(key);
  if (html === undefined) {
    html = katex.renderToString(tex, { displayMode: display, throwOnError: false });
    if (typeset.size >= TYPESET_KEPT) typeset.delete(typeset.keys().next().value as string);
  } else {
    typeset.delete(key);
  }
  typeset.set(key, html);
  return html;
}

export function Tex({ tex, display = false }: { tex: string; display?: boolean }) {
  const html = useMemo(() => typesetHtml(tex, display), [tex, display]);
  const box = useRef<HTMLDivElement>(null);
  // biome-ignore lint/correctness/useExhaustiveDependencies: new HTML is a new width to fit.
  useLayoutEffect(() => {
    const element = box.current;
    if (!display || !element) return;
    scheduleFit(element);
    // The column's width changes with the window and with presentation mode.
    const observer = new ResizeObserver(() => scheduleFit(element));
    observer.observe(element);
    const unwatch = watchOnScreen(element, (visible) => {
      if (visible) {
        onScreen.add(element);
        scheduleFit(element);
      } else {
        onScreen.delete(element);
      }
    });
    return () => {
      observer.disconnect();
      unwatch();
      pending.delete(element);
    };
  }, [display, html]);
  if (!display) {
    // biome-ignore lint/security/noDangerouslySetInnerHtml: KaTeX output of TeX built from numbers.
    return <span className="tex" dangerouslySetInnerHTML={{ __html: html }} />;
  }
  // biome-ignore lint/security/noDangerouslySetInnerHtml: KaTeX output of TeX built from numbers.
  return <div ref={box} className="tex tex-display" dangerouslySetInnerHTML={{ __html: html }} />;
}
