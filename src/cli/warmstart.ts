// `npm run warmstart -- --preset tiny --seed 1 --minutes 50 --out public/checkpoints/tiny`
// Supervised warm start of the Planner (statement → plan) and the Coder (statement + plan
// → code) on the task world's train split, one after the other in this process, then
// writes DIR/planner/ and DIR/coder/ checkpoints. Progress: one JSON line per log step.
// Options: --backend auto|kernels|tfjs-webgpu|wasm|cpu  --batch 16  --planner-share 0.35 (of the time)
//          --steps N (per role, instead of --minutes)  --shared (one model, role tokens)
//          --coder-alone (only a Coder, statement → code with no plan: `single` mode's warm start)
//          --merges N (BPE merges fitted on the train split, default 512; 0: characters)
import { join } from 'node:path';
import { type BackendChoice, initBackend } from '../gpu/backend';
import { saveCheckpointDir } from '../model/checkpointNode';
import { DEFAULT_MERGES, warmStartModels } from '../sft/warmStart';
import { parseFlags } from './flags';

const f = parseFlags(process.argv.slice(2));
const preset = f.get('preset') ?? 'tiny';
const seed = Number(f.get('seed') ?? 1);
const minutes = f.has('minutes') ? Number(f.get('minutes')) : undefined;
const steps = f.has('steps') ? Number(f.get('steps')) : undefined;
const out = f.get('out') ?? `public/checkpoints/${preset}`;
const batchSize = Number(f.get('batch') ?? 16);
const plannerShare = Number(f.get('planner-share') ?? 0.35);
const shared = f.get('shared') === 'true';
const coderAlone = f.has('coder-alone') && f.get('coder-alone') !== 'false';
const merges = Number(f.get('merges') ?? DEFAULT_MERGES);

if (minutes === undefined && steps === undefined) {
  console.error('warmstart: give --minutes N or --steps N');
  process.exit(2);
}
if (preset !== 'tiny' && preset !== 'small' && preset !== 'base') {
  console.error(`warmstart: unknown preset "${preset}" (tiny, small, base)`);
  process.exit(2);
}

const backend = await initBackend((f.get('backend') ?? 'auto') as BackendChoice);
console.log(
  JSON.stringify({
    event: 'start',
    preset,
    seed,
    minutes,
    steps,
    batchSize,
    shared,
    merges,
    backend,
  }),
);

const round = <T extends object>(o: T): T =>
  Object.fromEntries(
    Object.entries(o).map(([k, v]) => [k, typeof v === 'number' ? Number(v.toPrecision(5)) : v]),
  ) as T;

const models = await warmStartModels({
  preset,
  seed,
  minutes,
  steps,
  batchSize,
  plannerShare,
  shared,
  coderAlone,
  merges,
  onRoleStart: (role, parameters) =>
    console.log(JSON.stringify({ event: 'role', role, parameters })),
  onProgress: (role, p) => console.log(JSON.stringify({ event: 'progress', role, ...round(p) })),
});

const command = `npm run warmstart -- ${process.argv.slice(2).join(' ')}`;
for (const role of coderAlone ? (['coder'] as const) : (['planner', 'coder'] as const)) {
  const { model, tokenizer, lab } = models[role];
  const provenance = {
    ...lab,
    sft: { ...(lab.sft as object), minutesBudget: minutes ?? null, stepsBudget: steps ?? null },
    backend: backend.backend,
    command,
  };
  await saveCheckpointDir(join(out, role), model, tokenizer, provenance);
}
console.log(JSON.stringify({ event: 'saved', out }));
process.exit(0);
