// The Coder group on screen under grpo, dapo and dr_grpo side by side: every token of every
// program as a bar as tall as its contribution to the loss, and the loss each aggregation
// gives, so a class sees why the three differ (long and short programs are weighed apart).
import type { GrpoConfig, LossType } from '../../engine/api';
import { type Aggregation, compareAggregations } from './aggregation';
import { Tex } from './Tex';
import { num } from './texFormat';

const DIVISOR_TEX: Record<LossType, string> = {
  grpo: String.raw`\mathcal L = \frac{1}{G}\sum_i \frac{1}{|o_i|}\sum_t \ell_{i,t}`,
  dapo: String.raw`\mathcal L = \frac{1}{\sum_i |o_i|}\sum_i \sum_t \ell_{i,t}`,
  dr_grpo: String.raw`\mathcal L = \frac{1}{G\cdot L_{\max}}\sum_i \sum_t \ell_{i,t}`,
};

const TOKEN_BAR_PX = 18;

function AggregationCard({
  aggregation,
  scale,
  active,
  member,
}: {
  member: 'plan' | 'program';
  aggregation: Aggregation;
  /** The largest |contribution| over the three, so bars compare across cards. */
  scale: number;
  active: boolean;
}) {
  const { lossType } = aggregation;
  return (
    <div
      className={`aggregation${active ? ' active' : ''}`}
      data-testid={`aggregation-${lossType}`}
    >
      <h4>
        {lossType}
        {active && <span className="explainer-note"> (this run)</span>}
      </h4>
      <Tex display tex={DIVISOR_TEX[lossType]} />
      <p className="explainer-note">Each token’s loss divided by {aggregation.divisor}.</p>
      {aggregation.outputs.map((output, i) => {
        const label = `${member === 'plan' ? 'n' : 'm'}${i + 1}`;
        const height = scale > 0 ? Math.abs(output.tokenContribution) / scale : 0;
        const sign =
          output.tokenContribution < 0 ? 'up' : output.tokenContribution > 0 ? 'down' : '';
        return (
          <div
            // biome-ignore lint/suspicious/noArrayIndexKey: members are identified by position.
            key={i}
            className="aggregation-member"
            data-tokens={output.tokens}
            data-advantage={output.advantage}
            title={`${member} ${i + 1}: ${output.tokens} tokens × ${num(output.tokenContribution, 5)} = ${num(output.total, 4)}`}
          >
            <span className="aggregation-label">
              {label} · {output.tokens} tok · Â {num(output.advantage, 2)}
            </span>
            <span className="token-bars" aria-hidden="true">
              {Array.from({ length: output.tokens }, (_, t) => (
                <i
                  // biome-ignore lint/suspicious/noArrayIndexKey: tokens are identified by position.
                  key={t}
                  className={`token-bar ${sign}`}
                  style={{ height: `${Math.max(1, height * TOKEN_BAR_PX)}px` }}
                />
              ))}
            </span>
            <span className="aggregation-total">
              {num(output.tokenContribution, 4)} / token · Σ {num(output.total, 3)}
            </span>
          </div>
        );
      })}
      <p className="aggregation-loss">
        loss{' '}
        <strong data-testid={`aggregation-loss-${lossType}`}>{num(aggregation.loss, 4)}</strong>
      </p>
    </div>
  );
}

/** A role's group (the selected plan's programs, or the task's plans), aggregated three ways. */
export function AggregationSection({
  role,
  advantages,
  lengths,
  grpo,
}: {
  role: 'planner' | 'coder';
  advantages: readonly number[];
  lengths: readonly number[];
  grpo: GrpoConfig;
}) {
  const aggregations = compareAggregations(advantages, lengths, grpo, role);
  const member = role === 'planner' ? 'plan' : 'program';
  const scale = Math.max(
    0,
    ...aggregations.flatMap((a) => a.outputs.map((o) => Math.abs(o.tokenContribution))),
  );
  return (
    <section className="explainer-section" data-testid="explainer-aggregations" data-role={role}>
      <h3>
        The same group under grpo, dapo and dr_grpo:{' '}
        {role === 'planner'
          ? 'the task’s plans (its programs all scored the same)'
          : 'the selected plan’s programs'}
      </h3>
      <p className="explainer-note">
        At ρ = 1 every token of {member} i has ℓ = −Â_i (β·k₃ left out: per-token log-probs are not
        kept with the samples). Each bar is one token, as tall as its share of the loss, which is
        also its weight in the gradient: green pushes its probability up (Â &gt; 0), red down. grpo
        gives each {member} the same total weight whatever its length, so a short {member}’s tokens
        count more each; dapo gives every token of the group the same weight, so long {member}s
        count more; dr_grpo divides by a constant, so the loss also shrinks when {member}s are
        shorter than the cap. The trainer aggregates the role’s whole step this way; here it is one
        group.
      </p>
      <div className="aggregations">
        {aggregations.map((aggregation) => (
          <AggregationCard
            key={aggregation.lossType}
            aggregation={aggregation}
            scale={scale}
            active={aggregation.lossType === grpo.lossType}
            member={member}
          />
        ))}
      </div>
    </section>
  );
}
