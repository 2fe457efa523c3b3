// What counts as a fatal engine failure, how the page recovers from one, and the words it
// says about it. Pure functions: the engine Worker classifies, the page plans the restart,
// and both are unit-tested without a Worker.

/**
 * `out_of_memory`: the backend's memory ran out (the step is retried with smaller
 * micro-batches); `crash`: anything else that broke a step (retried as it was).
 */
export type FailureKind = 'out_of_memory' | 'crash';

export interface EngineFailure {
  kind: FailureKind;
  /** The error's own words (or the log line that gave it away). */
  message: string;
}

/**
 * Signs of an exhausted backend. A wasm heap that cannot grow shows up as a trap on a bad
 * pointer or as emscripten's `Aborted(...)`; tfjs and the browser use the other two words.
 */
const OUT_OF_MEMORY_SIGNS: readonly RegExp[] = [
  /memory access out of bounds/i,
  /Aborted\(/,
  /out of memory/i,
  /Array buffer allocation failed/i,
];

/**
 * tfjs-backend-wasm's line when an XNNPACK call fails ("XNN status for
 * xnn_create_fully_connected_nc_f32 is not successful. Got status 6"). The kernel then
 * returns without writing its output, so anything computed after it is garbage: this line
 * ends the step, it is never just a warning. Status 6 is XNNPACK's out-of-memory.
 */
const XNN_FAILURE = /XNN status\b.*\bnot successful/i;

export function isXnnFailureLine(line: string): boolean {
  return XNN_FAILURE.test(line);
}

/**
 * Wraps every console method, before the wasm backend starts (emscripten binds its print
 * functions to the console methods that exist when the module is created): keeps the last
 * `keep` lines in `recent`, and on XNNPACK's failure line calls `onFailure` and throws inside
 * that call, so the step stops before anything is computed from the unwritten output. The
 * page's engine Worker and the CLI both run under it.
 */
export function watchEngineLog(
  recent: string[],
  onFailure: (error: Error) => void,
  keep = 20,
): void {
  for (const method of ['log', 'info', 'warn', 'error', 'debug'] as const) {
    const original = console[method].bind(console);
    console[method] = (...args: unknown[]) => {
      original(...args);
      const line = args.map(String).join(' ');
      recent.push(line);
      if (recent.length > keep) recent.shift();
      if (isXnnFailureLine(line)) {
        const error = new Error(line);
        onFailure(error);
        throw error;
      }
    };
  }
}

export function errorText(error: unknown): string {
  if (error instanceof Error) return error.message || error.name;
  if (typeof error === 'string') return error;
  if (error && typeof error === 'object' && 'message' in error) {
    return String((error as { message: unknown }).message);
  }
  return String(error);
}

/** Whether `text` (an error message or a logged line) says the backend ran out of memory. */
export function looksOutOfMemory(text: string): boolean {
  return isXnnFailureLine(text) || OUT_OF_MEMORY_SIGNS.some((sign) => sign.test(text));
}

/**
 * Classifies an error that broke a step, together with the lines the engine logged just
 * before it: an XNNPACK failure line makes any later error an out-of-memory, since what
 * failed next was computing on the output the failed op never wrote.
 */
export function classifyFailure(
  error: unknown,
  loggedLines: readonly string[] = [],
): EngineFailure {
  const message = errorText(error);
  if (looksOutOfMemory(message)) return { kind: 'out_of_memory', message };
  const xnnLine = loggedLines.find(isXnnFailureLine);
  if (xnnLine) return { kind: 'out_of_memory', message: xnnLine };
  return { kind: 'crash', message };
}

/** Below this a micro-batch holds too little to be worth retrying. */
export const MIN_MEMORY_BUDGET_MIB = 16;
/** Failures in a row, without a step landing in between, before the page stops retrying. */
export const MAX_CONSECUTIVE_FAILURES = 4;
/**
 * The budget to halve when the engine never said its own: wasm's default (src/model/memory.ts,
 * not imported here: this module reaches the page's main thread, which must not load tfjs).
 */
export const FALLBACK_MEMORY_BUDGET_MIB = 256;

export type RecoveryPlan =
  /** Restart from the last saved step with this budget (undefined: the backend's own). */
  | { action: 'retry'; memoryBudgetMiB: number | undefined }
  /** Restart from the last saved step, but stop there: retrying would fail again. */
  | {
      action: 'give_up';
      memoryBudgetMiB: number | undefined;
      why: 'budget_floor' | 'too_many_failures';
    };

export interface RecoveryInput {
  failure: EngineFailure;
  /** Failures in a row including this one. */
  consecutiveFailures: number;
  /** The run's budget override, if it has one. */
  configuredBudgetMiB: number | undefined;
  /** The budget the engine reported it was using, if it reported one. */
  effectiveBudgetMiB: number | undefined;
}

/**
 * What the page does after a fatal failure: an out-of-memory halves the micro-batch budget
 * (until it would fall under MIN_MEMORY_BUDGET_MIB), a crash retries as it was; either
 * gives up after MAX_CONSECUTIVE_FAILURES in a row.
 */
export function planRecovery(input: RecoveryInput): RecoveryPlan {
  const current = input.configuredBudgetMiB ?? input.effectiveBudgetMiB;
  const kept = input.configuredBudgetMiB;
  if (input.consecutiveFailures >= MAX_CONSECUTIVE_FAILURES) {
    return { action: 'give_up', memoryBudgetMiB: kept, why: 'too_many_failures' };
  }
  if (input.failure.kind === 'crash') return { action: 'retry', memoryBudgetMiB: kept };
  const halved = Math.floor((current ?? FALLBACK_MEMORY_BUDGET_MIB) / 2);
  if (halved < MIN_MEMORY_BUDGET_MIB) {
    return { action: 'give_up', memoryBudgetMiB: kept, why: 'budget_floor' };
  }
  return { action: 'retry', memoryBudgetMiB: halved };
}

export interface RecoveryReport {
  failure: EngineFailure;
  /** What the engine was doing, in words ("the Coder update (64 sequences)"). */
  activity: string;
  plan: RecoveryPlan;
  /** The last saved step, the one the run restarts from. */
  savedStep: number;
  consecutiveFailures: number;
}

/** What happened and what the page did about it, in one or two plain sentences. */
export function describeRecovery(report: RecoveryReport): string {
  const { failure, activity, plan, savedStep, consecutiveFailures } = report;
  const where = `from its last saved step (${savedStep})`;
  if (failure.kind === 'out_of_memory') {
    if (plan.action === 'retry') {
      return `Ran out of memory in ${activity}; retrying ${where} with smaller micro-batches (${plan.memoryBudgetMiB} MiB).`;
    }
    const why =
      plan.why === 'budget_floor'
        ? `halving the micro-batches again would take them under ${MIN_MEMORY_BUDGET_MIB} MiB`
        : `that is ${consecutiveFailures} failures in a row`;
    return (
      `Ran out of memory in ${activity}; stopped retrying: ${why}. The run is kept ${where}; ` +
      'fewer tasks per step, plans or programs need less memory.'
    );
  }
  if (plan.action === 'retry') {
    return `The engine failed in ${activity} (${failure.message}); restarted it and retrying ${where}.`;
  }
  return (
    `The engine failed in ${activity} (${failure.message}); stopped retrying: that is ` +
    `${consecutiveFailures} failures in a row. The run is kept ${where}.`
  );
}
