import { useState } from 'react';
import type { SampleGroup } from '../../engine/api';
import { solve } from '../engineClient';
import { MonacoEditor } from '../MonacoEditor';
import { useLabStore } from '../state/labStore';
import { GroupGrid } from './GroupGrid';
import { SampleDetail } from './SampleDetail';

// The format of public/tasks/example-user-tasks.json; only the first task is answered.
const EXAMPLE = `{
  "tasks": [
    {
      "statement": "Keep the even numbers and add them up.",
      "entryPoint": "solve",
      "tests": [
        { "args": [[1, 2, 3, 4]], "expected": 6 },
        { "args": [[]], "expected": 0 },
        { "args": [[-2, 5]], "expected": -2 }
      ]
    }
  ]
}
`;

/** "Your own task": write a statement and tests, see the models' plans and programs judged. */
export function OwnTaskPanel() {
  const [text, setText] = useState(EXAMPLE);
  const [group, setGroup] = useState<SampleGroup | null>(null);
  const [error, setError] = useState<string | null>(null);
  const [running, setRunning] = useState(false);
  const [selected, setSelected] = useState({ planIndex: 0, programIndex: 0 });
  const idle = useLabStore((s) => s.status === 'idle');

  const ask = async () => {
    setRunning(true);
    setError(null);
    try {
      const answer = await solve(text);
      setGroup(answer.group);
      setSelected({ planIndex: 0, programIndex: 0 });
      if (answer.error) setError(answer.error);
    } finally {
      setRunning(false);
    }
  };

  return (
    <section className="inspector own-task" aria-label="Your own task">
      <header className="inspector-header">
        <h2>Your own task</h2>
        <span className="hint">
          statement, entry point and tests, as in example-user-tasks.json
        </span>
      </header>
      <MonacoEditor label="own-task" language="json" value={text} onChange={setText} />
      <div className="toolbar">
        <button
          type="button"
          className="primary"
          onClick={() => void ask()}
          disabled={running || !idle}
        >
          {running ? 'Asking…' : 'Ask the models'}
        </button>
        {!idle && <span className="hint">Pause training first: the models are busy.</span>}
      </div>
      {error && (
        <p className="error" role="alert">
          {error}
        </p>
      )}
      {group && (
        <>
          <p className="statement">{group.statement}</p>
          <GroupGrid
            group={group}
            selected={selected}
            onSelect={(planIndex, programIndex) => setSelected({ planIndex, programIndex })}
          />
          <SampleDetail
            group={group}
            planIndex={selected.planIndex}
            programIndex={selected.programIndex}
          />
        </>
      )}
    </section>
  );
}
