// Builds the shipped MBXP task set from MBXP's JSONL (`npm run --silent tasks -- mbxp --in FILE
// --out DIR`). A task ships when its canonical solution passes every parsed assert both in
// Node (tasks/mbxpNode.ts: program + test script as one unit, per assert) and in the lab's
// harness (agents/judge.ts: the extracted function in the QuickJS sandbox, results compared
// by the host), so the two give the same per-test verdicts on everything shipped. Dropped,
// with the reason counted: rows without a canonical solution, asserts whose literals have no
// JSON form (`new Set(…)`; a task left with none is dropped), canonical solutions that fail
// an assert in Node (mostly parameter names that differ between prompt and solution), and
// the few where the harness and Node disagree (a helper the solution takes from the test
// script, recursion deeper than the sandbox's stack, a regex literal that the function
// extractor cannot read, a string with a NUL character). Math.random solutions are dropped
// before running: their verdicts change from run to run.
import { judgePrograms } from '../agents/judge';
import type { Sandbox } from '../sandbox/types';
import { type MbxpCandidate, parseMbxpRow } from '../tasks/mbxp/parse';
import { mbxpSplitOf, type TaskSetSplits } from '../tasks/mbxp/taskSet';
import { nodeAssertVerdicts } from '../tasks/mbxpNode';

export interface MbxpDrop {
  taskId: string;
  /** What kind of drop (the summary counts these). */
  kind:
    | 'unreadable'
    | 'no canonical solution'
    | 'no assert with a JSON form'
    | 'nondeterministic canonical solution'
    | 'canonical fails in Node'
    | 'harness differs from Node';
  detail: string;
}

export interface MbxpBuild {
  splits: TaskSetSplits;
  rows: number;
  dropped: MbxpDrop[];
  /** Asserts left out of kept tasks (no JSON form), with the reason. */
  droppedAsserts: { taskId: string; assert: number; reason: string }[];
}

/** Per kept test of a candidate: Node's verdict and the harness's, in test order. */
export interface CanonicalVerdicts {
  node: boolean[];
  harness: boolean[];
  /** The harness's first failure, in words (for reports). */
  harnessMessage?: string;
}

/** Node's and the harness's per-test verdicts on each candidate's canonical solution. */
export async function canonicalVerdicts(
  candidates: readonly MbxpCandidate[],
  sandbox: Sandbox,
): Promise<CanonicalVerdicts[]> {
  const judged = await judgePrograms(
    sandbox,
    candidates.map((c) => ({ task: c.task, completion: c.task.strategies[0]?.code ?? '' })),
  );
  return candidates.map((candidate, i) => {
    const all = nodeAssertVerdicts(candidate);
    const node = all.filter((_, k) => candidate.asserts[k]?.test !== undefined);
    const run = judged[i]?.run ?? null;
    const harness = candidate.task.tests.map((_, k) => run?.tests[k]?.passed ?? false);
    const failed = run?.tests.find((t) => !t.passed);
    const harnessMessage = !run
      ? 'no function could be extracted'
      : (run.message ??
        (failed ? (failed.message ?? `returned ${failed.actual ?? 'nothing'}`) : undefined));
    return { node, harness, ...(harnessMessage ? { harnessMessage } : {}) };
  });
}

export async function buildMbxpTaskSet(jsonl: string, sandbox: Sandbox): Promise<MbxpBuild> {
  const dropped: MbxpDrop[] = [];
  const droppedAsserts: MbxpBuild['droppedAsserts'] = [];
  const candidates: MbxpCandidate[] = [];
  let rows = 0;
  for (const [i, line] of jsonl.split('\n').entries()) {
    if (line.trim() === '') continue;
    rows++;
    let row: unknown;
    try {
      row = JSON.parse(line);
    } catch (error) {
      dropped.push({
        taskId: `line ${i + 1}`,
        kind: 'unreadable',
        detail: `not JSON (${(error as Error).message})`,
      });
      continue;
    }
    const record = (typeof row === 'object' && row !== null ? row : {}) as Record<string, unknown>;
    const taskId = typeof record.task_id === 'string' ? record.task_id : `line ${i + 1}`;
    const parsed = parseMbxpRow(record);
    if (!parsed.ok) {
      const kind = parsed.reason === 'no canonical solution' ? parsed.reason : 'unreadable';
      dropped.push({ taskId, kind, detail: parsed.reason });
      continue;
    }
    const { candidate } = parsed;
    // Its verdicts would change from run to run (and the shipped file with them).
    if (/Math\.random/.test(candidate.program)) {
      dropped.push({ taskId, kind: 'nondeterministic canonical solution', detail: 'Math.random' });
      continue;
    }
    if (candidate.task.tests.length === 0) {
      const why = candidate.asserts.map((a) => a.dropped).find(Boolean) ?? '';
      dropped.push({ taskId, kind: 'no assert with a JSON form', detail: why });
      continue;
    }
    candidates.push(candidate);
  }

  const verdicts = await canonicalVerdicts(candidates, sandbox);
  const kept: MbxpCandidate[] = [];
  candidates.forEach((candidate, i) => {
    const taskId = candidate.task.id;
    const { node, harness, harnessMessage } = verdicts[i]!;
    const nodeFails = node.flatMap((passed, k) => (passed ? [] : [k + 1]));
    const differs = node.flatMap((passed, k) => (passed === harness[k] ? [] : [k + 1]));
    if (differs.length > 0) {
      dropped.push({
        taskId,
        kind: 'harness differs from Node',
        detail: `tests ${differs.join(', ')}: ${harnessMessage ?? ''}`,
      });
    } else if (nodeFails.length > 0) {
      dropped.push({
        taskId,
        kind: 'canonical fails in Node',
        detail: `fails tests ${nodeFails.join(', ')} of ${node.length}`,
      });
    } else {
      kept.push(candidate);
      candidate.asserts.forEach((a, k) => {
        if (a.dropped) droppedAsserts.push({ taskId, assert: k + 1, reason: a.dropped });
      });
    }
  });
  const splits: TaskSetSplits = { train: [], validation: [] };
  for (const { task } of kept) splits[mbxpSplitOf(task.id)].push(task);
  return { splits, rows, dropped, droppedAsserts };
}

/** Counts by reason, for the command's summary and the docs. */
export function summarizeBuild(build: MbxpBuild): string {
  const byKind = new Map<string, number>();
  for (const drop of build.dropped) byKind.set(drop.kind, (byKind.get(drop.kind) ?? 0) + 1);
  const { train, validation } = build.splits;
  return [
    `${build.rows} rows; kept ${train.length + validation.length} (train ${train.length}, validation ${validation.length})`,
    ...[...byKind].map(([kind, count]) => `dropped ${count}: ${kind}`),
    `asserts left out of kept tasks: ${build.droppedAsserts.length}`,
  ].join('\n');
}
