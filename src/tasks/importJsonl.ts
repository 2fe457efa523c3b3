// Reads back the JSONL that exportJsonl.ts writes (one ExportRecord a line) as tasks, for the
// reward server: a label sent by a trainer is one of these task ids. Every record goes through
// validateTask, so a hand-edited file fails with the line, the task and the field.
import type { ExportRecord } from './exportJsonl';
import type { Task } from './types';
import { formatTaskError, validateTask } from './validate';

/** The Task-shaped object validateTask checks, from one export record. */
function taskShape(record: Partial<ExportRecord>): Record<string, unknown> {
  const statement = Array.isArray(record.prompt)
    ? record.prompt.map((message) => message?.content ?? '').join('\n')
    : undefined;
  return {
    id: record.task_id,
    family: record.family,
    tier: record.tier,
    statement,
    entryPoint: record.entry_point,
    arity: record.arity,
    tests: record.tests,
    strategies: Array.isArray(record.reference_solutions)
      ? record.reference_solutions.map((s) => ({ name: s?.strategy, plan: s?.plan, code: s?.code }))
      : record.reference_solutions,
    efficiencyTests: record.efficiency_tests,
    steps: record.steps,
  };
}

/**
 * Tasks from an exported JSONL text; throws one line naming `source`, the line and what is
 * wrong (bad JSON, a bad field, a task id seen twice).
 */
export function parseExportedTasks(text: string, source: string): Task[] {
  const tasks: Task[] = [];
  const seen = new Map<string, number>();
  const lines = text.split('\n');
  for (const [index, line] of lines.entries()) {
    if (line.trim() === '') continue;
    const where = `${source} line ${index + 1}`;
    let raw: unknown;
    try {
      raw = JSON.parse(line);
    } catch (error) {
      throw new Error(`${where}: not JSON (${(error as Error).message})`);
    }
    if (typeof raw !== 'object' || raw === null || Array.isArray(raw)) {
      throw new Error(`${where}: a task record must be a JSON object`);
    }
    const result = validateTask(taskShape(raw as Partial<ExportRecord>), tasks.length);
    if (!result.ok) {
      const first = result.errors[0];
      throw new Error(`${where}: ${first ? formatTaskError(first) : 'invalid task'}`);
    }
    const earlier = seen.get(result.task.id);
    if (earlier !== undefined) {
      throw new Error(`${where}: task id "${result.task.id}" already on line ${earlier}`);
    }
    seen.set(result.task.id, index + 1);
    tasks.push(result.task);
  }
  if (tasks.length === 0) throw new Error(`${source}: no tasks (expected one JSON record a line)`);
  return tasks;
}
