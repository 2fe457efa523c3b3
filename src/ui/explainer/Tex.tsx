// One KaTeX formula. The TeX is built by the explainer from numbers, never from user text,
// so injecting KaTeX's HTML is safe. A display formula wider than its column is scaled down
// to fit (KaTeX never line-breaks display maths), so nothing runs past the explainer's edge.
import katex from 'katex';
import 'katex/dist/katex.min.css';
import { useLayoutEffect, useMemo, useRef } from 'react';

/** Below this scale a formula gets too small to read; it scrolls inside its own box instead. */
const MIN_SCALE = 0.45;

/** Scales `box`'s formula to its width: font-size shrinks by the overflow's ratio. */
function fitToWidth(box: HTMLElement) {
  box.style.fontSize = '';
  const formula = box.querySelector<HTMLElement>('.katex');
  if (!formula) return;
  const available = box.clientWidth;
  const natural = formula.scrollWidth;
  if (available <= 0 || natural <= available) return;
  // A hair under the exact ratio: sub-pixel rounding must not leave a 1 px overflow.
  box.style.fontSize = `${Math.max(MIN_SCALE, (available / natural) * 0.98)}em`;
}

export function Tex({ tex, display = false }: { tex: string; display?: boolean }) {
  const html = useMemo(
    () => katex.renderToString(tex, { displayMode: display, throwOnError: false }),
    [tex, display],
  );
  const box = useRef<HTMLDivElement>(null);
  // biome-ignore lint/correctness/useExhaustiveDependencies: new HTML is a new width to fit.
  useLayoutEffect(() => {
    const element = box.current;
    if (!display || !element) return;
    fitToWidth(element);
    // The column's width changes with the window and with presentation mode.
    let width = element.clientWidth;
    const observer = new ResizeObserver(() => {
      if (element.clientWidth === width) return;
      width = element.clientWidth;
      fitToWidth(element);
    });
    observer.observe(element);
    return () => observer.disconnect();
  }, [display, html]);
  if (!display) {
    // biome-ignore lint/security/noDangerouslySetInnerHtml: KaTeX output of TeX built from numbers.
    return <span className="tex" dangerouslySetInnerHTML={{ __html: html }} />;
  }
  // biome-ignore lint/security/noDangerouslySetInnerHtml: KaTeX output of TeX built from numbers.
  return <div ref={box} className="tex tex-display" dangerouslySetInnerHTML={{ __html: html }} />;
}
