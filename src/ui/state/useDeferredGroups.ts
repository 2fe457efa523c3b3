// The kept groups and the selection, deferred: a new step or a click re-renders the
// inspector and the explainer as interruptible background work, so the main thread never
// blocks for long. `stale` is true while the screen still shows the previous value; the
// components expose it as `data-stale` so a browser test can wait for the screen to catch up.
import { useDeferredValue } from 'react';
import { useLabStore } from './labStore';

export function useDeferredGroups() {
  const liveGroups = useLabStore((state) => state.groups);
  const liveSelection = useLabStore((state) => state.selection);
  const groups = useDeferredValue(liveGroups);
  const selection = useDeferredValue(liveSelection);
  return { groups, selection, stale: groups !== liveGroups || selection !== liveSelection };
}
