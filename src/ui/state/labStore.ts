// The page's whole state in one place (TensorFlow Playground style): the run config (which
// round-trips through the URL), the runs with their metric series, recent sample groups,
// the inspector's selection, the engine's status and errors. Components read slices of it;
// only ui/bridge/runLifecycle.ts writes engine events into it (through applyEvent.ts).
import { create } from 'zustand';
import type {
  BackendReport,
  EngineStatus,
  LinkDownload,
  MetricRecord,
  RunConfig,
  SampleGroup,
  WarmStartSummary,
} from '../../engine/api';
import { DEFAULT_RUN_CONFIG } from '../../engine/api';

/** One point of a run's curves: the step and every metric measured at it. */
export interface MetricPoint {
  step: number;
  values: MetricRecord;
}

export interface RunRecord {
  id: string;
  name: string;
  config: RunConfig;
  createdAt: number;
  /** One entry per GRPO step (train metrics) plus eval points merged in at their step. */
  points: MetricPoint[];
  visible: boolean;
  /** A run made by a warm start from scratch: each role's loss as it trained, and the end. */
  warmStart?: WarmStartRecord;
}

export type WarmStartRole = WarmStartSummary['roles'][number]['role'];

export interface WarmStartRecord {
  curves: Partial<Record<WarmStartRole, { step: number; loss: number }[]>>;
  summary?: WarmStartSummary;
}

/** What the inspector shows: a step's group and, inside it, one plan and one program. */
export interface Selection {
  step: number;
  groupIndex: number;
  planIndex: number;
  programIndex: number;
}

export interface Progress {
  task: string;
  fraction: number;
  message: string;
  etaSec: number | null;
}

export interface LabState {
  config: RunConfig;
  configProblems: string[];
  runs: RunRecord[];
  activeRunId: string | null;
  /** Sample groups of the active run's recent steps, newest last (capped). */
  groups: { step: number; groups: SampleGroup[] }[];
  selection: Selection | null;
  status: EngineStatus;
  step: number;
  backend: BackendReport | null;
  /** The micro-batch budget the engine reported it uses, in MiB (null: not reported). */
  memoryBudgetMiB: number | null;
  progress: Progress | null;
  /** What the engine is doing inside a step ("the evaluation"), null between steps. */
  activity: string | null;
  errors: { id: number; message: string; recoverable: boolean }[];
  /** A link's base waiting for the user's click before it downloads (linkConsent.ts). */
  pendingDownload: LinkDownload | null;
  /** The classroom lesson open on the page (URL `lesson`) and the settings it was opened with. */
  lesson: { id: string; base: RunConfig } | null;
  presentation: boolean;
  /** Stay on the selected step when new steps land (else the selection follows the newest). */
  pinned: boolean;
  smoothing: number;
  logScale: boolean;
}

export const MAX_KEPT_STEPS = 200;

/** The charts' EMA weight on a first visit. */
export const DEFAULT_SMOOTHING = 0.6;

export const useLabStore = create<LabState>(() => ({
  config: DEFAULT_RUN_CONFIG,
  configProblems: [],
  runs: [],
  activeRunId: null,
  groups: [],
  selection: null,
  status: 'loading',
  step: 0,
  backend: null,
  memoryBudgetMiB: null,
  progress: null,
  activity: null,
  errors: [],
  pendingDownload: null,
  lesson: null,
  presentation: false,
  pinned: false,
  // Per-step rewards swing widely (a few programs per step): curves start smoothed.
  smoothing: DEFAULT_SMOOTHING,
  logScale: false,
}));

export function activeRun(state: LabState): RunRecord | undefined {
  return state.runs.find((run) => run.id === state.activeRunId);
}
