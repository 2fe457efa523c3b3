// The sandbox's verdict on every program of a step: extract the function from each
// completion, run the well-formed ones (one batched call, so the worker pool stays busy),
// and turn results into the reward's ProgramOutcome. Completions without an extractable
// function are not run: they earn the format penalty.
import { extractFunction } from '../rl/extractFunction';
import { type ProgramOutcome, programOutcome } from '../rl/rewards';
import type { CasesJob, RunResult, Sandbox } from '../sandbox/types';
import type { Task } from '../tasks';

export interface JudgedProgram {
  /** The extracted function ('' when there was none). */
  code: string;
  run: RunResult | null;
  outcome: ProgramOutcome;
}

export interface ProgramToJudge {
  task: Task;
  completion: string;
}

export async function judgePrograms(
  sandbox: Sandbox,
  programs: readonly ProgramToJudge[],
): Promise<JudgedProgram[]> {
  const extracted = programs.map(({ task, completion }) =>
    extractFunction(completion, task.entryPoint),
  );
  const jobs: CasesJob[] = [];
  const jobOf = new Map<number, number>();
  programs.forEach(({ task }, index) => {
    const code = extracted[index];
    if (!code?.formatOk) return;
    jobOf.set(index, jobs.length);
    jobs.push({
      kind: 'cases',
      id: `${task.id}#${index}`,
      code: code.code,
      entryPoint: task.entryPoint,
      tests: task.tests,
    });
  });
  const results = jobs.length > 0 ? await sandbox.run(jobs) : [];
  return programs.map((_, index) => {
    const code = extracted[index];
    const jobIndex = jobOf.get(index);
    const run = jobIndex === undefined ? null : (results[jobIndex] ?? null);
    const formatOk = code?.formatOk ?? false;
    return {
      code: formatOk ? (code?.code ?? '') : '',
      run,
      outcome: programOutcome(run, formatOk),
    };
  });
}
