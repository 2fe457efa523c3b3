// The per-token objective for the chosen sample: ratio, clipping and the k3 KL term.
import type { TokenExplanation } from './explain';
import { Tex } from './Tex';
import { num, operand } from './texFormat';

export function TokenObjectiveSection({ token }: { token: TokenExplanation }) {
  const a = token.advantage;
  const low = num(1 - token.epsilonLow);
  const high = num(1 + token.epsilonHigh);
  const who = token.role === 'planner' ? 'plan' : 'program';
  return (
    <section className="explainer-section" data-testid={`explainer-token-${token.role}`}>
      <h3>
        Per-token objective, chosen {who} ({token.role})
      </h3>
      <Tex
        display
        tex={String.raw`\rho_t = \frac{\pi_\theta(o_t \mid q, o_{<t})}{\pi_{\text{old}}(o_t \mid q, o_{<t})}`}
      />
      <Tex
        display
        tex={String.raw`\ell_t = -\min\!\big(\rho_t \hat A,\; \operatorname{clip}(\rho_t, ${low}, ${high})\,\hat A\big) + \beta\, k_3`}
      />
      <Tex
        display
        tex={String.raw`\rho_t = 1:\quad \min\!\big(1\cdot ${operand(a)},\; \operatorname{clip}(1, ${low}, ${high})\cdot ${operand(a)}\big) = ${num(token.objective)}`}
      />
      <p className="explainer-note">
        Per-token log-probs are not part of the group data, so ρ is shown as 1: its value at the
        first update on fresh samples (on-policy)
        {token.onPolicy
          ? ', which is every update in this run (numIterations = 1).'
          : '. With numIterations > 1 later updates move ρ away from 1 and clipping can cut in.'}{' '}
        Had ρ moved, the clipped objective would be:
      </p>
      <table className="explainer-table">
        <thead>
          <tr>
            <th>ρ</th>
            {token.examples.map((example) => (
              <th key={example.ratio}>{num(example.ratio, 2)}</th>
            ))}
          </tr>
        </thead>
        <tbody>
          <tr>
            <td>min(ρÂ, clip(ρ)Â)</td>
            {token.examples.map((example) => (
              <td key={example.ratio} className={example.clipped ? 'clipped' : undefined}>
                {num(example.objective)}
                {example.clipped && <span className="explainer-note"> clipped</span>}
              </td>
            ))}
          </tr>
        </tbody>
      </table>
      <Tex
        display
        tex={String.raw`\beta\, k_3 = ${num(token.beta)}\cdot\big(e^{\Delta} - \Delta - 1\big), \quad \Delta = \log\pi_{\text{ref}} - \log\pi_\theta`}
      />
      <p className="explainer-note">
        k₃ ≥ 0 and equals {num(token.k3AtZero)} while the policy still matches the reference (Δ =
        0).
        {token.measuredKl !== null
          ? ` This step's measured mean k₃ (${token.role}/kl) is ${num(token.measuredKl, 4)}, adding β·k₃ ≈ ${num(token.beta * token.measuredKl, 5)} per token.`
          : ' This step logged no KL for this role.'}
        {token.measuredClipRegion !== null &&
          ` Clipped tokens this step: ${num(token.measuredClipRegion * 100, 1)}%.`}
      </p>
    </section>
  );
}
