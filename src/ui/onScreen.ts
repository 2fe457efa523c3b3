// Whether an element is on screen (or within a margin of it), so work for what nobody can
// see (typesetting the explainer, redrawing a chart below the fold) waits until it scrolls in.
import { type RefObject, startTransition, useEffect, useState } from 'react';

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

/**
 * Whether a `content-visibility: auto` element may render its heavy content, once it has some
 * (`active`): when it is on screen, or once the browser skips its rendering (off screen:
 * rendering into it then costs no layout). Chromium renders such an element fully until it
 * first skips it, and the explainer was on screen while the page was short, before the charts
 * pushed it down: its first typeset step landed in one frame of style and layout over ~3,000
 * elements below the fold (bench page --trace). Watching starts with the content, so an early
 * glimpse does not count.
 */
export function useRenderWhenSkippedOrSeen(
  ref: RefObject<HTMLElement | null>,
  active: boolean,
): boolean {
  const [ready, setReady] = useState(false);
  useEffect(() => {
    const element = ref.current;
    if (!element || ready || !active) return;
    const onState = (event: Event) => {
      // A transition: the heavy render yields to the page every few ms instead of one long task.
      if ((event as Event & { skipped?: boolean }).skipped) startTransition(() => setReady(true));
    };
    element.addEventListener('contentvisibilityautostatechange', onState);
    const stop = watchOnScreen(element, (visible) => {
      if (visible) startTransition(() => setReady(true));
    });
    return () => {
      element.removeEventListener('contentvisibilityautostatechange', onState);
      stop();
    };
  }, [ref, ready, active]);
  return ready;
}
