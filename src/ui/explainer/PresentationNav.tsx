// Presentation mode hides the inspector, so the explainer carries its own way around: the
// previous/next kept step, group and plan, the next group with signal, and whether a new
// step takes the screen ("Follow new steps") or the class stays on this one (pinned).
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
      <div className="nav-group">
        <button
          type="button"
          aria-label="Previous step"
          disabled={stepIndex === 0}
          onClick={() => toStep(stepIndex - 1)}
        >
          ◀
        </button>
        <span data-testid="presentation-step">
          step {entry.step}
          <span className="explainer-note">
            {' '}
            ({stepIndex + 1} of {groups.length} kept)
          </span>
        </span>
        <button
          type="button"
          aria-label="Next step"
          disabled={stepIndex >= groups.length - 1}
          onClick={() => toStep(stepIndex + 1)}
        >
          ▶
        </button>
      </div>
      <div className="nav-group">
        <button
          type="button"
          aria-label="Previous group"
          disabled={groupIndex <= 0}
          onClick={() => toGroup(groupIndex - 1)}
        >
          ◀
        </button>
        <span data-testid="presentation-group">
          group {groupIndex + 1} of {entry.groups.length}
          {group && groupHasSignal(group) ? ' · σ>0' : ' · σ=0'}
        </span>
        <button
          type="button"
          aria-label="Next group"
          disabled={groupIndex >= entry.groups.length - 1}
          onClick={() => toGroup(groupIndex + 1)}
        >
          ▶
        </button>
      </div>
      <div className="nav-group">
        <button
          type="button"
          aria-label="Previous plan"
          disabled={planIndex <= 0}
          onClick={() => toPlan(planIndex - 1)}
        >
          ◀
        </button>
        <span data-testid="presentation-plan">
          plan {planIndex + 1} of {planCount}
        </span>
        <button
          type="button"
          aria-label="Next plan"
          disabled={planIndex >= planCount - 1}
          onClick={() => toPlan(planIndex + 1)}
        >
          ▶
        </button>
      </div>
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
