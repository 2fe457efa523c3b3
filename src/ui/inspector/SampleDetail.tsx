import { useEffect, useState } from 'react';
import type { RunResult, SampleGroup } from '../../engine/api';
import { judge } from '../engineClient';
import { MonacoEditor } from '../MonacoEditor';
import { VerdictsPanel } from '../playground/VerdictsPanel';
import { AgentChain } from './AgentChain';

interface SampleDetailProps {
  group: SampleGroup;
  planIndex: number;
  programIndex: number;
}

/** One plan–program pair beside the task's reference; the program can be edited and re-run. */
export function SampleDetail({ group, planIndex, programIndex }: SampleDetailProps) {
  const plan = group.plans[planIndex];
  const program = plan?.programs[programIndex];
  const original = program ? program.code || program.completion : '';
  const [code, setCode] = useState(original);
  const [result, setResult] = useState<RunResult | null>(null);
  const [running, setRunning] = useState(false);
  const [referenceIndex, setReferenceIndex] = useState(0);
  // Monaco costs ~90 ms to create: it opens on the first edit or run, not on every new step.
  const [editing, setEditing] = useState(false);

  useEffect(() => {
    setCode(original);
    setResult(null);
  }, [original]);

  if (!plan || !program) return null;
  const reference = group.reference[Math.min(referenceIndex, group.reference.length - 1)];
  const run = async () => {
    setRunning(true);
    try {
      setResult(await judge(code, group.entryPoint, group.tests));
    } catch {
      setResult(null); // the engine's error is already in the page's error banner
    } finally {
      setRunning(false);
    }
  };

  return (
    <div className="sample-detail" data-testid="sample-detail">
      <div className="sample-columns">
        <div>
          <h3>
            Plan {planIndex + 1} · program {programIndex + 1}{' '}
            <span className="hint">
              reward {program.reward.total.toFixed(3)} = pass{' '}
              {program.reward.passFraction.toFixed(2)} + λ·eff{' '}
              {program.reward.efficiency.toFixed(2)} − format{' '}
              {program.reward.formatPenalty.toFixed(2)} · advantage {program.advantage.toFixed(3)}
            </span>
          </h3>
          <pre className="plan" data-testid="sample-plan">
            {program.selfPlan !== undefined
              ? `${program.selfPlan || '(no plan)'}\n— its own plan: self-plan mode writes it before the program, in one sequence`
              : plan.plan || '(single mode: no plan)'}
          </pre>
          {editing ? (
            <MonacoEditor
              label="sample-code"
              language="javascript"
              value={code}
              onChange={setCode}
            />
          ) : (
            <pre className="code" data-testid="sample-code">
              {code}
            </pre>
          )}
          <div className="toolbar">
            {!editing && (
              <button type="button" onClick={() => setEditing(true)}>
                Edit
              </button>
            )}
            <button type="button" className="primary" onClick={() => void run()} disabled={running}>
              {running ? 'Running…' : 'Run in sandbox'}
            </button>
            {code !== original && (
              <button type="button" onClick={() => setCode(original)}>
                Revert edits
              </button>
            )}
          </div>
        </div>
        <div>
          <h3>
            Reference{' '}
            {group.reference.length > 1 && (
              <select
                aria-label="Reference strategy"
                value={referenceIndex}
                onChange={(e) => setReferenceIndex(Number(e.target.value))}
              >
                {group.reference.map((r, i) => (
                  <option key={r.strategy} value={i}>
                    {r.strategy}
                  </option>
                ))}
              </select>
            )}
          </h3>
          {reference && (
            <>
              <pre className="plan">{reference.plan}</pre>
              <pre className="code">{reference.code}</pre>
            </>
          )}
        </div>
      </div>
      <AgentChain plan={plan} program={program} />
      {result && (
        <VerdictsPanel result={result} tests={group.tests} entryPoint={group.entryPoint} />
      )}
    </div>
  );
}
