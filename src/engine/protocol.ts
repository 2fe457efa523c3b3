// The page ↔ engine Worker protocol: commands in, events out. Everything crossing it is
// plain structured-clonable data; the Worker owns the models, the sandbox pool and the run.
import type { BackendReport } from '../gpu/backend';
import type { FailureKind } from './failure';
import type { EvalReport, RunConfig, RunSnapshot, StepReport } from './types';

export type EngineCommand =
  /**
   * Start (or replace) the run: from the shipped warm start, or from a saved snapshot. With a
   * snapshot, `config.memoryBudgetMiB` replaces the snapshot's (a retry after an
   * out-of-memory). `continueWith` trains or steps as soon as the run is loaded: a
   * restarted engine picks up what the user had asked of the one that failed.
   */
  | {
      type: 'start';
      runId: string;
      config: RunConfig;
      snapshot?: RunSnapshot;
      continueWith?: 'train' | 'step';
    }
  /** Keep stepping until paused. */
  | { type: 'train' }
  | { type: 'pause' }
  /** Exactly one GRPO step, then pause. */
  | { type: 'step' }
  /** Ask for a snapshot of the run (for export). */
  | { type: 'snapshot' }
  /** A run over a base: one role's adapter merged into the base, as a GGUF file (engine/roleGguf.ts). */
  | { type: 'exportGguf'; requestId: number; role: string }
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
  | { type: 'solve'; requestId: number; taskFile: string }
  /**
   * Test only: the next training step fails midway, after its programs are judged and
   * before any update. `throw`: a plain error; `abort`: the wasm heap is wrecked, as a real
   * out-of-memory leaves it, so this and every later wasm call in the Worker fails.
   */
  | { type: 'failNextStep'; how: 'throw' | 'abort' }
  /** Test only (`?test=1`): destroys the lab's kernels' GPU device mid-run. */
  | { type: 'loseDevice' };

export type EngineStatus = 'loading' | 'idle' | 'training' | 'stepping' | 'warmstart' | 'failed';

export type EngineEvent =
  | { type: 'backend'; report: BackendReport }
  | {
      type: 'status';
      status: EngineStatus;
      runId: string | null;
      step: number;
      /** The micro-batch budget the run uses, in MiB, when the engine reports one. */
      memoryBudgetMiB?: number;
    }
  | { type: 'step'; runId: string; report: StepReport }
  /**
   * An evaluation outside a step: the warm start's level, measured before a run's first step
   * when it evaluates periodically (`evalEvery` > 0), as `npm run train`'s step-0 line.
   */
  | { type: 'eval'; runId: string; report: EvalReport }
  /**
   * The run's snapshot, in answer to a `snapshot` command (Export run). Each step's snapshot
   * the Worker writes to IndexedDB itself (engine/labDb.ts) before its status says idle, so
   * the page's main thread never clones the weights while training.
   */
  | { type: 'snapshot'; runId: string; snapshot: RunSnapshot }
  /** The answer to exportGguf: the file's name and bytes in parts, or why not. */
  | {
      type: 'gguf';
      requestId: number;
      file: { name: string; parts: Uint8Array[] } | null;
      error?: string;
    }
  | { type: 'progress'; task: string; fraction: number; message: string; etaSec: number | null }
  /** A warm start's supervised loss for one role, each time it logs (the page's loss charts). */
  | {
      type: 'warmstartLoss';
      runId: string;
      role: 'planner' | 'coder' | 'shared';
      step: number;
      loss: number;
      tokensPerSec: number;
    }
  /** A warm start ended (its budget spent, or Pause): what each role got. */
  | { type: 'warmstartDone'; runId: string; summary: WarmStartSummary }
  /**
   * What the session is doing inside a step, each time it changes ("sampling (4 tasks)",
   * "the evaluation", "idle"): the page says "evaluating…" while it evaluates.
   */
  | { type: 'activity'; activity: string }
  | { type: 'judged'; requestId: number; result: import('../sandbox/types').RunResult }
  | {
      type: 'solved';
      requestId: number;
      group: import('./types').SampleGroup | null;
      error?: string;
    }
  /** `recoverable`: the run can continue from its last snapshot (lost device, crashed sandbox). */
  | { type: 'error'; message: string; recoverable: boolean }
  /**
   * The engine cannot go on (out of memory, an XNNPACK failure, a wasm abort, a step that
   * broke midway): its state is no longer trustworthy, so the page replaces the Worker and
   * restores the run from its last saved snapshot. Sent once; the Worker then ignores
   * every command.
   */
  | {
      type: 'fatal';
      kind: FailureKind;
      message: string;
      /** What the engine was doing, in words ("the Coder update (64 sequences)"). */
      activity: string;
      /** The step the run had completed (the failed one is step + 1). */
      step: number;
    };

/** What a warm start from scratch made, for the page's end summary. */
export interface WarmStartSummary {
  seconds: number;
  /** Ended by Pause before its budget. */
  stopped: boolean;
  roles: {
    role: 'planner' | 'coder' | 'shared';
    steps: number;
    examples: number;
    finalLoss: number;
    parameters: number;
  }[];
}
