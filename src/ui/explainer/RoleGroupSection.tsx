// One role's group: its rewards, their mean and std, and each member's advantage, with the
// group's actual numbers substituted into the formulas.
import { useId } from 'react';
import type { GrpoConfig } from '../../engine/api';
import type { RoleGroupExplanation } from './explain';
import { Tex } from './Tex';
import { num, operand, sumOf } from './texFormat';

interface Props {
  group: RoleGroupExplanation;
  weights: GrpoConfig['rewardWeights'];
  scale: GrpoConfig['scaleRewards'];
}

function rewardFormula(group: RoleGroupExplanation, weights: Props['weights']): string {
  if (group.role === 'planner') {
    return String.raw`r^P_n = \frac{1}{M}\sum_{m=1}^{M} r^C_{n,m}`;
  }
  return String.raw`r^C_{m} = ${num(weights.passFraction)}\cdot\text{pass} + \underbrace{${num(weights.efficiency)}}_{\lambda}\cdot\text{eff} - \text{format}`;
}

function advantageFormula(group: RoleGroupExplanation, scale: Props['scale']): string {
  const i = group.chosen;
  const r = group.rewards[i] ?? 0;
  const a = group.advantages[i] ?? 0;
  const sub = group.role === 'planner' ? 'n' : 'm';
  if (group.zeroStd) {
    return String.raw`\sigma = 0 \;\Rightarrow\; \hat A_${sub} = 0 \text{ for every member (no signal)}`;
  }
  if (scale === 'none') {
    return String.raw`\hat A_${sub} = r_${sub} - \bar r = ${num(r)} - ${operand(group.mean)} = ${num(a)}`;
  }
  const which = scale === 'batch' ? String.raw`\sigma_{\text{batch}}` : String.raw`\sigma`;
  return String.raw`\hat A_${sub} = \frac{r_${sub} - \bar r}{${which} + 10^{-4}} = \frac{${num(r)} - ${operand(group.mean)}}{${num(group.divisor, 4)}} = ${num(a)}`;
}

export function RoleGroupSection({ group, weights, scale }: Props) {
  const isPlanner = group.role === 'planner';
  const size = group.rewards.length;
  const sub = isPlanner ? 'n' : 'm';
  const advantageNoteId = useId();
  return (
    <section className="explainer-section" data-testid={`explainer-${group.role}`}>
      <h3>
        {isPlanner
          ? `Planner group: the ${size} plans of this task`
          : `Coder group: the ${size} programs of the selected plan`}
        {!group.trained && <span className="explainer-note"> (not trained in this mode)</span>}
      </h3>
      <Tex display tex={rewardFormula(group, weights)} />
      <table className="explainer-table">
        <thead>
          <tr>
            <th>{sub}</th>
            <th>pass</th>
            <th>eff</th>
            <th>format</th>
            <th>reward</th>
            <th aria-describedby={advantageNoteId}>Â</th>
            <th
              aria-describedby={advantageNoteId}
              title="The advantage the engine recorded for this sample"
            >
              engine Â
            </th>
          </tr>
        </thead>
        <tbody>
          {group.parts.map((parts, i) => (
            <tr
              // biome-ignore lint/suspicious/noArrayIndexKey: members are identified by position.
              key={i}
              className={i === group.chosen ? 'chosen' : undefined}
            >
              <td>{i + 1}</td>
              <td>{num(parts.passFraction)}</td>
              <td>{num(parts.efficiency)}</td>
              <td>{parts.formatPenalty === 0 ? '0' : `−${num(parts.formatPenalty)}`}</td>
              <td>{num(group.rewards[i] ?? 0)}</td>
              <td>{num(group.advantages[i] ?? 0)}</td>
              <td>{group.recorded[i] === undefined ? '–' : num(group.recorded[i] as number)}</td>
            </tr>
          ))}
        </tbody>
      </table>
      <p className="explainer-note" id={advantageNoteId} data-testid="advantage-note">
        Â, the advantage: how much better this {isPlanner ? 'plan' : 'program'} scored than its
        group’s mean, in units of the group’s spread (the formulas below). Â is worked out here from
        the rewards in the table; engine Â is the value the trainer recorded and used for the
        update. They agree; σ = 0 (every member scored the same) gives Â = 0: no signal.
      </p>
      <Tex
        display
        tex={String.raw`\bar r = \frac{1}{${size}}\left(${sumOf(group.rewards)}\right) = ${num(group.mean)}`}
      />
      <Tex
        display
        tex={String.raw`\sigma = \sqrt{\tfrac{1}{${Math.max(size - 1, 1)}}\textstyle\sum_${sub} (r_${sub} - \bar r)^2} = ${num(group.std)}`}
      />
      <Tex display tex={advantageFormula(group, scale)} />
      <p className="explainer-note">
        Every token of {isPlanner ? 'plan' : 'program'} {group.chosen + 1} gets this advantage.
      </p>
    </section>
  );
}
