// The page ↔ engine Worker protocol: commands in, events out. Everything crossing it is
// plain structured-clonable data; the Worker owns the models, the sandbox pool and the run.
import type { BackendReport } from '../gpu/backend';
import type { RunConfig, RunSnapshot, StepReport } from './types';

export type EngineCommand =
  /** Start (or replace) the run: from the shipped warm start, or from a saved snapshot. */
  | { type: 'start'; runId: string; config: RunConfig; snapshot?: RunSnapshot }
  /** Keep stepping until paused. */
  | { type: 'train' }
  | { type: 'pause' }
  /** Exactly one GRPO step, then pause. */
  | { type: 'step' }
  /** Ask for a snapshot of the run (for IndexedDB and export). */
  | { type: 'snapshot' }
  /**
   * Supervised warm start from scratch for both roles (progress events as it goes), then a
   * new run on the models it made. Pause ends it early with the models trained so far.
   */
  | { type: 'warmstart'; runId: string; config: RunConfig; minutes: number; seed: number }
  /** Judge one program (the inspector's Run), without touching the run. */
  | {
      type: 'judge';
      requestId: number;
      code: string;
      entryPoint: string;
      tests: { args: unknown[]; expected: unknown }[];
    }
  /** "Your own task": a hand-written task file's text; the models answer its first task. */
  | { type: 'solve'; requestId: number; taskFile: string };

export type EngineStatus = 'loading' | 'idle' | 'training' | 'stepping' | 'warmstart' | 'failed';

export type EngineEvent =
  | { type: 'backend'; report: BackendReport }
  | { type: 'status'; status: EngineStatus; runId: string | null; step: number }
  | { type: 'step'; runId: string; report: StepReport }
  | { type: 'snapshot'; runId: string; snapshot: RunSnapshot }
  | { type: 'progress'; task: string; fraction: number; message: string; etaSec: number | null }
  | { type: 'judged'; requestId: number; result: import('../sandbox/types').RunResult }
  | {
      type: 'solved';
      requestId: number;
      group: import('./types').SampleGroup | null;
      error?: string;
    }
  | {
      type: 'solved';
      requestId: number;
      group: import('./types').SampleGroup | null;
      error?: string;
    }
  /** `recoverable`: the run can continue from its last snapshot (lost device, crashed sandbox). */
  | { type: 'error'; message: string; recoverable: boolean };
