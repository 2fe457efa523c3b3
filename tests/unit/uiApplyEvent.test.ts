// The page's event → store step, as a pure function: what each engine event changes.
import { describe, expect, it } from 'vitest';
import type { EngineEvent, SampleGroup, StepReport } from '../../src/engine/api';
import { DEFAULT_RUN_CONFIG } from '../../src/engine/api';
import { applyEngineEvent } from '../../src/ui/bridge/applyEvent';
import { type LabState, MAX_KEPT_STEPS, type RunRecord } from '../../src/ui/state/labStore';

function run(id: string): RunRecord {
  return {
    id,
    name: id,
    config: DEFAULT_RUN_CONFIG,
    createdAt: 0,
    points: [],
    visible: true,
  };
}

function labState(overrides: Partial<LabState> = {}): LabState {
  return {
    config: DEFAULT_RUN_CONFIG,
    configProblems: [],
    runs: [run('a'), run('b')],
    activeRunId: 'a',
    groups: [],
    selection: null,
    status: 'training',
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
    smoothing: 0,
    logScale: false,
    ...overrides,
  };
}

function parts(total: number) {
  return { passFraction: total, efficiency: 0, formatPenalty: 0, total };
}

function group(step: number, taskId = `t${step}`): SampleGroup {
  return {
    step,
    taskId,
    tier: 'L1',
    family: 'f',
    statement: 's',
    entryPoint: 'f',
    tests: [],
    reference: [],
    plans: [],
  };
}

function stepEvent(runId: string, step: number, extra: Partial<StepReport> = {}): EngineEvent {
  return {
    type: 'step',
    runId,
    report: {
      step,
      metrics: { 'coder/reward': step / 10 },
      groups: [group(step)],
      skippedUpdates: [],
      ...extra,
    },
  };
}

