// One job's QuickJS runtime + context: limits, the interrupt handler (deadline and the `work`
// count), memory sampling, the shims installed before user code, and every handle to dispose.
import type {
  QuickJSContext,
  QuickJSHandle,
  QuickJSRuntime,
  QuickJSWASMModule,
} from 'quickjs-emscripten';
import { type HostShims, installHostShims } from './hostShims';
import { LIBRARY_SOURCE } from './prelude';
import type { RunLimits } from './types';

/** Sample the heap every this many interrupt polls (a poll is ~10k QuickJS operations). */
const MEMORY_SAMPLE_EVERY = 4;

/** Everything one job's run needs; disposed as a whole at the end. */
export class Run {
  readonly runtime: QuickJSRuntime;
  readonly context: QuickJSContext;
  readonly deadline: number;
  work = 0;
  peakBytes = 0;
  timedOut = false;
  /** The tests' JSON (from the library prelude), when the library was installed. */
  safeJSON: QuickJSHandle | undefined;
  shims: HostShims | undefined;
  /** Pristine intrinsics, captured before user code runs. */
  intrinsics:
    | { jsonParse: QuickJSHandle; apply: QuickJSHandle; isArray: QuickJSHandle; get: QuickJSHandle }
    | undefined;
  private readonly owned: QuickJSHandle[] = [];

  constructor(
    quickjs: QuickJSWASMModule,
    readonly limits: RunLimits,
  ) {
    this.deadline = Date.now() + limits.deadlineMs;
    this.runtime = quickjs.newRuntime();
    this.runtime.setMemoryLimit(limits.memoryBytes);
    this.runtime.setMaxStackSize(limits.stackBytes);
    this.runtime.setInterruptHandler(() => {
      this.work++;
      if (this.work % MEMORY_SAMPLE_EVERY === 0) this.sampleMemory();
      if (Date.now() > this.deadline) this.timedOut = true;
      return this.timedOut;
    });
    this.context = this.runtime.newContext();
    // computeMemoryUsage would otherwise create a second, "system" context per runtime (~0.1 ms).
    this.runtime.context = this.context;
  }

  /** Captures intrinsics and installs the shims; all reachable only through host handles. */
  installPrelude(withLibrary: boolean): void {
    const { context } = this;
    const pick = (object: string, name: string) => {
      const holder = context.getProp(context.global, object);
      const fn = this.own(context.getProp(holder, name));
      holder.dispose();
      return fn;
    };
    this.intrinsics = {
      jsonParse: pick('JSON', 'parse'),
      apply: pick('Reflect', 'apply'),
      isArray: pick('Array', 'isArray'),
      get: pick('Reflect', 'get'),
    };
    this.shims = installHostShims(context, pick('Object', 'freeze'));
    this.owned.push(...this.shims.handles);
    if (!withLibrary) return;
    const library = this.own(context.unwrapResult(context.evalCode(LIBRARY_SOURCE, 'library.js')));
    const assert = this.own(context.getProp(library, 'assert'));
    const lodash = this.own(context.getProp(library, 'lodash'));
    this.safeJSON = this.own(context.getProp(library, 'JSON'));
    this.shims.setModules({ assert, lodash });
  }

  own(handle: QuickJSHandle): QuickJSHandle {
    this.owned.push(handle);
    return handle;
  }

  sampleMemory(): void {
    try {
      const usage = this.runtime.computeMemoryUsage();
      const used = this.context.getProp(usage, 'memory_used_size');
      const bytes = this.context.getNumber(used);
      used.dispose();
      usage.dispose();
      if (bytes > this.peakBytes) this.peakBytes = bytes;
    } catch {
      // Sampling can fail when the heap is at its limit; the OOM verdict records that instead.
    }
  }

  /** Runs queued promise jobs; returns the exception handle that stopped them, if any. */
  drainJobs(): QuickJSHandle | undefined {
    const result = this.runtime.executePendingJobs();
    return result.error ? this.own(result.error) : undefined;
  }

  dispose(): void {
    for (const handle of this.owned) if (handle.alive) handle.dispose();
    this.context.dispose();
    this.runtime.dispose();
  }
}
