// Task exports in the dataset shapes of the distributed RL engines (docs/SCALE-OUT.md says
// which file of each engine was read for them):
//   openrlhf  JSONL, `prompt` as chat messages (--data.input_key prompt --data.apply_chat_template)
//             and `label` the task id (--data.label_key label), which the reward server reads back;
//   verl      parquet with verl's columns: data_source, prompt (chat messages), ability,
//             reward_model {style, ground_truth = task id}, extra_info;
//   trl       JSONL, conversational `prompt` plus a `task_id` column that GRPOTrainer passes to
//             reward functions as a keyword argument.
// Beside each dataset goes the lab's own JSONL of the same tasks (the file the reward server
// loads: tests and references) and the Python reward file (written by exportNode.ts).
import { parquetWriteBuffer } from 'hyparquet-writer';
import { toJsonl } from './exportJsonl';
import type { Split, Task } from './types';

export const EXPORT_FORMATS = ['lab', 'openrlhf', 'verl', 'trl'] as const;
export type ExportFormat = (typeof EXPORT_FORMATS)[number];
export type EngineFormat = Exclude<ExportFormat, 'lab'>;

/** verl picks the scoring function by data_source; this names the lab's tasks. */
export const DATA_SOURCE = 'core-code-lab';

export interface ExportFile {
  name: string;
  content: string | Uint8Array;
}

type ChatMessage = { role: 'user'; content: string };

/**
 * The prompt an instruction-tuned model gets: the lab's statement plus what the judge needs
 * (the entry point's name and arity; a function declaration the extractor can find).
 */
export function enginePrompt(task: Task): ChatMessage[] {
  const args = task.arity === 1 ? '1 argument' : `${task.arity} arguments`;
  return [
    {
      role: 'user',
      content:
        `Write a JavaScript function named ${task.entryPoint} (${args}). ${task.statement}\n` +
        `Reply with the function declaration only: function ${task.entryPoint}(...) { ... }`,
    },
  ];
}

export function openrlhfRecord(task: Task) {
  return { prompt: enginePrompt(task), label: task.id, tier: task.tier };
}

export function trlRecord(task: Task) {
  return { prompt: enginePrompt(task), task_id: task.id, tier: task.tier };
}

export function verlRow(task: Task, split: Split, index: number) {
  return {
    data_source: DATA_SOURCE,
    prompt: enginePrompt(task),
    ability: 'code',
    reward_model: { style: 'rule', ground_truth: task.id },
    extra_info: { split, index, task_id: task.id, tier: task.tier },
  };
}

const text = (name: string) => ({
  name,
  type: 'BYTE_ARRAY' as const,
  converted_type: 'UTF8' as const,
  repetition_type: 'REQUIRED' as const,
});

/** verl's rows as parquet: prompt a LIST of {role, content}, the two dicts as structs. */
export function verlParquet(tasks: readonly Task[], split: Split): Uint8Array {
  const rows = tasks.map((task, index) => verlRow(task, split, index));
  const columns = ['data_source', 'prompt', 'ability', 'reward_model', 'extra_info'] as const;
  const buffer = parquetWriteBuffer({
    columnData: columns.map((name) => ({ name, data: rows.map((row) => row[name]) })),
    schema: [
      { name: 'root', num_children: columns.length },
      text('data_source'),
      { name: 'prompt', repetition_type: 'REQUIRED', converted_type: 'LIST', num_children: 1 },
      { name: 'list', repetition_type: 'REPEATED', num_children: 1 },
      { name: 'element', repetition_type: 'REQUIRED', num_children: 2 },
      text('role'),
      text('content'),
      text('ability'),
      { name: 'reward_model', repetition_type: 'REQUIRED', num_children: 2 },
      text('style'),
      text('ground_truth'),
      { name: 'extra_info', repetition_type: 'REQUIRED', num_children: 4 },
      text('split'),
      { name: 'index', type: 'INT32', repetition_type: 'REQUIRED' },
      text('task_id'),
      text('tier'),
    ],
  });
  return new Uint8Array(buffer);
}

const jsonl = (records: readonly unknown[]) =>
  records.map((record) => `${JSON.stringify(record)}\n`).join('');

/** The lab's task file that goes beside an engine dataset (the reward server's --tasks). */
export function tasksFileName(split: Split): string {
  return `${split}.tasks.jsonl`;
}

/** An engine's dataset for one split, and the lab's task file the reward server loads. */
export function engineExportFiles(
  format: EngineFormat,
  tasks: readonly Task[],
  split: Split,
): ExportFile[] {
  const dataset: ExportFile =
    format === 'verl'
      ? { name: `${split}.parquet`, content: verlParquet(tasks, split) }
      : {
          name: `${split}.jsonl`,
          content: jsonl(
            tasks.map((task) => (format === 'openrlhf' ? openrlhfRecord(task) : trlRecord(task))),
          ),
        };
  return [dataset, { name: tasksFileName(split), content: toJsonl(tasks) }];
}
