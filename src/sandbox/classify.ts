// Turning an exception from QuickJS into an error kind and a short message.
import type { QuickJSHandle } from 'quickjs-emscripten';
import type { RawOutcome } from './protocol';
import type { Run } from './run';
import type { ErrorKind } from './types';

const MESSAGE_CHARS = 500;

/** Where the exception came from: compiling/evaluating a unit, or calling into it. */
export type Phase = 'compile' | 'call';

export function timeoutOutcome(): RawOutcome {
  return { ok: false, errorKind: 'timeout', message: 'deadline exceeded' };
}

/** Classifies an exception from QuickJS into an error kind. */
export function failure(run: Run, error: QuickJSHandle, phase: Phase): RawOutcome & { ok: false } {
  if (run.timedOut) return { ok: false, errorKind: 'timeout', message: 'deadline exceeded' };
  const { name, message } = describeError(run, error);
  if (run.timedOut) return { ok: false, errorKind: 'timeout', message: 'deadline exceeded' };
  const text = `${name}${name && message ? ': ' : ''}${message}`.slice(0, MESSAGE_CHARS);
  let errorKind: ErrorKind = 'runtime';
  if (
    /out of memory|string too long|invalid string length/i.test(message) ||
    (name === '' && message === '' && nearMemoryLimit(run))
  ) {
    errorKind = 'out_of_memory';
  } else if (/stack overflow|call stack size/i.test(message)) errorKind = 'stack_overflow';
  else if (name === 'SyntaxError' && phase === 'compile') errorKind = 'syntax';
  else if (refusedModule(run) !== null && /Cannot find module/.test(message))
    errorKind = 'module_refused';
  if (errorKind === 'out_of_memory')
    run.peakBytes = Math.max(run.peakBytes, run.limits.memoryBytes);
  return { ok: false, errorKind, message: text || 'uncaught exception' };
}

/** Name and message of a thrown value, read from the host (getters run inside the VM's limits). */
function describeError(run: Run, error: QuickJSHandle): { name: string; message: string } {
  const { context } = run;
  try {
    const type = context.typeof(error);
    if (type === 'string') return { name: 'thrown value', message: context.getString(error) };
    if (type === 'number')
      return { name: 'thrown value', message: String(context.getNumber(error)) };
    if (type !== 'object' || context.sameValue(error, context.null))
      return { name: 'thrown value', message: type };
    const read = (key: string) => {
      const handle = context.getProp(error, key);
      const text = context.typeof(handle) === 'string' ? context.getString(handle) : '';
      handle.dispose();
      return text;
    };
    return { name: read('name'), message: read('message') };
  } catch {
    return { name: '', message: '' };
  }
}

function refusedModule(run: Run): string | null {
  return run.shims?.refused() ?? null;
}

function nearMemoryLimit(run: Run): boolean {
  run.sampleMemory();
  return run.peakBytes > run.limits.memoryBytes * 0.8;
}
