// External suites in MBXP / HumanEval-X JSONL form: one task per line with `task_id`, `prompt`,
// a solution field and `test`. The program is prompt + solution; the test script runs after it.
import type { ScriptJob } from './types';

export type SuiteRow =
  | { line: number; taskId: string; job: ScriptJob }
  | { line: number; taskId: string; skipped: string };

export interface SuiteProblem {
  line: number;
  message: string;
}

export interface ParsedSuite {
  rows: SuiteRow[];
  problems: SuiteProblem[];
}

export function parseSuite(text: string, solutionField = 'canonical_solution'): ParsedSuite {
  const rows: SuiteRow[] = [];
  const problems: SuiteProblem[] = [];
  for (const [i, raw] of text.split('\n').entries()) {
    const line = i + 1;
    if (raw.trim() === '') continue;
    let record: unknown;
    try {
      record = JSON.parse(raw);
    } catch (error) {
      problems.push({ line, message: `line ${line}: not JSON (${(error as Error).message})` });
      continue;
    }
    if (typeof record !== 'object' || record === null || Array.isArray(record)) {
      problems.push({ line, message: `line ${line}: expected a JSON object` });
      continue;
    }
    const fields = record as Record<string, unknown>;
    const missing = ['task_id', 'prompt', 'test'].find(
      (field) => typeof fields[field] !== 'string',
    );
    if (missing) {
      problems.push({
        line,
        message: `line ${line}: field "${missing}" is missing or not a string`,
      });
      continue;
    }
    const taskId = fields.task_id as string;
    const solution = fields[solutionField];
    if (typeof solution !== 'string') {
      rows.push({ line, taskId, skipped: `no "${solutionField}"` });
      continue;
    }
    rows.push({
      line,
      taskId,
      job: {
        kind: 'script',
        id: taskId,
        code: (fields.prompt as string) + solution,
        testScript: fields.test as string,
      },
    });
  }
  return { rows, problems };
}
