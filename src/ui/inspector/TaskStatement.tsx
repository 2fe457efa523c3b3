// A task's statement as the inspector and the explainer show it. An examples-world task is
// its signature and input/output examples (the steps are hidden): the signature, then the
// examples as a list, since the statement's line breaks would run together in a paragraph.
import type { SampleGroup } from '../../engine/api';

export function TaskStatement({ group }: { group: SampleGroup }) {
  if (!group.examples) return <>{group.statement}</>;
  const signature = group.statement.split('\n')[0] ?? '';
  return (
    <>
      {signature}
      <ul className="task-examples" data-testid="task-examples" aria-label="Examples">
        {group.examples.map((example) => {
          const text = `${group.entryPoint}(${example.args.map((a) => JSON.stringify(a)).join(', ')}) = ${JSON.stringify(example.expected)}`;
          return (
            <li key={text}>
              <code>{text}</code>
            </li>
          );
        })}
      </ul>
    </>
  );
}
