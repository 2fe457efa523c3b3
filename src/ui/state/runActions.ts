// Store actions for the runs table and the chart/explainer controls (owned by the charts
// work; kept apart from labStore.ts so the store's owner keeps a small file).
import { newRun, switchToRun } from '../engineClient';
import * as db from '../persist/runsDb';
import { useLabStore } from './labStore';

export function setRunVisible(id: string, visible: boolean): void {
  useLabStore.setState((state) => ({
    runs: state.runs.map((run) => (run.id === id ? { ...run, visible } : run)),
  }));
  const run = useLabStore.getState().runs.find((r) => r.id === id);
  if (run) void db.saveRun(run);
}

/**
 * Makes a run the active one: the engine resumes it from its saved snapshot, and the
 * inspector and explainer follow its saved sample groups.
 */
export function setActiveRun(id: string): void {
  const state = useLabStore.getState();
  if (state.activeRunId === id || state.status === 'training' || state.status === 'stepping')
    return;
  void switchToRun(id);
}

/**
 * Removes a run. The active run's sample groups and selection go with it; the run that is
 * training cannot be deleted (the engine would keep writing into it).
 */
export function deleteRun(id: string): boolean {
  const state = useLabStore.getState();
  const busy = state.status === 'training' || state.status === 'stepping';
  if (busy && state.activeRunId === id) return false;
  const runs = state.runs.filter((run) => run.id !== id);
  void db.deleteRun(id);
  if (state.activeRunId === id) {
    useLabStore.setState({ runs, activeRunId: null, groups: [], selection: null });
    // The engine always has a run to step: the newest one left, else a fresh one.
    const newest = runs.at(-1);
    if (newest) void switchToRun(newest.id);
    else void newRun();
  } else {
    useLabStore.setState({ runs });
  }
  return true;
}

export function setSmoothing(smoothing: number): void {
  useLabStore.setState({ smoothing: Math.min(Math.max(smoothing, 0), 0.99) });
}

export function setLogScale(logScale: boolean): void {
  useLabStore.setState({ logScale });
}

export function setPresentation(presentation: boolean): void {
  // Leaving presentation mode unpins: the inspector has no "Follow new steps" switch.
  useLabStore.setState(presentation ? { presentation } : { presentation, pinned: false });
}
