// The Retriever's library: solved tasks of the TRAIN split only (statement, a reference
// plan, the step signature), a fixed seeded draw with its own seed. Every entry is checked
// against the split function, so no validation, evaluation-suite or held-out task can be
// in it (tests/unit/agentsRetriever.test.ts checks the suites too). Only compositions of
// steps: their statements are hashed into one split, whereas a hand-written family's few
// statements recur in validation with other inputs, so its train tasks would hand the
// Planner an evaluation task's own plan. A search never returns a task's own statement.
import { createTaskSampler, type Task } from '../../tasks';
import { splitOf } from '../../tasks/splits';
import { isStepKind } from '../../tasks/steps';
import type { WorkedExample } from '../format';
import { Bm25Index } from './bm25';

export const LIBRARY_SIZE = 400;
export const LIBRARY_SEED = 20261214;

export interface LibraryEntry extends WorkedExample {
  id: string;
  steps: string[];
}

export class ExampleLibrary {
  readonly index: Bm25Index;

  constructor(readonly entries: readonly LibraryEntry[]) {
    this.index = new Bm25Index(entries.map((e) => e.statement));
  }

  /** Up to `k` entries for `statement`, BM25's best first, never the statement itself. */
  candidates(statement: string, k: number): LibraryEntry[] {
    return this.index
      .search(statement, k, (doc) => this.entries[doc]?.statement === statement)
      .map((doc) => this.entries[doc]!);
  }
}

/** Whether a task composes the step world's steps (its statement lives in one split only). */
export function isComposed(task: Pick<Task, 'steps'>): boolean {
  return task.steps.length > 0 && task.steps.every(isStepKind);
}

/** A library entry for a train-split composition; throws for any other task. */
export function libraryEntry(task: Task): LibraryEntry {
  const split = splitOf(task);
  if (split !== 'train') {
    throw new Error(`the example library takes train-split tasks only: ${task.id} is ${split}`);
  }
  if (!isComposed(task)) {
    throw new Error(
      `the example library takes compositions of steps only: ${task.id}'s statement recurs in validation`,
    );
  }
  // L4 tasks show their efficient plan: the example to imitate.
  const strategy = task.strategies.find((s) => s.name === 'efficient') ?? task.strategies[0];
  if (!strategy) throw new Error(`task ${task.id} has no reference plan`);
  return { id: task.id, statement: task.statement, plan: strategy.plan, steps: task.steps };
}

/** The default library: LIBRARY_SIZE distinct train-split statements of every tier. */
export function buildLibrary(size = LIBRARY_SIZE, seed = LIBRARY_SEED): ExampleLibrary {
  const sampler = createTaskSampler({ mix: { L1: 1, L2: 1, L3: 1, L4: 1 }, split: 'train', seed });
  const seen = new Set<string>();
  const entries: LibraryEntry[] = [];
  for (let tries = 0; entries.length < size; tries++) {
    if (tries > size * 20) throw new Error(`library: only ${entries.length} distinct statements`);
    const [task] = sampler.next(1);
    if (!task || seen.has(task.statement) || !isComposed(task)) continue;
    seen.add(task.statement);
    entries.push(libraryEntry(task));
  }
  return new ExampleLibrary(entries);
}
