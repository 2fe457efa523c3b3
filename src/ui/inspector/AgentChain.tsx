// The chain of agents behind one program, for topologies with a Retriever or a Debugger:
// retrieved example → plan → program → the sandbox's report → the Debugger's repairs, each
// step with its reward and advantage (the Retriever's reward is the plan's mean Coder reward,
// a repair's is its improvement over the program). Renders nothing for planner,coder.
import type { PlanSample, ProgramSample, RewardParts } from '../../engine/api';

interface AgentChainProps {
  plan: PlanSample;
  program: ProgramSample;
}

function score(reward: RewardParts | undefined, advantage: number | undefined): string {
  if (!reward) return 'not trained (BM25 top-1)';
  return `reward ${reward.total.toFixed(3)} · Â ${(advantage ?? 0).toFixed(3)}`;
}

export function AgentChain({ plan, program }: AgentChainProps) {
  const { retrieval, repairs } = { retrieval: plan.retrieval, repairs: program.repairs };
  if (!retrieval && !repairs) return null;
  return (
    <ol className="agent-chain" data-testid="agent-chain" aria-label="The agents' chain">
      {retrieval && (
        <li data-testid="chain-retrieval">
          <strong>Retriever</strong>{' '}
          <span className="hint">{score(retrieval.reward, retrieval.advantage)}</span>
          <ol className="hint">
            {retrieval.candidates.map((statement, i) => (
              <li key={statement} aria-current={i === (retrieval.choice ?? 0) ? 'true' : undefined}>
                {i === (retrieval.choice ?? 0) ? <strong>{statement}</strong> : statement}
              </li>
            ))}
          </ol>
          {retrieval.choice === null && (
            <p className="hint">Its answer named no candidate: the Planner read BM25’s top-1.</p>
          )}
          {!retrieval.shown && (
            <p className="hint">Too long for the Planner’s context: this plan read no example.</p>
          )}
          <pre className="plan">{retrieval.plan}</pre>
        </li>
      )}
      <li data-testid="chain-plan">
        <strong>Planner</strong> <span className="hint">{score(plan.reward, plan.advantage)}</span>
      </li>
      <li data-testid="chain-program">
        <strong>Coder</strong>{' '}
        <span className="hint">
          {score(program.reward, program.advantage)} · passed {program.passCount}/{program.total}
        </span>
      </li>
      {program.report && (
        <li data-testid="chain-report">
          <strong>Sandbox report</strong> <code>{program.report}</code>
        </li>
      )}
      {repairs
        ?.map((repair, d) => ({ repair, name: `repair ${d + 1}` }))
        .map(({ repair, name }) => (
          <li key={name} data-testid="chain-repair">
            <strong>Debugger {name}</strong>{' '}
            <span className="hint">
              passed {repair.passCount}/{repair.total} · its reward{' '}
              {repair.repairReward.total.toFixed(3)} − the program’s{' '}
              {(repair.repairReward.total - repair.reward.total).toFixed(3)} ={' '}
              {repair.reward.total.toFixed(3)} · Â {repair.advantage.toFixed(3)}
            </span>
            <details>
              <summary>code</summary>
              <pre className="code">{repair.code || repair.completion}</pre>
            </details>
          </li>
        ))}
    </ol>
  );
}
