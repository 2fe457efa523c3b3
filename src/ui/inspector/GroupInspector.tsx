import { useDeferredValue } from 'react';
import type { SampleGroup } from '../../engine/api';
import { type Selection, useLabStore } from '../state/labStore';
import { GroupGrid } from './GroupGrid';
import { SampleDetail } from './SampleDetail';

function select(update: Partial<Selection>) {
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
  const groups = useDeferredValue(useLabStore((s) => s.groups));
  const selection = useDeferredValue(useLabStore((s) => s.selection));
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
    <section className="inspector" aria-label="Group inspector">
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
          {stepEntry.groups.map((g, index) => (
            <button
              type="button"
              role="tab"
              aria-selected={index === groupIndex}
              // biome-ignore lint/suspicious/noArrayIndexKey: a task can repeat within a step
              key={`${g.taskId}-${index}`}
              className={index === groupIndex ? 'active' : ''}
              onClick={() =>
                select({ step: stepEntry.step, groupIndex: index, planIndex: 0, programIndex: 0 })
              }
            >
              {g.tier} · {g.family}
            </button>
          ))}
        </div>
      </header>
      {group && (
        <>
          <p className="statement">
            <strong>{group.tier}</strong> {group.statement} <code>{group.entryPoint}</code>
          </p>
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
