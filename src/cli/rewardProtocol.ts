// OpenRLHF's remote reward protocol, as its client sends and reads it (openrlhf/utils/agent.py
// `_fetch_rewards_via_http`; formerly openrlhf/utils/remote_rm_utils.py `request_api_wrapper`):
//   POST /get_reward  {"query": [...], "prompts": [...], "labels": [...]}
//   200               {"rewards": [...], "scores": [...], "extra_logs": {name: [...]}}
// A query is the prompt followed by the completion; a label is a task id of the server's file.
// OpenRLHF turns rewards, scores and each extra_logs list into tensors, so every value here is
// a number, one per query. Requests it cannot judge get a status and one line of words.
import type { ProgramToJudge } from '../agents/judge';
import type { RewardedProgram } from '../agents/rewardCompletions';
import type { Task } from '../tasks';

export interface RewardAnswer {
  /** The lab's Coder reward: the number GRPO's advantages are computed from. */
  rewards: number[];
  /** Pass fraction in [0, 1]: what OpenRLHF's dynamic filtering averages over a group. */
  scores: number[];
  extra_logs: Record<string, number[]>;
}

export type ParsedRequest =
  | { ok: true; programs: ProgramToJudge[] }
  | { ok: false; status: number; error: string };

const SHAPE =
  'send {"query": [prompt + completion, ...], "prompts": [...], "labels": [task id, ...]}';

/** The completion inside a query: what follows its prompt (the whole query if it does not start
 * with the prompt, e.g. when the trainer's detokenizer changed a character; the function
 * extractor ignores prose around the code). */
export function completionOf(query: string, prompt: string): string {
  if (prompt === '') return query;
  if (query.startsWith(prompt)) return query.slice(prompt.length);
  const at = query.lastIndexOf(prompt);
  return at >= 0 ? query.slice(at + prompt.length) : query;
}

const stringList = (value: unknown): value is string[] =>
  Array.isArray(value) && value.every((item) => typeof item === 'string');

export function parseRewardRequest(
  body: string,
  tasks: ReadonlyMap<string, Task>,
  maxBatch: number,
  taskSource: string,
): ParsedRequest {
  const refuse = (status: number, error: string): ParsedRequest => ({ ok: false, status, error });
  let raw: unknown;
  try {
    raw = JSON.parse(body);
  } catch (error) {
    return refuse(400, `request body is not JSON (${(error as Error).message}); ${SHAPE}`);
  }
  if (typeof raw !== 'object' || raw === null || Array.isArray(raw)) {
    return refuse(400, `request body must be a JSON object; ${SHAPE}`);
  }
  const { query, prompts, labels } = raw as Record<string, unknown>;
  if (!stringList(query)) return refuse(400, `"query" must be an array of strings; ${SHAPE}`);
  if (!stringList(labels)) {
    return refuse(400, `"labels" must be an array of task ids (strings), one per query; ${SHAPE}`);
  }
  if (labels.length !== query.length) {
    return refuse(400, `${query.length} queries but ${labels.length} labels: one label per query`);
  }
  if (prompts !== undefined && !stringList(prompts)) {
    return refuse(400, `"prompts" must be an array of strings, one per query (or left out)`);
  }
  if (prompts !== undefined && prompts.length !== query.length) {
    return refuse(
      400,
      `${query.length} queries but ${prompts.length} prompts: one prompt per query`,
    );
  }
  if (query.length > maxBatch) {
    return refuse(
      413,
      `batch of ${query.length} queries is over the server's limit of ${maxBatch} (--max-batch): send it in parts`,
    );
  }
  const unknown = labels
    .map((label, index) => ({ label, index }))
    .filter(({ label }) => !tasks.has(label));
  if (unknown.length > 0) {
    const shown = unknown
      .slice(0, 3)
      .map(({ label, index }) => `labels[${index}] = ${JSON.stringify(label)}`)
      .join(', ');
    const more = unknown.length > 3 ? ` and ${unknown.length - 3} more` : '';
    return refuse(
      400,
      `unknown task id: ${shown}${more}; the server holds the ${tasks.size} tasks of ${taskSource}`,
    );
  }
  return {
    ok: true,
    programs: query.map((text, index) => ({
      task: tasks.get(labels[index] as string) as Task,
      completion: completionOf(text, prompts?.[index] ?? ''),
    })),
  };
}

export function rewardAnswer(programs: readonly RewardedProgram[]): RewardAnswer {
  const pick = (value: (program: RewardedProgram) => number) => programs.map(value);
  return {
    rewards: pick((p) => p.reward.total),
    scores: pick((p) => p.reward.passFraction),
    extra_logs: {
      pass_fraction: pick((p) => p.reward.passFraction),
      efficiency: pick((p) => p.reward.efficiency),
      format_ok: pick((p) => (p.outcome.formatOk ? 1 : 0)),
      all_passed: pick((p) => (p.run?.passed && p.outcome.formatOk ? 1 : 0)),
    },
  };
}
