import { useMemo } from 'react';
import { MonacoEditor } from '../MonacoEditor';
import { detectEntryPoint, parseTests } from './parseTests';
import { usePlaygroundStore } from './playgroundStore';
import { VerdictsPanel } from './VerdictsPanel';

/** Write a function and its tests, run them in the QuickJS sandbox, read the verdicts. */
export function Playground() {
  const {
    code,
    testsText,
    entryPoint,
    judgedEntryPoint,
    result,
    error,
    running,
    setCode,
    setTestsText,
    setEntryPoint,
    run,
  } = usePlaygroundStore();
  const detected = useMemo(() => detectEntryPoint(code), [code]);
  const tests = useMemo(() => {
    try {
      return parseTests(testsText);
    } catch {
      return null;
    }
  }, [testsText]);

  return (
    <div className="playground">
      <div className="editors">
        <label className="pane-title" htmlFor="code">
          Program
        </label>
        <MonacoEditor label="code" language="javascript" value={code} onChange={setCode} />
        <label className="pane-title" htmlFor="tests">
          Tests{' '}
          <span className="hint">
            [{'{'} "args": [...], "expected": ... {'}'}]
          </span>
        </label>
        <MonacoEditor label="tests" language="json" value={testsText} onChange={setTestsText} />
      </div>
      <div className="results">
        <div className="toolbar">
          <button type="button" className="primary" onClick={() => void run()} disabled={running}>
            {running ? 'Running…' : 'Run'}
          </button>
          <label className="entry-point">
            Entry point{' '}
            <input
              name="entry"
              value={entryPoint}
              placeholder={detected ? `${detected} (found)` : 'function name'}
              spellCheck={false}
              aria-describedby="entry-point-help"
              onChange={(event) => setEntryPoint(event.target.value)}
            />
          </label>
          <span className="hint" id="entry-point-help">
            The function each test calls with its args. Empty: the declared function no other code
            calls{detected ? ` (now ${detected})` : ''}. QuickJS sandbox in a Web Worker, a fresh
            context per run.
          </span>
        </div>
        {error && (
          <p className="error" role="alert">
            {error}
          </p>
        )}
        {result ? (
          <VerdictsPanel result={result} tests={tests} entryPoint={judgedEntryPoint} />
        ) : (
          !error && <p className="hint">Press Run to judge the program against its tests.</p>
        )}
      </div>
    </div>
  );
}
