// A sandbox stand-in for the evaluation's tests: `passing(call, index, job)` decides each
// verdict; costs are known (work 100 + index, 1000 peak bytes); every job is kept in `jobs`.
import type { RunResult, Sandbox, SandboxJob } from '../../src/sandbox/types';

export function fakeSandbox(
  passing: (call: number, index: number, job: SandboxJob) => boolean,
): Sandbox & { jobs: SandboxJob[] } {
  const jobs: SandboxJob[] = [];
  let call = 0;
  return {
    jobs,
    async run(batch) {
      jobs.push(...batch);
      const thisCall = call++;
      return batch.map((job, i): RunResult => {
        const passed = passing(thisCall, i, job);
        return {
          id: job.id,
          passed,
          passCount: passed ? 1 : 0,
          total: 1,
          errorKind: null,
          tests: [{ passed, errorKind: null }],
          cost: { wallMs: 1, work: 100 + i, peakBytes: 1000 },
        };
      });
    },
    async close() {},
  };
}
