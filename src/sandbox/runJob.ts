// Single-threaded execution on the calling thread: for tests, benchmarks and small hosts.
// No watchdog here: a program that ignores the interrupt blocks the caller (use the pool).
import type { QuickJSWASMModule } from 'quickjs-emscripten';
import { createExecutor, type Executor, loadQuickJS } from './executor';
import type { RawRunResult } from './protocol';
import type { RunLimits, RunResult, SandboxJob } from './types';
import { judge, toWireJob } from './verdict';

let shared: Promise<QuickJSWASMModule> | undefined;

export interface LocalRunner {
  runJob(job: SandboxJob): RunResult;
  /** The executor's raw outcomes, before the host judges them. */
  runRaw(job: SandboxJob): RawRunResult;
  executor: Executor;
}

export async function createLocalRunner(defaults?: Partial<RunLimits>): Promise<LocalRunner> {
  shared ??= loadQuickJS();
  const executor = createExecutor(await shared);
  const runRaw = (job: SandboxJob) => executor.execute(toWireJob(job, defaults));
  return { executor, runRaw, runJob: (job) => judge(job, runRaw(job)) };
}

/** Runs one job on this thread with a fresh QuickJS runtime and context. */
export async function runJob(job: SandboxJob, defaults?: Partial<RunLimits>): Promise<RunResult> {
  return (await createLocalRunner(defaults)).runJob(job);
}
