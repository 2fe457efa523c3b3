// Which groups carry a learning signal: a group whose rewards are all equal (σ = 0) gives
// every member Â = 0, so GRPO learns nothing from it. The inspector marks the groups with
// σ > 0, jumps to the next one, and the explainer opens on one.
import { type SampleGroup, sampleStd } from '../../engine/api';
import { planRewardParts } from '../explainer/explain';
import type { Selection } from '../state/labStore';

/** Below this the rewards count as equal (as the explainer's "σ = 0"). */
const ZERO_STD = 1e-8;

const spreads = (values: readonly number[]) =>
  values.length >= 2 && sampleStd([...values]) > ZERO_STD;

/** The Coder group of one plan (its M programs) has σ > 0. */
export function planHasSignal(plan: SampleGroup['plans'][number]): boolean {
  return spreads(plan.programs.map((program) => program.reward.total));
}

/** The Planner group of the task (its N plans) has σ > 0. */
export function plannerHasSignal(group: SampleGroup): boolean {
  return spreads(group.plans.map((plan) => planRewardParts(plan).total));
}

/** Some role learns from this task's group: its plans differ, or one plan's programs do. */
export function groupHasSignal(group: SampleGroup): boolean {
  return plannerHasSignal(group) || group.plans.some(planHasSignal);
}

/** The plan to show in a group: the first whose programs differ, else the first. */
export function signalPlanIndex(group: SampleGroup): number {
  return Math.max(0, group.plans.findIndex(planHasSignal));
}

/**
 * Where to open a step: `preferred` when that group has signal, else its first group with
 * signal, else `preferred` (clamped); inside it, a plan whose programs differ.
 */
export function signalSelection(
  step: number,
  groups: readonly SampleGroup[],
  preferred = 0,
): Selection {
  const clamped = Math.min(Math.max(0, preferred), Math.max(0, groups.length - 1));
  const kept = groups[clamped];
  const firstWithSignal = groups.findIndex(groupHasSignal);
  const groupIndex = kept && groupHasSignal(kept) ? clamped : Math.max(firstWithSignal, clamped);
  const group = groups[groupIndex];
  return { step, groupIndex, planIndex: group ? signalPlanIndex(group) : 0, programIndex: 0 };
}

/**
 * The next group with signal after the selection, in step order, wrapping around to the
 * oldest kept step; null when no kept group has any.
 */
export function nextSignalSelection(
  steps: readonly { step: number; groups: SampleGroup[] }[],
  selection: Selection | null,
): Selection | null {
  const order = steps.flatMap((entry) =>
    entry.groups.map((group, groupIndex) => ({ step: entry.step, groupIndex, group })),
  );
  if (order.length === 0) return null;
  const at = selection
    ? order.findIndex((g) => g.step === selection.step && g.groupIndex === selection.groupIndex)
    : -1;
  for (let offset = 1; offset <= order.length; offset++) {
    const candidate = order[(at + offset + order.length) % order.length];
    if (candidate && groupHasSignal(candidate.group)) {
      return {
        step: candidate.step,
        groupIndex: candidate.groupIndex,
        planIndex: signalPlanIndex(candidate.group),
        programIndex: 0,
      };
    }
  }
  return null;
}
