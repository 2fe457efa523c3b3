// Store actions for the runs table and the chart/explainer controls (owned by the charts
// work; kept apart from labStore.ts so the store's owner keeps a small file).
import { useLabStore } from './labStore';

export function setRunVisible(id: string, visible: boolean): void {
  useLabStore.setState((state) => ({
    runs: state.runs.map((run) => (run.id === id ? { ...run, visible } : run)),
  }));
}

/** Makes a run the active one (the one the inspector and explainer follow). */
export function setActiveRun(id: string): void {
  useLabStore.setState({ activeRunId: id });
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
  if (state.activeRunId === id) {
    useLabStore.setState({ runs, activeRunId: null, groups: [], selection: null });
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
  useLabStore.setState({ presentation });
}
