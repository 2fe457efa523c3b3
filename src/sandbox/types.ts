// The sandbox's public contract. The host, not the sandboxed code, decides pass/fail:
// programs return values as JSON and the host compares them with the expected values.

/** Why a test (or a whole program) did not produce a value. */
export type ErrorKind =
  | 'syntax'
  | 'runtime'
  | 'timeout'
  | 'out_of_memory'
  | 'stack_overflow'
  | 'output_too_large'
  | 'watchdog_killed'
  | 'module_refused';

export interface RunLimits {
  /** Wall-clock budget for one program (all its tests), in ms. */
  deadlineMs: number;
  /** QuickJS heap limit, in bytes. */
  memoryBytes: number;
  /** QuickJS stack limit, in bytes (≤ 128 KB inside a Worker). */
  stackBytes: number;
  /** Largest JSON result or console output kept per test, in bytes. */
  outputBytes: number;
}

/** A structured test: call `entryPoint(...args)` and compare with `expected`. */
export interface CaseTest {
  args: unknown[];
  expected: unknown;
}

/** The lab's own tasks: a program defining `entryPoint`, judged case by case. */
export interface CasesJob {
  kind: 'cases';
  id: string;
  code: string;
  entryPoint: string;
  tests: CaseTest[];
  limits?: Partial<RunLimits>;
}

/** MBXP / HumanEval-X style: the program, then a test script that throws on a wrong answer. */
export interface ScriptJob {
  kind: 'script';
  id: string;
  code: string;
  testScript: string;
  limits?: Partial<RunLimits>;
}

export type SandboxJob = CasesJob | ScriptJob;

export interface TestVerdict {
  passed: boolean;
  /** The value the program returned, as JSON text (absent when it failed to produce one). */
  actual?: string;
  errorKind: ErrorKind | null;
  message?: string;
}

export interface RunCost {
  wallMs: number;
  /** Deterministic QuickJS work count (interrupt-handler polls), comparable across machines. */
  work: number;
  /** Peak QuickJS heap use during the run, in bytes. */
  peakBytes: number;
}

export interface RunResult {
  id: string;
  /** Every test passed. */
  passed: boolean;
  passCount: number;
  total: number;
  /** A program-level failure (syntax error, watchdog kill, …), else null. */
  errorKind: ErrorKind | null;
  message?: string;
  tests: TestVerdict[];
  cost: RunCost;
}

export interface Sandbox {
  /** Runs jobs (batched across the pool's workers); results come back in job order. */
  run(jobs: SandboxJob[]): Promise<RunResult[]>;
  close(): Promise<void>;
}
