// Where a run runs, in the words the CLI's start event and the page's backend line share
// (issue 33): the engine that samples and updates — the lab's WebGPU kernels on their adapter,
// or tfjs's backend — and, apart from it, the tfjs backend kept for the fall-back (it holds the
// weights, evaluates, and takes over if the kernels stop). Plain data: the page reads it.
import type { BackendReport } from './backend';

export interface RunsOn {
  /** What samples and updates: 'kernels', or the tfjs backend's name. */
  engine: string;
  /** The adapter (or CPU path) the engine runs on. */
  adapter: string;
  /** With the kernels: the tfjs backend kept for the fall-back; null when tfjs itself runs. */
  fallback: string | null;
}

export function runsOn(report: BackendReport): RunsOn {
  return report.kernels
    ? { engine: 'kernels', adapter: report.adapter, fallback: report.backend }
    : { engine: report.backend, adapter: report.adapter, fallback: null };
}
