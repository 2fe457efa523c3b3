import { useDeferredValue } from 'react';
import type { SampleGroup } from '../../engine/types';
import { type Selection, useLabStore } from '../state/labStore';
import { rewardColor } from './rewardColor';
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

const fmt = (value: number) => (value >= 0 ? ' ' : '') + value.toFixed(2);

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
          <table className="group-grid">
            <thead>
              <tr>
                <th>plan (reward, advantage)</th>
                {group.plans[0]?.programs.map((_, m) => (
                  // biome-ignore lint/suspicious/noArrayIndexKey: columns are program positions
                  <th key={m}>program {m + 1}</th>
                ))}
              </tr>
            </thead>
            <tbody>
              {group.plans.map((plan, n) => (
                // biome-ignore lint/suspicious/noArrayIndexKey: rows are plan positions
                <tr key={n}>
                  <th
                    className="plan-cell"
                    style={{ background: rewardColor(plan.reward.total) }}
                    title={plan.plan}
                  >
                    <div className="plan-text">{plan.plan || '(no plan: single mode)'}</div>
                    <div className="nums">
                      r {fmt(plan.reward.total)} · Â {fmt(plan.advantage)}
                    </div>
                  </th>
                  {plan.programs.map((program, m) => {
                    const selected =
                      selection?.step === stepEntry.step &&
                      selection.groupIndex === groupIndex &&
                      selection.planIndex === n &&
                      selection.programIndex === m;
                    return (
                      // biome-ignore lint/suspicious/noArrayIndexKey: cells are program positions
                      <td key={m}>
                        <button
                          type="button"
                          data-testid="sample-cell"
                          className={`cell${selected ? ' selected' : ''}`}
                          style={{ background: rewardColor(program.reward.total) }}
                          onClick={() =>
                            select({
                              step: stepEntry.step,
                              groupIndex,
                              planIndex: n,
                              programIndex: m,
                            })
                          }
                          title={`pass ${program.reward.passFraction.toFixed(2)} · eff ${program.reward.efficiency.toFixed(2)} · format −${program.reward.formatPenalty.toFixed(2)}`}
                        >
                          <span>r {fmt(program.reward.total)}</span>
                          <span>Â {fmt(program.advantage)}</span>
                          <span>
                            {program.passCount}/{program.total}
                            {program.work !== null ? ` · ${program.work}w` : ''}
                          </span>
                        </button>
                      </td>
                    );
                  })}
                </tr>
              ))}
            </tbody>
          </table>
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
