// What an engine event does to the page's store, as a pure function: the state before and
// the event in, the patch to apply and the messages for the error banner out. No Worker,
// no IndexedDB, no URL: runLifecycle.ts applies the patch and does those.
import type { EngineEvent, SampleGroup } from '../../engine/api';
import { rewardSpreads } from '../charts/rewardSpread';
import { signalSelection } from '../inspector/signal';
import { type LabState, MAX_KEPT_STEPS, type WarmStartRecord } from '../state/labStore';
import type { Notice } from './notices';

export interface EventEffect {
  patch: Partial<LabState>;
  /** Messages for the error banner, in order. */
  notices: Notice[];
}

const NOTHING: EventEffect = { patch: {}, notices: [] };

/**
 * The store change one event makes. Events that only answer a request (`judged`,
 * `solved`, `snapshot`) or that restart the engine (`fatal`) change nothing here.
 */
export function applyEngineEvent(state: LabState, event: EngineEvent): EventEffect {
  switch (event.type) {
    case 'backend':
      return { patch: { backend: event.report }, notices: [] };
    case 'status':
      return {
        patch: {
          status: event.status,
          step: event.step,
          // A status sent before the run is loaded says nothing of its budget.
          ...(event.memoryBudgetMiB !== undefined
            ? { memoryBudgetMiB: event.memoryBudgetMiB }
            : {}),
          ...(event.status !== 'warmstart' ? { progress: null } : {}),
          ...(event.status !== 'training' && event.status !== 'stepping' ? { activity: null } : {}),
        },
        notices: [],
      };
    case 'step':
      return applyStep(state, event.runId, event.report);
    case 'warmstartLoss':
      return {
        patch: {
          runs: withWarmStart(state.runs, event.runId, (record) => ({
            ...record,
            curves: {
              ...record.curves,
              [event.role]: [
                ...(record.curves[event.role] ?? []),
                { step: event.step, loss: event.loss },
              ],
            },
          })),
        },
        notices: [],
      };
    case 'warmstartDone':
      return {
        patch: {
          runs: withWarmStart(state.runs, event.runId, (record) => ({
            ...record,
            summary: event.summary,
          })),
        },
        notices: [],
      };
    case 'eval':
      return { patch: { runs: withEvalPoint(state.runs, event.runId, event.report) }, notices: [] };
    case 'progress':
      return {
        patch: {
          progress: {
            task: event.task,
            fraction: event.fraction,
            message: event.message,
            etaSec: event.etaSec,
          },
        },
        notices: [],
      };
    case 'activity':
      return {
        patch: { activity: event.activity === 'idle' ? null : event.activity },
        notices: [],
      };
    case 'error':
      return { patch: {}, notices: [{ message: event.message, recoverable: event.recoverable }] };
    default:
      return NOTHING;
  }
}

function withWarmStart(
  runs: LabState['runs'],
  runId: string,
  update: (record: WarmStartRecord) => WarmStartRecord,
): LabState['runs'] {
  return runs.map((run) =>
    run.id === runId ? { ...run, warmStart: update(run.warmStart ?? { curves: {} }) } : run,
  );
}

/** The run's curves with an evaluation merged into its step's point (step 0 comes first). */
function withEvalPoint(
  runs: LabState['runs'],
  runId: string,
  report: Extract<EngineEvent, { type: 'eval' }>['report'],
): LabState['runs'] {
  return runs.map((run) => {
    if (run.id !== runId) return run;
    const existing = run.points.find((p) => p.step === report.step);
    const point = { step: report.step, values: { ...existing?.values, ...report.metrics } };
    const points = [...run.points.filter((p) => p.step !== report.step), point];
    return { ...run, points: points.sort((a, b) => a.step - b.step) };
  });
}

function applyStep(
  state: LabState,
  runId: string,
  report: Extract<EngineEvent, { type: 'step' }>['report'],
): EventEffect {
  const runs = state.runs.map((run) =>
    run.id !== runId
      ? run
      : {
          ...run,
          points: [
            ...run.points.filter((p) => p.step !== report.step),
            { step: report.step, values: { ...report.metrics, ...rewardSpreads(report.groups) } },
          ],
        },
  );
  // A run in the background (not the one shown) only gains its curve's point.
  if (runId !== state.activeRunId) return { patch: { runs }, notices: [] };
  // A step redone after a failure replaces the copy that landed before it.
  const groups: { step: number; groups: SampleGroup[] }[] = [
    ...state.groups.filter((g) => g.step < report.step),
    { step: report.step, groups: report.groups },
  ].slice(-MAX_KEPT_STEPS);
  const { selection } = state;
  const newest = state.groups.at(-1)?.step;
  // Follow the newest step unless pinned or the user is reading an older one; a followed
  // step opens on a group with signal (σ > 0), the one selected before when it has some.
  const follow =
    !state.pinned && (selection === null || newest === undefined || selection.step >= newest);
  return {
    patch: {
      runs,
      groups,
      step: report.step,
      selection: follow
        ? signalSelection(report.step, report.groups, selection?.groupIndex ?? 0)
        : selection,
    },
    notices: report.skippedUpdates.map((skipped) => ({
      message: `Step ${report.step}: ${skipped.role} update skipped (${skipped.reason}).`,
      recoverable: true,
    })),
  };
}
