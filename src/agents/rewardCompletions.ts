// The lab's Coder reward for a batch of completions from outside the lab (the reward server):
// judged as a step's programs are (judgePrograms: extract, run in one batch on the sandbox
// pool, host-side verdicts), then paid with rl/rewards' coderRewards per task, so a program's
// efficiency is compared with the other all-passing programs of its task in the same batch,
// as credit.ts compares a task's N·M programs in a step.
import { coderRewards, type RewardParts, type RewardWeights } from '../rl/rewards';
import type { Sandbox } from '../sandbox/types';
import { type JudgedProgram, judgePrograms, type ProgramToJudge } from './judge';

export interface RewardedProgram extends JudgedProgram {
  reward: RewardParts;
}

export async function rewardCompletions(
  sandbox: Sandbox,
  programs: readonly ProgramToJudge[],
  weights: RewardWeights,
  /** Per task id: the reference's cost, as a floor for the efficiency baseline (optional). */
  referenceCosts?: ReadonlyMap<string, number>,
): Promise<RewardedProgram[]> {
  const judged = await judgePrograms(sandbox, programs);
  const byTask = new Map<string, number[]>();
  programs.forEach(({ task }, index) => {
    const members = byTask.get(task.id);
    if (members) members.push(index);
    else byTask.set(task.id, [index]);
  });
  const rewards: RewardParts[] = new Array(programs.length);
  for (const [taskId, members] of byTask) {
    const parts = coderRewards(
      members.map((index) => (judged[index] as JudgedProgram).outcome),
      weights,
      referenceCosts?.get(taskId),
    );
    members.forEach((index, k) => {
      rewards[index] = parts[k] as RewardParts;
    });
  }
  return judged.map((program, index) => ({ ...program, reward: rewards[index] as RewardParts }));
}
