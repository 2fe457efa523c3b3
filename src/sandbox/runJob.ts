// Single-threaded execution on the calling thread: for tests, benchmarks and small hosts.
// No watchdog here: a program that ignores the interrupt blocks the caller (use the pool).
import type { QuickJSWASMModule } from 'quickjs-emscripten';
import { createExecutor, type Executor, loadQuickJS } from './executor';
import type { RawRunResult } from './protocol';
import type { RunLimits, RunResult, SandboxJob } from './types';
import { judge, toWireJob } from './verdict';

let shared: Promise<QuickJSWASMModule> | undefined;

export interface LocalRunner {
  runJob(job: SandboxJob): Promise<RunResult>;
  /** The executor's raw outcomes, before the host judges them (synchronous). */
  runRaw(job: SandboxJob): RawRunResult;
}

export async function createLocalRunner(defaults?: Partial<RunLimits>): Promise<LocalRunner> {
  shared ??= loadQuickJS();
  let executor: Executor = createExecutor(await shared);
  const runRaw = (job: SandboxJob) => executor.execute(toWireJob(job, defaults));
  return {
    runRaw,
    async runJob(job) {
      const result = judge(job, runRaw(job));
      if (executor.broken) {
        shared = loadQuickJS();
        executor = createExecutor(await shared);
      }
      return result;
    },
  };
}

/** Runs one job on this thread with a fresh QuickJS runtime and context. */
export async function runJob(job: SandboxJob, defaults?: Partial<RunLimits>): Promise<RunResult> {
  return await (await createLocalRunner(defaults)).runJob(job);
}
