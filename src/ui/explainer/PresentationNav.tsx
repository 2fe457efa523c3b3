// Presentation mode hides the inspector, so the explainer carries its own way around: the
// previous/next kept step, group and plan, the next group with signal, and whether a new
// step takes the screen ("Follow new steps") or the class stays on this one (pinned).
import type { ReactNode } from 'react';
import { NextSignalButton } from '../inspector/GroupInspector';
import { groupHasSignal, signalPlanIndex, signalSelection } from '../inspector/signal';
import { type Selection, useLabStore } from '../state/labStore';

function show(selection: Selection) {
  useLabStore.setState({ selection });
}

export function PresentationNav() {
  const groups = useLabStore((s) => s.groups);
  const stored = useLabStore((s) => s.selection);
  const pinned = useLabStore((s) => s.pinned);
  const newest = groups.at(-1);
  if (!newest) return null;
  const selection = stored ?? signalSelection(newest.step, newest.groups);
  const stepIndex = Math.max(
    0,
    groups.findIndex((g) => g.step === selection.step),
  );
  const entry = groups[stepIndex] ?? newest;
  const groupIndex = Math.min(selection.groupIndex, entry.groups.length - 1);
  const group = entry.groups[groupIndex];
  const planCount = group?.plans.length ?? 0;
  const planIndex = Math.min(selection.planIndex, Math.max(0, planCount - 1));
  const onNewest = entry.step === newest.step;
  const following = !pinned && onNewest;

  const toStep = (index: number) => {
    const target = groups[index];
    if (target) show(signalSelection(target.step, target.groups));
  };
  const toGroup = (index: number) => {
    const target = entry.groups[index];
    if (target)
      show({
        step: entry.step,
        groupIndex: index,
        planIndex: signalPlanIndex(target),
        programIndex: 0,
      });
  };
  const toPlan = (index: number) =>
    show({ step: entry.step, groupIndex, planIndex: index, programIndex: 0 });

  return (
    <nav className="presentation-nav" aria-label="Presentation controls">
      <Stepper
        what="step"
        index={stepIndex}
        count={groups.length}
        go={toStep}
        testId="presentation-step"
      >
        step {entry.step}
        <span className="explainer-note">
          {' '}
          ({stepIndex + 1} of {groups.length} kept)
        </span>
      </Stepper>
      <Stepper
        what="group"
        index={groupIndex}
        count={entry.groups.length}
        go={toGroup}
        testId="presentation-group"
      >
        group {groupIndex + 1} of {entry.groups.length}
        {group && groupHasSignal(group) ? ' · σ>0' : ' · σ=0'}
      </Stepper>
      <Stepper
        what="plan"
        index={planIndex}
        count={planCount}
        go={toPlan}
        testId="presentation-plan"
      >
        plan {planIndex + 1} of {planCount}
      </Stepper>
      <NextSignalButton />
      <label className="toggle" title="Off: the class stays on this step while training goes on">
        <input
          type="checkbox"
          checked={following}
          data-testid="follow-steps"
          onChange={(event) => {
            if (event.target.checked) {
              useLabStore.setState({
                pinned: false,
                selection: signalSelection(newest.step, newest.groups),
              });
            } else {
              useLabStore.setState({ pinned: true, selection });
            }
          }}
        />
        Follow new steps
      </label>
    </nav>
  );
}

/** ◀ what it shows ▶: the previous / next of `count` things, `index` the one on screen. */
function Stepper({
  what,
  index,
  count,
  go,
  testId,
  children,
}: {
  what: string;
  index: number;
  count: number;
  go: (index: number) => void;
  testId: string;
  children: ReactNode;
}) {
  return (
    <div className="nav-group">
      <button
        type="button"
        aria-label={`Previous ${what}`}
        disabled={index <= 0}
        onClick={() => go(index - 1)}
      >
        ◀
      </button>
      <span data-testid={testId}>{children}</span>
      <button
        type="button"
        aria-label={`Next ${what}`}
        disabled={index >= count - 1}
        onClick={() => go(index + 1)}
      >
        ▶
      </button>
    </div>
  );
}
