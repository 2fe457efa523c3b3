// Pure QuickJS execution: one fresh runtime + context per job, limits, work and memory
// accounting, raw outcomes. No Node or DOM imports, so the same code runs in a Web Worker,
// a worker_thread, or directly on a host thread.
import {
  newQuickJSWASMModule,
  type QuickJSHandle,
  type QuickJSWASMModule,
  RELEASE_SYNC,
} from 'quickjs-emscripten';
import { failure, timeoutOutcome } from './classify';
import { NotSerializable, OutputTooLarge, ReadFailed, toJsonText } from './marshal';
import { wrapTestScript } from './prelude';
import type { RawOutcome, RawRunResult, WireCasesJob, WireJob, WireScriptJob } from './protocol';
import { Run } from './run';

const IDENTIFIER = /^[A-Za-z_$][\w$]*$/;
const MESSAGE_CHARS = 500;

export interface Executor {
  execute(job: WireJob): RawRunResult;
  /** True once QuickJS aborted (e.g. freeing a runtime failed): load a new module to go on. */
  readonly broken: boolean;
}

export async function loadQuickJS(): Promise<QuickJSWASMModule> {
  return newQuickJSWASMModule(RELEASE_SYNC);
}

export function createExecutor(quickjs: QuickJSWASMModule): Executor {
  let broken = false;
  return {
    get broken() {
      return broken;
    },
    execute(job) {
      if (broken) throw new Error('QuickJS module aborted earlier; load a new one');
      const outcome = executeJob(quickjs, job);
      // The verdict was complete before the abort, so it is kept; the module is not.
      if (outcome.disposeFailed) broken = true;
      return outcome.result;
    },
  };
}

function executeJob(
  quickjs: QuickJSWASMModule,
  job: WireJob,
): { result: RawRunResult; disposeFailed: boolean } {
  const started = performance.now();
  const run = new Run(quickjs, job.limits);
  let result: Omit<RawRunResult, 'cost'>;
  try {
    // The modules cost a compile; only jobs that can reach them get them.
    run.installPrelude(job.kind === 'script' || /\brequire\b/.test(job.code));
    result = job.kind === 'cases' ? runCases(run, job) : runScript(run, job);
    run.sampleMemory();
  } catch (error) {
    run.dispose();
    throw error;
  }
  let disposeFailed = false;
  try {
    run.dispose();
  } catch {
    disposeFailed = true;
  }
  const cost = { wallMs: performance.now() - started, work: run.work, peakBytes: run.peakBytes };
  return { result: { ...result, cost }, disposeFailed };
}

/** Evaluates the program as a global script, then settles its promise jobs. */
function evalProgram(run: Run, code: string): RawOutcome | null {
  const evaluated = run.context.evalCode(code, 'program.js');
  if (evaluated.error) return failure(run, run.own(evaluated.error), 'compile');
  evaluated.value.dispose();
  const jobError = run.drainJobs();
  if (jobError) return failure(run, jobError, 'call');
  return run.timedOut ? timeoutOutcome() : null;
}

function runCases(run: Run, job: WireCasesJob): Omit<RawRunResult, 'cost'> {
  const fail = (outcome: RawOutcome & { ok: false }) => ({
    id: job.id,
    programError: { errorKind: outcome.errorKind, message: outcome.message },
    outcomes: job.argsJson.map(() => outcome),
  });
  if (!IDENTIFIER.test(job.entryPoint)) {
    return fail({
      ok: false,
      errorKind: 'runtime',
      message: `bad entry point name ${job.entryPoint}`,
    });
  }
  const programFailure = evalProgram(run, job.code);
  if (programFailure && !programFailure.ok) return fail(programFailure);
  // Looked up once, before any call: redefining the name later changes nothing.
  const lookup = run.context.evalCode(job.entryPoint, 'entry.js');
  if (lookup.error) return fail(failure(run, run.own(lookup.error), 'call'));
  const entry = run.own(lookup.value);
  if (run.context.typeof(entry) !== 'function') {
    return fail({
      ok: false,
      errorKind: 'runtime',
      message: `${job.entryPoint} is not a function`,
    });
  }
  const { jsonParse, apply } = run.intrinsics!;
  let workSampled = run.work;
  const outcomes = job.argsJson.map((argsJson): RawOutcome => {
    if (run.timedOut || Date.now() > run.deadline) return timeoutOutcome();
    // Arguments are built by the context's pristine JSON.parse; the call goes through its
    // pristine Reflect.apply, so nothing the program redefined sits between host and function.
    const argsText = run.own(run.context.newString(argsJson));
    const args = run.context.callFunction(jsonParse, run.context.undefined, argsText);
    if (args.error) return failure(run, run.own(args.error), 'call');
    const argsArray = run.own(args.value);
    const called = run.context.callFunction(
      apply,
      run.context.undefined,
      entry,
      run.context.undefined,
      argsArray,
    );
    if (called.error) return failure(run, run.own(called.error), 'call');
    const returned = run.own(called.value);
    const jobError = run.drainJobs();
    if (jobError) return failure(run, jobError, 'call');
    // A job interrupted inside a promise reaction only rejects its promise: check the clock.
    if (run.timedOut) return timeoutOutcome();
    const settled = settlePromise(run, returned);
    if ('error' in settled) return failure(run, settled.error, 'call');
    const outcome = readResult(run, settled.value, job.limits.outputBytes);
    // A sample costs ~15 µs: take one only after a test that did measurable work (≥1 poll);
    // the interrupt handler samples during long tests and the end of the job samples again.
    if (run.work > workSampled) {
      run.sampleMemory();
      workSampled = run.work;
    }
    return run.timedOut ? timeoutOutcome() : outcome;
  });
  return { id: job.id, programError: null, outcomes };
}

