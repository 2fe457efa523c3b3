// The GRPO explainer: for the group on screen (the store's selection), rewards → group mean
// and std → advantages for each role, then the per-token clipped objective and KL term, all
// typeset with KaTeX and filled in with the group's numbers. Presentation mode enlarges
// everything for a classroom.
import { useMemo, useRef } from 'react';
import type { SampleGroup } from '../../engine/api';
import { signalSelection } from '../inspector/signal';
import { TaskStatement } from '../inspector/TaskStatement';
import { useRenderWhenSkippedOrSeen } from '../onScreen';
import { activeRun, type LabState, useLabStore } from '../state/labStore';
import { setPresentation } from '../state/runActions';
import { useDeferredGroups } from '../state/useDeferredGroups';
import { AggregationSection } from './AggregationSection';
import { explainGroup } from './explain';
import { PresentationNav } from './PresentationNav';
import { RoleGroupSection } from './RoleGroupSection';
import { TokenObjectiveSection } from './TokenObjectiveSection';
import './explainer.css';

interface OnScreen {
  group: SampleGroup;
  stepGroups: SampleGroup[];
  planIndex: number;
  programIndex: number;
}

/** The selected group, or (no selection yet) a group with signal of the newest step. */
function groupOnScreen(
  groups: LabState['groups'],
  selection: LabState['selection'],
): OnScreen | null {
  const newest = groups.at(-1);
  const shown = selection ?? (newest ? signalSelection(newest.step, newest.groups) : null);
  const entry = shown ? groups.find((g) => g.step === shown.step) : undefined;
  const group = entry?.groups[shown?.groupIndex ?? 0];
  if (!entry || !group || !shown) return null;
  return {
    group,
    stepGroups: entry.groups,
    planIndex: shown.planIndex,
    programIndex: shown.programIndex,
  };
}

/**
 * The group the aggregations compare: the selected plan's programs (its Coder group), or,
 * when their rewards are all equal and the plans' differ, the task's plans (its Planner
 * group), so the comparison has something to weigh.
 */
function aggregatedGroup(
  onScreen: OnScreen,
  explanation: ReturnType<typeof explainGroup>,
): { role: 'planner' | 'coder'; advantages: number[]; lengths: number[] } {
  const plans = onScreen.group.plans;
  const { coder, planner } = explanation;
  if (coder.zeroStd && planner?.trained && !planner.zeroStd) {
    return {
      role: 'planner',
      advantages: planner.advantages,
      lengths: plans.map((plan) => plan.tokens),
    };
  }
  const plan = plans[Math.min(Math.max(0, onScreen.planIndex), plans.length - 1)];
  return {
    role: 'coder',
    advantages: coder.advantages,
    lengths: plan?.programs.map((program) => program.tokens) ?? [],
  };
}

export function Explainer() {
  // Deferred: typesetting runs as interruptible background work.
  const { groups, selection, stale } = useDeferredGroups();
  const presentation = useLabStore((state) => state.presentation);
  const grpo = useLabStore((state) => (activeRun(state)?.config ?? state.config).grpo);

  const onScreen = useMemo(() => groupOnScreen(groups, selection), [groups, selection]);
  // The shown step's metrics only: a new step's point leaves an older step's untouched.
  const shownStep = onScreen?.group.step;
  const stepMetrics = useLabStore(
    (state) => activeRun(state)?.points.find((p) => p.step === shownStep)?.values,
  );
  const explanation = useMemo(
    () => (onScreen ? explainGroup({ ...onScreen, grpo, stepMetrics }) : null),
    [onScreen, grpo, stepMetrics],
  );

  const article = useRef<HTMLElement>(null);
  // The typeset sections wait until they cost no layout (skipped off screen) or are seen.
  const renderable = useRenderWhenSkippedOrSeen(article, explanation !== null) || presentation;

  return (
    <article
      ref={article}
      className={presentation ? 'explainer presentation' : 'explainer'}
      data-testid="explainer"
      data-stale={stale}
    >
      <header className="explainer-header">
        <h2>GRPO, step by step</h2>
        {/* The page's one Presentation switch: it enlarges this explainer and hides the rest. */}
        <label className="toggle">
          <input
            type="checkbox"
            checked={presentation}
            onChange={(event) => setPresentation(event.target.checked)}
          />
          Presentation
        </label>
      </header>
      {presentation && <PresentationNav />}
      {!onScreen || !explanation ? (
        <p className="explainer-note">
          No group on screen yet: train a step, then pick a group, plan and program in the
          inspector.
        </p>
      ) : (
        <>
          <div className="explainer-task">
            Step {onScreen.group.step} · {onScreen.group.tier} · {onScreen.group.family} —{' '}
            <TaskStatement group={onScreen.group} />
          </div>
          <p className="explainer-note">
            Selected: plan {onScreen.planIndex + 1}, program {onScreen.programIndex + 1}. Advantage
            scaling: {explanation.scale} (
            {explanation.scale === 'group'
              ? 'GRPO: divide by the group std'
              : explanation.scale === 'batch'
                ? 'divide by the std of all the role’s rewards this step'
                : 'Dr. GRPO: centre only'}
            ).
          </p>
          {renderable &&
            [
              explanation.coder,
              explanation.planner,
              explanation.debugger,
              explanation.retriever,
            ].map(
              (group) =>
                group && (
                  <RoleGroupSection
                    key={group.role}
                    group={group}
                    weights={explanation.rewardWeights}
                    scale={explanation.scale}
                    plannerCredit={explanation.plannerCredit}
                  />
                ),
            )}
          {renderable && (
            <>
              <TokenObjectiveSection token={explanation.tokens.coder} />
              <AggregationSection {...aggregatedGroup(onScreen, explanation)} grpo={grpo} />
              {explanation.tokens.planner && explanation.planner?.trained && (
                <TokenObjectiveSection token={explanation.tokens.planner} />
              )}
            </>
          )}
        </>
      )}
    </article>
  );
}
