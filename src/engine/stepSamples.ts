// A step's samples in two shapes: per role, the flat list of sequences with advantages
// that the GRPO update consumes; per task, the plan × program groups that a StepReport
// carries to the charts and the inspector.

import type { RoleCredit, StepCredit } from '../agents/credit';
import type { DebuggerStep } from '../agents/debugger';
import type { JudgedProgram } from '../agents/judge';
import type { RetrievalStep } from '../agents/retriever';
import type { Completion, TaskRollout } from '../agents/rollout';
import type { Role } from '../rl/config';
import { plannerReward } from '../rl/rewards';
import type { PolicySequence } from '../rl/trainer';
import type { RepairSample, SampleGroup } from './types';

/** The role's sampled sequences with their advantages, in the credit's layout. */
export function policySequences(
  role: Role,
  rollouts: readonly TaskRollout[],
  credit: StepCredit,
): PolicySequence[] {
  const completions: Completion[] =
    role === 'planner'
      ? rollouts.flatMap((r) => r.plans ?? [])
      : rollouts.flatMap((r) => r.programs.flat());
  const advantages = (role === 'planner' ? credit.planner : credit.coder)?.advantages.advantages;
  if (!advantages || advantages.length !== completions.length) {
    throw new Error(
      `${role}: ${completions.length} samples but ${advantages?.length ?? 0} advantages`,
    );
  }
  return completions.map((c, i) => ({
    prompt: c.prompt,
    completion: c.tokens,
    oldLogProbs: c.logProbs,
    advantage: advantages[i] ?? 0,
  }));
}

export function sampleGroups(
  step: number,
  rollouts: readonly TaskRollout[],
  judged: readonly JudgedProgram[],
  credit: StepCredit,
  programsPerPlan: number,
): SampleGroup[] {
  let programIndex = 0;
  return rollouts.map((rollout, t) => {
    const { task } = rollout;
    const plans = rollout.programs.map((programs, n) => {
      const planIndex = t * rollout.programs.length + n;
      const programSamples = programs.map((program) => {
        const i = programIndex++;
        const j = judged[i];
        return {
          completion: program.text,
          ...(program.plan !== undefined ? { selfPlan: program.plan } : {}),
          code: j?.code ?? '',
          reward: credit.coder.rewards[i] ?? {
            passFraction: 0,
            efficiency: 0,
            formatPenalty: 0,
            total: 0,
          },
          advantage: credit.coder.advantages.advantages[i] ?? 0,
          passCount: j?.run?.passCount ?? 0,
          total: j?.run?.total ?? task.tests.length,
          errorKind: j?.run?.errorKind ?? (j?.run ? null : 'format'),
          work: j?.run?.cost.work ?? null,
          peakBytes: j?.run?.cost.peakBytes ?? null,
          tokens: program.tokens.length,
        };
      });
      const plan = rollout.plans?.[n];
      return {
        plan: plan?.text ?? '',
        // Single mode: no Planner credit; show what the (empty) plan's programs earned.
        reward:
          credit.planner?.rewards[planIndex] ??
          plannerReward(credit.coder.rewards.slice(programIndex - programsPerPlan, programIndex)),
        advantage: credit.planner?.advantages.advantages[planIndex] ?? 0,
        tokens: plan?.tokens.length ?? 0,
        programs: programSamples,
        ...(rollout.droppedPlans?.[n] ? { dropped: true as const } : {}),
      };
    });
    return {
      step,
      taskId: task.id,
      tier: task.tier,
      family: task.family,
      statement: task.statement,
      entryPoint: task.entryPoint,
      tests: task.tests.map((test) => ({ args: test.args, expected: test.expected })),
      ...(task.examples
        ? { examples: task.examples.map((e) => ({ args: e.args, expected: e.expected })) }
        : {}),
      reference: task.strategies.map((s) => ({ strategy: s.name, plan: s.plan, code: s.code })),
      plans,
    };
  });
}

/**
 * The Retriever's and the Debugger's part of the chain, added to the step's groups: each
 * plan's retrieved example (candidates, choice, the Retriever's reward and advantage) and
 * each repaired program's report and D repairs (reward = improvement, advantage).
 */
export function attachAgentSamples(
  groups: SampleGroup[],
  chain: {
    retrieval: RetrievalStep | null;
    retrieverCredit: RoleCredit | null;
    debug: DebuggerStep | null;
  },
): SampleGroup[] {
  const { retrieval, retrieverCredit, debug } = chain;
  if (!retrieval && !debug) return groups;
  const repairsOf = new Map<number, { report: string; repairs: RepairSample[] }>();
  if (debug) {
    const D = debug.repairsPerProgram;
    debug.targets.forEach((target, p) => {
      const repairs = Array.from({ length: D }, (_, d): RepairSample => {
        const i = p * D + d;
        const repair = debug.repairs[i]!;
        const judged = debug.judged[i];
        return {
          completion: repair.text,
          code: judged?.code ?? '',
          repairReward: debug.repairRewards[i]!,
          reward: debug.credit.rewards[i]!,
          advantage: debug.credit.advantages.advantages[i] ?? 0,
          passCount: judged?.run?.passCount ?? 0,
          total: judged?.run?.total ?? target.task.tests.length,
          errorKind: judged?.run?.errorKind ?? (judged?.run ? null : 'format'),
          tokens: repair.tokens.length,
        };
      });
      repairsOf.set(target.programIndex, { report: target.report, repairs });
    });
  }
  let programIndex = 0;
  return groups.map((group, t) => ({
    ...group,
    plans: group.plans.map((plan, n) => {
      const programs = plan.programs.map((program) => {
        const extra = repairsOf.get(programIndex++);
        return extra ? { ...program, ...extra } : program;
      });
      if (!retrieval) return { ...plan, programs };
      const i = t * group.plans.length + n;
      const candidates = retrieval.candidates[t] ?? [];
      const choice = retrieval.choices[i] ?? null;
      const example = candidates[choice ?? 0];
      return {
        ...plan,
        programs,
        ...(example
          ? {
              retrieval: {
                candidates: candidates.map((c) => c.statement),
                choice,
                statement: example.statement,
                plan: example.plan,
                shown: retrieval.examples[i] != null,
                ...(retrieverCredit
                  ? {
                      reward: retrieverCredit.rewards[i]!,
                      advantage: retrieverCredit.advantages.advantages[i] ?? 0,
                    }
                  : {}),
              },
            }
          : {}),
      };
    }),
  }));
}

/** Each plan's Planner and Coder prompts as the model read them (a base model's chat template). */
export function withRenderedPrompts(
  groups: SampleGroup[],
  rollouts: readonly TaskRollout[],
  render: (prompt: readonly number[]) => string,
): SampleGroup[] {
  return groups.map((group, t) => ({
    ...group,
    plans: group.plans.map((plan, n) => {
      const rollout = rollouts[t];
      const plannerIds = rollout?.plans?.[n]?.prompt;
      const coderIds = rollout?.programs[n]?.[0]?.prompt;
      return {
        ...plan,
        ...(plannerIds ? { plannerPrompt: render(plannerIds) } : {}),
        ...(coderIds ? { coderPrompt: render(coderIds) } : {}),
      };
    }),
  }));
}
