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
  /** How a plan's reward comes from its M programs' (the run's Planner credit). */
  plannerCredit?: GrpoConfig['plannerCredit'];
}

function rewardFormula(
  group: RoleGroupExplanation,
  weights: Props['weights'],
  plannerCredit: Props['plannerCredit'],
): string {
  if (group.role === 'planner') {
    return plannerCredit === 'best'
      ? String.raw`r^P_n = \max_{m=1}^{M} r^C_{n,m} \quad\text{(the best program written from plan } n\text{)}`
      : String.raw`r^P_n = \frac{1}{M}\sum_{m=1}^{M} r^C_{n,m}`;
  }
  if (group.role === 'retriever') {
    return String.raw`r^R_n = r^P_n - \text{format} \quad\text{(the plan written with choice } n\text{)}`;
  }
  if (group.role === 'debugger') {
    return String.raw`r^D_d = r^C(\text{repair}_d) - r^C(\text{program})`;
  }
  return String.raw`r^C_{m} = ${num(weights.passFraction)}\cdot\text{pass} + \underbrace{${num(weights.efficiency)}}_{\lambda}\cdot\text{eff} - \text{format}`;
}

function advantageFormula(group: RoleGroupExplanation, scale: Props['scale']): string {
  const i = group.chosen;
  const r = group.rewards[i] ?? 0;
  const a = group.advantages[i] ?? 0;
  const sub = SUBSCRIPTS[group.role];
  if (group.zeroStd) {
    return String.raw`\sigma = 0 \;\Rightarrow\; \hat A_${sub} = 0 \text{ for every member (no signal)}`;
  }
  if (scale === 'none') {
    return String.raw`\hat A_${sub} = r_${sub} - \bar r = ${num(r)} - ${operand(group.mean)} = ${num(a)}`;
  }
  const which = scale === 'batch' ? String.raw`\sigma_{\text{batch}}` : String.raw`\sigma`;
  return String.raw`\hat A_${sub} = \frac{r_${sub} - \bar r}{${which} + 10^{-4}} = \frac{${num(r)} - ${operand(group.mean)}}{${num(group.divisor, 4)}} = ${num(a)}`;
}

const SUBSCRIPTS: Record<RoleGroupExplanation['role'], string> = {
  planner: 'n',
  coder: 'm',
  debugger: 'd',
  retriever: 'n',
};

const MEMBER: Record<RoleGroupExplanation['role'], string> = {
  planner: 'plan',
  coder: 'program',
  debugger: 'repair',
  retriever: 'choice',
};

function heading(group: RoleGroupExplanation, size: number): string {
  switch (group.role) {
    case 'planner':
      return `Planner group: the ${size} plans of this task`;
    case 'coder':
      return `Coder group: the ${size} programs of the selected plan`;
    case 'debugger':
      return `Debugger group: the ${size} repairs of the selected program (reward: what each repair fixed)`;
    case 'retriever':
      return `Retriever group: its ${size} example choices for this task (reward: the plan each one fed)`;
  }
}

export function RoleGroupSection({ group, weights, scale, plannerCredit }: Props) {
  const size = group.rewards.length;
  const sub = SUBSCRIPTS[group.role];
  const advantageNoteId = useId();
  return (
    <section className="explainer-section" data-testid={`explainer-${group.role}`}>
      <h3>
        {heading(group, size)}
        {!group.trained && <span className="explainer-note"> (not trained in this mode)</span>}
      </h3>
      <Tex display tex={rewardFormula(group, weights, plannerCredit)} />
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
        Â, the advantage: how much better this {MEMBER[group.role]} scored than its group’s mean, in
        units of the group’s spread (the formulas below). Â is worked out here from the rewards in
        the table; engine Â is the value the trainer recorded and used for the update. They agree; σ
        = 0 (every member scored the same) gives Â = 0: no signal.
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
        Every token of {MEMBER[group.role]} {group.chosen + 1} gets this advantage.
      </p>
    </section>
  );
}
