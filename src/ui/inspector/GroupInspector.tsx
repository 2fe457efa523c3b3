import type { SampleGroup } from '../../engine/api';
import { type Selection, useLabStore } from '../state/labStore';
import { useDeferredGroups } from '../state/useDeferredGroups';
import { GroupGrid } from './GroupGrid';
import { SampleDetail } from './SampleDetail';
import { groupHasSignal, nextSignalSelection, signalPlanIndex } from './signal';
import { TaskStatement } from './TaskStatement';

export function select(update: Partial<Selection>) {
  useLabStore.setState((state) => {
    const base = state.selection ?? {
      step: state.groups.at(-1)?.step ?? 0,
      groupIndex: 0,
      planIndex: 0,
      programIndex: 0,
    };
    return { selection: { ...base, ...update } };
  });
}

/** A step's task groups: N plans × M programs as a grid coloured by reward. */
export function GroupInspector() {
  // Deferred: a new step re-renders the grid as interruptible background work.
  const { groups, selection, stale } = useDeferredGroups();
  if (groups.length === 0) {
    return (
      <section className="inspector empty" aria-label="Group inspector">
        <h2>Group inspector</h2>
        <p className="hint">Press Train or Step: each step's plans and programs appear here.</p>
      </section>
    );
  }
  const stepEntry = groups.find((g) => g.step === selection?.step) ?? groups.at(-1)!;
  const groupIndex = Math.min(selection?.groupIndex ?? 0, stepEntry.groups.length - 1);
  const group: SampleGroup | undefined = stepEntry.groups[groupIndex];
  return (
    <section className="inspector" aria-label="Group inspector" data-stale={stale}>
      <header className="inspector-header">
        <h2>Group inspector</h2>
        <label>
          step{' '}
          <select
            aria-label="Inspected step"
            value={stepEntry.step}
            onChange={(e) =>
              select({ step: Number(e.target.value), groupIndex: 0, planIndex: 0, programIndex: 0 })
            }
          >
            {groups.map((g) => (
              <option key={g.step} value={g.step}>
                {g.step}
              </option>
            ))}
          </select>
        </label>
        <div className="task-tabs" role="tablist">
          {stepEntry.groups.map((g, index) => {
            const signal = groupHasSignal(g);
            return (
              <button
                type="button"
                role="tab"
                aria-selected={index === groupIndex}
                // biome-ignore lint/suspicious/noArrayIndexKey: a task can repeat within a step
                key={`${g.taskId}-${index}`}
                className={`${index === groupIndex ? 'active' : ''}${signal ? ' has-signal' : ''}`}
                data-signal={signal}
                title={
                  signal
                    ? 'σ > 0: rewards differ in this group, so GRPO learns from it'
                    : 'σ = 0: every member scored the same, so every Â is 0 (no signal)'
                }
                onClick={() =>
                  select({
                    step: stepEntry.step,
                    groupIndex: index,
                    planIndex: signalPlanIndex(g),
                    programIndex: 0,
                  })
                }
              >
                {signal && <span className="signal-mark">σ&gt;0 </span>}
                {g.tier} · {g.family}
              </button>
            );
          })}
        </div>
        <NextSignalButton />
      </header>
      {group && (
        <>
          <div className="statement">
            <strong>{group.tier}</strong> <TaskStatement group={group} />{' '}
            {!group.examples && <code>{group.entryPoint}</code>}
          </div>
          <GroupGrid
            group={group}
            selected={
              selection?.step === stepEntry.step && selection.groupIndex === groupIndex
                ? selection
                : null
            }
            onSelect={(planIndex, programIndex) =>
              select({ step: stepEntry.step, groupIndex, planIndex, programIndex })
            }
          />
          <SampleDetail
            group={group}
            planIndex={Math.min(selection?.planIndex ?? 0, group.plans.length - 1)}
            programIndex={selection?.programIndex ?? 0}
          />
        </>
      )}
    </section>
  );
}

/** Jumps to the next group whose rewards differ (σ > 0), over every kept step. */
export function NextSignalButton() {
  const groups = useLabStore((s) => s.groups);
  const selection = useLabStore((s) => s.selection);
  const next = nextSignalSelection(groups, selection);
  return (
    <button
      type="button"
      className="next-signal"
      disabled={next === null}
      title={
        next === null
          ? 'No kept group has signal: every group’s members scored the same'
          : `Step ${next.step}, group ${next.groupIndex + 1}`
      }
      onClick={() => next && useLabStore.setState({ selection: next })}
    >
      Next group with signal
    </button>
  );
}
