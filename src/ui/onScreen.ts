// Whether an element is on screen (or within a margin of it), so work for what nobody can
// see (typesetting the explainer, redrawing a chart below the fold) waits until it scrolls in.
/** Just beyond the viewport counts as on screen: what scrolls in is already drawn. */
const MARGIN = '300px';

/** Calls `onChange(visible)` now and whenever the element enters or leaves the screen. */
export function watchOnScreen(element: Element, onChange: (visible: boolean) => void): () => void {
  const observer = new IntersectionObserver(
    (entries) => {
      const entry = entries.at(-1);
      if (entry) onChange(entry.isIntersecting);
    },
    { rootMargin: MARGIN },
  );
  observer.observe(element);
  return () => observer.disconnect();
}
