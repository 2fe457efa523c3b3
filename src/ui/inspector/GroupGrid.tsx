import type { SampleGroup } from '../../engine/api';
import { rewardColor } from './rewardColor';
import { planHasSignal } from './signal';

interface GroupGridProps {
  group: SampleGroup;
  /** The selected cell, or null when none is. */
  selected: { planIndex: number; programIndex: number } | null;
  onSelect: (planIndex: number, programIndex: number) => void;
}

const fmt = (value: number) => (value >= 0 ? ' ' : '') + value.toFixed(2);

/** N plans × M programs as a grid coloured by reward: reward, advantage, tests passed, cost. */
export function GroupGrid({ group, selected, onSelect }: GroupGridProps) {
  return (
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
              <div className="plan-text">
                {plan.dropped
                  ? `(dropped: the Coder saw no plan) ${plan.plan}`
                  : plan.plan || '(no plan: single mode)'}
              </div>
              <div className="nums">
                r {fmt(plan.reward.total)} · Â {fmt(plan.advantage)}
                {planHasSignal(plan) && (
                  <span
                    className="signal-mark"
                    title="σ > 0: this plan's programs scored differently, so the Coder learns from them"
                  >
                    {' '}
                    · σ&gt;0
                  </span>
                )}
              </div>
            </th>
            {plan.programs.map((program, m) => {
              const isSelected = selected?.planIndex === n && selected.programIndex === m;
              return (
                // biome-ignore lint/suspicious/noArrayIndexKey: cells are program positions
                <td key={m}>
                  <button
                    type="button"
                    data-testid="sample-cell"
                    className={`cell${isSelected ? ' selected' : ''}`}
                    style={{ background: rewardColor(program.reward.total) }}
                    onClick={() => onSelect(n, m)}
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
  );
}
