import type { CaseTest, RunResult } from '../../engine/api';
import { formatBytes, formatCount, formatMs } from '../format';

interface VerdictsPanelProps {
  result: RunResult;
  tests: CaseTest[] | null;
  /** The function the tests called. */
  entryPoint?: string | null;
}

/** Per-test verdicts and the run's cost, as the sandbox measured them. */
/**
 * What is known of the run's memory. A job the watchdog killed left no measurement: memory is
 * sampled at QuickJS's interrupt checks, and native loops (Array.fill, a huge allocation) run
 * without them, which is also why the deadline could not stop it.
 */
function peakMemory(result: RunResult): string {
  if (result.errorKind === 'watchdog_killed' && result.cost.peakBytes === 0) {
    return 'not measured (the watchdog stopped the worker inside native code)';
  }
  return formatBytes(result.cost.peakBytes);
}

export function VerdictsPanel({ result, tests, entryPoint }: VerdictsPanelProps) {
  return (
    <section className="verdicts" aria-label="Verdicts">
      <header className={result.passed ? 'summary pass' : 'summary fail'} data-testid="summary">
        {result.passCount} / {result.total} tests passed
        {result.errorKind && <span className="error-kind"> · {result.errorKind}</span>}
        {entryPoint && (
          <span className="entry-called" data-testid="entry-called">
            {' '}
            · called <code>{entryPoint}(…)</code>
          </span>
        )}
      </header>
      {result.message && <pre className="message">{result.message}</pre>}
      <dl className="cost" data-testid="cost">
        <dt>work</dt>
        <dd>{formatCount(result.cost.work)}</dd>
        <dt>wall</dt>
        <dd>{formatMs(result.cost.wallMs)}</dd>
        <dt>peak memory</dt>
        <dd>{peakMemory(result)}</dd>
      </dl>
      <table className="tests">
        <thead>
          <tr>
            <th>#</th>
            <th>verdict</th>
            <th>args</th>
            <th>expected</th>
            <th>actual</th>
          </tr>
        </thead>
        <tbody>
          {result.tests.map((verdict, index) => (
            // Tests have no identity beyond their position.
            // biome-ignore lint/suspicious/noArrayIndexKey: position is the identity here
            <tr key={index} data-testid="verdict" className={verdict.passed ? 'pass' : 'fail'}>
              <td>{index + 1}</td>
              <td>{verdict.passed ? 'pass' : (verdict.errorKind ?? 'wrong')}</td>
              <td>
                <code>{tests?.[index] ? JSON.stringify(tests[index].args).slice(1, -1) : ''}</code>
              </td>
              <td>
                <code>{tests?.[index] ? JSON.stringify(tests[index].expected) : ''}</code>
              </td>
              <td>
                <code>{verdict.actual ?? verdict.message ?? ''}</code>
              </td>
            </tr>
          ))}
        </tbody>
      </table>
    </section>
  );
}
