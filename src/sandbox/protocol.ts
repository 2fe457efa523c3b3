// What travels between the pool and a worker. Expected values never leave the host: workers
// get programs and arguments, and send back raw outcomes (JSON text) that the host judges.
import type { ErrorKind, RunCost, RunLimits } from './types';

/** A cases job as the executor sees it: arguments only, as JSON text. */
export interface WireCasesJob {
  kind: 'cases';
  id: string;
  code: string;
  entryPoint: string;
  argsJson: string[];
  limits: RunLimits;
}

export interface WireScriptJob {
  kind: 'script';
  id: string;
  code: string;
  testScript: string;
  limits: RunLimits;
}

export type WireJob = WireCasesJob | WireScriptJob;

/** One test's raw outcome: a value (JSON text; undefined when it has no JSON form) or an error. */
export type RawOutcome =
  | { ok: true; json: string | undefined }
  | { ok: false; errorKind: ErrorKind; message: string };

export interface RawRunResult {
  id: string;
  /** A failure before any test could run (syntax error, missing entry point, …). */
  programError: { errorKind: ErrorKind; message: string } | null;
  outcomes: RawOutcome[];
  cost: RunCost;
}

export type ToWorker =
  | { type: 'init'; progress: SharedArrayBuffer | null }
  | { type: 'batch'; batchId: number; jobs: WireJob[] };

export type FromWorker =
  | { type: 'ready'; warmupMs: number }
  | { type: 'started'; batchId: number; index: number }
  | { type: 'results'; batchId: number; results: RawRunResult[] }
  | { type: 'crashed'; batchId: number; index: number; message: string };

/** Slots of the progress SharedArrayBuffer (Int32): which job of which batch is running. */
export const PROGRESS_BATCH = 0;
export const PROGRESS_INDEX = 1;