describe('applyEngineEvent', () => {
  it('takes the backend report', () => {
    const report = { backend: 'wasm' as const, adapter: 'tfjs wasm SIMD', reason: 'no adapter' };
    expect(applyEngineEvent(labState(), { type: 'backend', report })).toEqual({
      patch: { backend: report },
      notices: [],
    });
  });

  it('takes status and step, the budget only when the engine reports one, and ends progress', () => {
    const state = labState({
      progress: { task: 'warm start', fraction: 1, message: 'done', etaSec: 0 },
    });
    expect(
      applyEngineEvent(state, {
        type: 'status',
        status: 'idle',
        runId: 'a',
        step: 3,
        memoryBudgetMiB: 256,
      }).patch,
    ).toEqual({
      status: 'idle',
      step: 3,
      memoryBudgetMiB: 256,
      progress: null,
      activity: null,
    });
    const loading = applyEngineEvent(state, {
      type: 'status',
      status: 'loading',
      runId: null,
      step: 0,
    });
    expect(loading.patch).not.toHaveProperty('memoryBudgetMiB');
    // The warm start's own status keeps its progress bar.
    const warm = applyEngineEvent(state, {
      type: 'status',
      status: 'warmstart',
      runId: 'a',
      step: 0,
    });
    expect(warm.patch).toEqual({ status: 'warmstart', step: 0, activity: null });
  });

  it('adds a step to the active run: its point, its groups, and the selection follows', () => {
    const state = labState({
      groups: [{ step: 1, groups: [group(1)] }],
      selection: { step: 1, groupIndex: 2, planIndex: 1, programIndex: 3 },
    });
    const { patch, notices } = applyEngineEvent(state, stepEvent('a', 2));
    expect(notices).toEqual([]);
    expect(patch.step).toBe(2);
    expect(patch.runs?.find((r) => r.id === 'a')?.points).toEqual([
      { step: 2, values: { 'coder/reward': 0.2 } },
    ]);
    expect(patch.runs?.find((r) => r.id === 'b')).toBe(state.runs[1]);
    expect(patch.groups?.map((g) => g.step)).toEqual([1, 2]);
    // It follows to the new step; no group there has signal, so it opens on the first.
    expect(patch.selection).toEqual({ step: 2, groupIndex: 0, planIndex: 0, programIndex: 0 });
    // Pure: the state it was given is unchanged.
    expect(state.runs[0]?.points).toEqual([]);
    expect(state.groups).toHaveLength(1);
  });

  it('leaves the selection on an older step the user is reading', () => {
    const reading = { step: 1, groupIndex: 0, planIndex: 0, programIndex: 0 };
    const state = labState({
      groups: [1, 2].map((s) => ({ step: s, groups: [group(s)] })),
      selection: reading,
    });
    expect(applyEngineEvent(state, stepEvent('a', 3)).patch.selection).toBe(reading);
    expect(applyEngineEvent(labState(), stepEvent('a', 1)).patch.selection).toEqual({
      step: 1,
      groupIndex: 0,
      planIndex: 0,
      programIndex: 0,
    });
  });

  it('opens a followed step on a group with signal, and stays put when pinned', () => {
    const withRewards = (step: number, rewards: number[][]): SampleGroup => ({
      ...group(step),
      plans: rewards.map((programs) => ({
        plan: 'p',
        reward: parts(programs.reduce((a, b) => a + b, 0) / programs.length),
        advantage: 0,
        tokens: 1,
        programs: programs.map((r) => ({
          completion: '',
          code: '',
          reward: parts(r),
          advantage: 0,
          passCount: 0,
          total: 1,
          errorKind: null,
          work: null,
          peakBytes: null,
          tokens: 1,
        })),
      })),
    });
    const flat = withRewards(2, [
      [1, 1],
      [1, 1],
    ]);
    const signal = withRewards(2, [
      [1, 1],
      [0, 1],
    ]);
    const state = labState({
      groups: [{ step: 1, groups: [group(1)] }],
      selection: { step: 1, groupIndex: 0, planIndex: 0, programIndex: 0 },
    });
    const report = { ...(stepEvent('a', 2) as Extract<EngineEvent, { type: 'step' }>) };
    report.report = { ...report.report, groups: [flat, signal] };
    expect(applyEngineEvent(state, report).patch.selection).toEqual({
      step: 2,
      groupIndex: 1,
      planIndex: 1,
      programIndex: 0,
    });
    const pinned = labState({ ...state, pinned: true });
    expect(applyEngineEvent(pinned, report).patch.selection).toBe(pinned.selection);
  });

  it('merges an evaluation into its step: step 0 comes first', () => {
    const state = labState({
      runs: [{ ...run('a'), points: [{ step: 1, values: { 'coder/reward': 0.5 } }] }],
    });
    const { patch } = applyEngineEvent(state, {
      type: 'eval',
      runId: 'a',
      report: { step: 0, metrics: { 'eval/pass@1': 0.25 } },
    });
    expect(patch.runs?.[0]?.points).toEqual([
      { step: 0, values: { 'eval/pass@1': 0.25 } },
      { step: 1, values: { 'coder/reward': 0.5 } },
    ]);
  });

  it('replaces a step redone after a failure, and keeps at most MAX_KEPT_STEPS steps', () => {
    const state = labState({
      runs: [{ ...run('a'), points: [{ step: 2, values: { 'coder/reward': 9 } }] }],
      groups: [1, 2, 3].map((s) => ({ step: s, groups: [group(s, 'old')] })),
    });
    const { patch } = applyEngineEvent(state, stepEvent('a', 2));
    expect(patch.groups?.map((g) => [g.step, g.groups[0]?.taskId])).toEqual([
      [1, 'old'],
      [2, 't2'],
    ]);
    expect(patch.runs?.[0]?.points).toEqual([{ step: 2, values: { 'coder/reward': 0.2 } }]);
    const full = labState({
      groups: Array.from({ length: MAX_KEPT_STEPS }, (_, i) => ({ step: i + 1, groups: [] })),
    });
    const kept = applyEngineEvent(full, stepEvent('a', MAX_KEPT_STEPS + 1)).patch.groups ?? [];
    expect(kept).toHaveLength(MAX_KEPT_STEPS);
    expect(kept[0]?.step).toBe(2);
    expect(kept.at(-1)?.step).toBe(MAX_KEPT_STEPS + 1);
  });

  it('gives a background run only its point', () => {
    const { patch, notices } = applyEngineEvent(
      labState(),
      stepEvent('b', 4, { skippedUpdates: [{ role: 'coder', reason: 'NaN loss' }] }),
    );
    expect(Object.keys(patch)).toEqual(['runs']);
    expect(patch.runs?.[1]?.points).toEqual([{ step: 4, values: { 'coder/reward': 0.4 } }]);
    expect(notices).toEqual([]);
  });

  it('names a skipped update of the active run in the error banner', () => {
    const { notices } = applyEngineEvent(
      labState(),
      stepEvent('a', 5, { skippedUpdates: [{ role: 'planner', reason: 'gradient norm Inf' }] }),
    );
    expect(notices).toEqual([
      { message: 'Step 5: planner update skipped (gradient norm Inf).', recoverable: true },
    ]);
  });

  it('shows progress and errors; answers and fatal failures change nothing here', () => {
    const state = labState();
    expect(
      applyEngineEvent(state, {
        type: 'progress',
        task: 'warm start',
        fraction: 0.5,
        message: 'coder',
        etaSec: 12,
      }).patch,
    ).toEqual({ progress: { task: 'warm start', fraction: 0.5, message: 'coder', etaSec: 12 } });
    expect(
      applyEngineEvent(state, { type: 'error', message: 'lost device', recoverable: true }),
    ).toEqual({ patch: {}, notices: [{ message: 'lost device', recoverable: true }] });
    for (const event of [
      {
        type: 'snapshot',
        runId: 'a',
        snapshot: { config: DEFAULT_RUN_CONFIG, step: 1, files: {} },
      },
      { type: 'solved', requestId: 1, group: null },
      { type: 'fatal', kind: 'crash', message: 'x', activity: 'a training step', step: 1 },
    ] as EngineEvent[]) {
      expect(applyEngineEvent(state, event)).toEqual({ patch: {}, notices: [] });
    }
  });
});
