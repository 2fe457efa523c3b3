// Issue 31's sampling figures for `npm run bench -- llama-step`, in this process on the kernels:
// a GRPO-shaped batch (2 prompts × 4 samples, 16 tokens each, T = 1) sampled once by the random
// Qwen2 base's Coder role and once by the lab's tiny GPT-2 Coder. For each: the prompt tokens
// the sampler prefilled against the distinct prompts' tokens (a prompt shared by a group's
// samples should be prefilled once), and the dispatches, submissions and readbacks per sampled
// token (both on the one model, drawing on the device, each layer of a decode step in one
// dispatch, decode_layer.wgsl: the GPT-2 trained in full on its own weights, the Llama role on
// its small base's f32 copy with the adapter merged);
// and the positions the device update runs
// for those samples, a group's shared prompt packed once (packedBatch.ts), against one sample a
// row.
import { join } from 'node:path';
import { createBaseRoles } from '../src/engine/baseRoles';
import { defaultRunConfig } from '../src/engine/session';
import { initBackend } from '../src/gpu/backend';
import { kernelEngine } from '../src/gpu/engine/kernelEngine';
import { sampledCounts } from '../src/gpu/engine/modelSampling';
import { packBatch } from '../src/gpu/engine/packedBatch';
import { loadCheckpointDir } from '../src/model/checkpointNode';
import { folderSource } from '../src/model/families/folderSourceNode';
import { loadHubModel } from '../src/model/families/load';
import { KvCacheSampler } from '../src/rollout';
import type { SampleOptions } from '../src/rollout/types';

const SAMPLES = 4;
const TOKENS = 16;

interface Counts {
  prefilled: number;
  distinct: number;
  perToken: { dispatches: number; submissions: number; readbacks: number };
  /** The update's padded positions: packed rows, and one sample a row. */
  update: { rows: number; width: number; samples: number; longest: number };
}

async function count(
  sample: (prompts: number[][]) => Promise<{ tokens: number[][] }>,
  prompts: number[][],
): Promise<Counts> {
  const rt = kernelEngine()?.rt;
  if (!rt) throw new Error('the kernels are off');
  const rows = prompts.flatMap((p) => Array.from({ length: SAMPLES }, () => p));
  await sample(rows); // the first call compiles and uploads
  const before = { ...rt.counters, prefilled: sampledCounts.prefilledTokens };
  const { tokens } = await sample(rows);
  const sampled = tokens.reduce((n, t) => n + t.length, 0);
  const per = (key: 'dispatches' | 'submissions' | 'readbacks') =>
    (rt.counters[key] - before[key]) / sampled;
  const sequences = rows.map((p, i) => [...p, ...(tokens[i] ?? [])]);
  const parts = packBatch({ sequences, scoredFrom: rows.map((p) => p.length - 1) });
  return {
    prefilled: sampledCounts.prefilledTokens - before.prefilled,
    distinct: prompts.reduce((n, p) => n + p.length, 0),
    perToken: {
      dispatches: per('dispatches'),
      submissions: per('submissions'),
      readbacks: per('readbacks'),
    },
    update: {
      rows: parts.reduce((n, part) => n + part.B, 0),
      width: Math.max(...parts.map((part) => part.T)),
      samples: sequences.length,
      longest: Math.max(...sequences.map((q) => q.length)),
    },
  };
}

function line(label: string, c: Counts): string {
  const p = c.perToken;
  const u = c.update;
  return `${label}: prompt tokens prefilled ${c.prefilled} against ${c.distinct} distinct; per sampled token ${p.dispatches.toFixed(1)} dispatches, ${p.submissions.toFixed(2)} submissions, ${p.readbacks.toFixed(2)} readbacks; the update runs ${u.rows} rows × ${u.width} = ${u.rows * u.width} positions, against ${u.samples} × ${u.longest} = ${u.samples * u.longest} one sample a row.`;
}

/** The two lines for the bench's notes (the base is a Hugging Face folder of the Llama family). */
export async function samplingCountNotes(base: string): Promise<string[]> {
  const report = await initBackend('kernels');
  if (!report.kernels) return [`Sampling counts: the kernels are off here (${report.reason}).`];
  const options = (stopId: number): SampleOptions => ({
    maxNewTokens: TOKENS,
    temperature: 1,
    topK: 0,
    seed: 1,
    stopId,
  });

  const loaded = await loadHubModel(folderSource(base));
  const roles = createBaseRoles(defaultRunConfig({ loraRank: 4, base }), {
    id: base,
    model: loaded.model,
    tokenizer: loaded.tokenizer,
  });
  const coder = roles.roles.get('coder');
  if (!coder) throw new Error('the base has no Coder role');
  const llamaPrompts = [
    roles.prompts.coder(
      { statement: 'Return the sum of a and b.', entryPoint: 'add' },
      '1. add them',
    ),
    roles.prompts.coder(
      { statement: 'Return the product of a and b.', entryPoint: 'mul' },
      '1. multiply them',
    ),
  ];
  const llama = await count(
    (rows) => new KvCacheSampler(coder).sample(rows, options(roles.prompts.stopId)),
    llamaPrompts,
  );

  const tiny = await loadCheckpointDir(join('public', 'checkpoints', 'tiny', 'coder'), false);
  const tok = tiny.tokenizer;
  const gptPrompts = ['Keep the even numbers.', 'Square each number.'].map((s) =>
    tok.encode(`<|statement|>${s}<|plan|>1. do it<|code|>`),
  );
  const gpt = await count(
    (rows) => new KvCacheSampler(tiny.model).sample(rows, options(tok.eosId)),
    gptPrompts,
  );
  return [
    `Sampling ${SAMPLES} samples of each of 2 prompts, ${TOKENS} tokens, T = 1, on the kernels (${report.adapter}):`,
    line('random Qwen2, Coder role (LoRA r 4), chat prompts', llama),
    line("lab's tiny GPT-2 Coder", gpt),
  ];
}
