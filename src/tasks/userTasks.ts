// Tasks a person writes by hand. The file is JSON: either an array of tasks or
// { "tasks": [...] }. Each task needs statement, entryPoint and tests; id, plan, code,
// tier and family are optional:
//   { "id": "double", "statement": "Double a number.", "entryPoint": "double",
//     "tests": [{ "args": [2], "expected": 4 }], "plan": ["double it"],
//     "code": "function double(x){return x*2}" }
// Bad tasks are refused one by one with messages naming the task and field; the good ones
// in the same file are kept.
import type { Task, Tier } from './types';
import { type TaskError, validateTask } from './validate';

export interface UserTasksResult {
  tasks: Task[];
  errors: TaskError[];
}

const isRecord = (v: unknown): v is Record<string, unknown> =>
  typeof v === 'object' && v !== null && !Array.isArray(v);

/** A plan given as lines or as text; lines get numbered, text is kept as written. */
function normalizePlan(plan: unknown): unknown {
  if (Array.isArray(plan) && plan.every((line) => typeof line === 'string')) {
    return plan.map((line, i) => `${i + 1}. ${line}`).join('\n');
  }
  return plan;
}

function tierFromPlan(plan: unknown): Tier {
  if (typeof plan !== 'string' || plan === '') return 'L1';
  const steps = plan.split('\n').length;
  return steps === 1 ? 'L1' : steps === 2 ? 'L2' : 'L3';
}

/** Fills the optional fields a person may leave out, then validates as any task. */
function completeUserTask(raw: Record<string, unknown>, position: number): unknown {
  const plan = normalizePlan(raw.plan ?? '');
  const tests = raw.tests;
  const firstArgs = Array.isArray(tests) && isRecord(tests[0]) ? tests[0].args : undefined;
  const hasCode = raw.code !== undefined;
  return {
    id: raw.id ?? `user-${position + 1}`,
    family: raw.family ?? 'user',
    tier: raw.tier ?? tierFromPlan(plan),
    statement: raw.statement,
    entryPoint: raw.entryPoint,
    arity: raw.arity ?? (Array.isArray(firstArgs) ? firstArgs.length : 0),
    tests,
    strategies: hasCode ? [{ name: 'direct', plan, code: raw.code }] : [],
    efficiencyTests: raw.efficiencyTests ?? [],
    steps: raw.steps ?? [],
  };
}

export function parseUserTasks(text: string): UserTasksResult {
  let data: unknown;
  try {
    data = JSON.parse(text);
  } catch (error) {
    const message = error instanceof Error ? error.message : String(error);
    return {
      tasks: [],
      errors: [{ taskId: '(file)', field: '(file)', message: `not valid JSON: ${message}` }],
    };
  }
  const list = Array.isArray(data) ? data : isRecord(data) ? data.tasks : undefined;
  if (!Array.isArray(list)) {
    return {
      tasks: [],
      errors: [
        {
          taskId: '(file)',
          field: 'tasks',
          message: 'expected an array of tasks or {"tasks": [...]}',
        },
      ],
    };
  }
  const tasks: Task[] = [];
  const errors: TaskError[] = [];
  const seen = new Set<string>();
  list.forEach((raw, position) => {
    if (!isRecord(raw)) {
      errors.push({
        taskId: `#${position + 1}`,
        field: '(task)',
        message: 'a task must be a JSON object',
      });
      return;
    }
    const result = validateTask(completeUserTask(raw, position), position);
    if (!result.ok) {
      errors.push(...result.errors);
      return;
    }
    if (seen.has(result.task.id)) {
      errors.push({
        taskId: result.task.id,
        field: 'id',
        message: 'duplicate id: an earlier task already uses it',
      });
      return;
    }
    seen.add(result.task.id);
    tasks.push(result.task);
  });
  return { tasks, errors };
}
