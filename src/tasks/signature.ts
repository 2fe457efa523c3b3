// A task's signature in words, from its entry point and the types of its first test: what
// the Coder reads instead of the statement when it sees only the plan (`coderSees` plan), and
// the first line of an examples-world statement.
import type { JsonValue, Task } from './types';

function typeWords(value: JsonValue | undefined): string {
  if (typeof value === 'number') return 'a number';
  if (typeof value === 'string') return 'a string';
  if (typeof value === 'boolean') return 'true or false';
  if (Array.isArray(value)) {
    if (value.every((v) => typeof v === 'number')) return 'a list of numbers';
    if (value.every((v) => typeof v === 'string')) return 'a list of strings';
    return 'a list';
  }
  return 'a value';
}

const PARAMETERS = ['a', 'b', 'c', 'd', 'e', 'f'];

export function taskSignature(task: Pick<Task, 'entryPoint' | 'arity' | 'tests'>): string {
  const first = task.tests[0];
  const params = Array.from({ length: task.arity }, (_, i) => PARAMETERS[i] ?? `x${i}`);
  const takes = params.map((_, i) => typeWords(first?.args[i])).join(' and ');
  const head = `${task.entryPoint}(${params.join(', ')})`;
  return `${head} takes ${takes || 'nothing'} and returns ${typeWords(first?.expected)}.`;
}