/** An async entry point's promise, once its jobs ran: its value or its rejection. */
function settlePromise(
  run: Run,
  value: QuickJSHandle,
): { value: QuickJSHandle } | { error: QuickJSHandle } {
  if (run.context.typeof(value) !== 'object') return { value };
  const state = run.context.getPromiseState(value);
  if (state.type === 'fulfilled')
    return state.notAPromise ? { value } : { value: run.own(state.value) };
  if (state.type === 'rejected') return { error: run.own(state.error) };
  return { error: run.own(run.context.newError('the returned promise never settled')) };
}

function readResult(run: Run, value: QuickJSHandle, limit: number): RawOutcome {
  const { isArray, get } = run.intrinsics!;
  try {
    return {
      ok: true,
      json: toJsonText(run.context, value, { limit, isArray, get, deadline: run.deadline }),
    };
  } catch (error) {
    // Own the VM's exception first: a live handle at dispose time aborts the whole runtime.
    if (error instanceof ReadFailed) run.own(error.error);
    if (run.timedOut) return timeoutOutcome();
    if (error instanceof ReadFailed) return failure(run, error.error, 'call');
    if (error instanceof OutputTooLarge)
      return { ok: false, errorKind: 'output_too_large', message: error.message };
    if (error instanceof NotSerializable) {
      if (error.message === 'timeout') return timeoutOutcome();
      return { ok: false, errorKind: 'runtime', message: error.message };
    }
    // A getter or proxy trap threw while the result was read.
    const message = error instanceof Error ? error.message : String(error);
    return {
      ok: false,
      errorKind: 'runtime',
      message: `reading the result failed: ${message}`.slice(0, MESSAGE_CHARS),
    };
  }
}

function runScript(run: Run, job: WireScriptJob): Omit<RawRunResult, 'cost'> {
  const done = (outcome: RawOutcome) => ({
    id: job.id,
    programError: outcome.ok ? null : { errorKind: outcome.errorKind, message: outcome.message },
    outcomes: [outcome],
  });
  // Separate units: the program cannot comment out, wrap or swallow the test text.
  const programFailure = evalProgram(run, job.code);
  if (programFailure) return done(programFailure);
  const compiled = run.context.evalCode(wrapTestScript(job.testScript), 'test.js');
  if (compiled.error) return done(failure(run, run.own(compiled.error), 'compile'));
  const testFn = run.own(compiled.value);
  // The test gets the original shims as parameters, whatever the program did to the globals.
  const shims = run.shims!;
  const params = [
    shims.require,
    shims.console,
    run.safeJSON,
    shims.module,
    shims.exports,
  ] as QuickJSHandle[];
  const called = run.context.callFunction(testFn, run.context.undefined, ...params);
  if (called.error)
    return { ...done(failure(run, run.own(called.error), 'call')), programError: null };
  run.own(called.value);
  const jobError = run.drainJobs();
  if (jobError) return { ...done(failure(run, jobError, 'call')), programError: null };
  if (run.timedOut) return { ...done(timeoutOutcome()), programError: null };
  // Only the host knows the test function returned normally: that is the completion token.
  return done({ ok: true, json: undefined });
}
