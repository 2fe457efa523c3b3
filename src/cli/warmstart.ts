// `npm run warmstart -- --preset tiny --seed 1 --minutes 50 --out public/checkpoints/tiny`
// Supervised warm start of the Planner (statement → plan) and the Coder (statement + plan
// → code) on the task world's train split, one after the other in this process, then
// writes DIR/planner/ and DIR/coder/ checkpoints. Progress: one JSON line per log step.
// Options: --backend auto|webgpu|wasm|cpu  --batch 16  --planner-share 0.35 (of the time)
//          --steps N (per role, instead of --minutes)  --shared (one model, role tokens)
import { join } from 'node:path';
import { type BackendName, initBackend } from '../gpu/backend';
import { createModel, type GPT, makeConfig, Prng, parameterCount } from '../model';
import { saveCheckpointDir } from '../model/checkpointNode';
import { type AgentRole, BucketedBatches, DEFAULT_SFT, runSft, taskExampleSource } from '../sft';
import { createTaskSampler } from '../tasks';
import { CharTokenizer } from '../tokenizer';

function flags(argv: string[]): Map<string, string> {
  const out = new Map<string, string>();
  for (let i = 0; i < argv.length; i++) {
    const a = argv[i]!;
    if (!a.startsWith('--')) continue;
    const next = argv[i + 1];
    if (next === undefined || next.startsWith('--')) out.set(a.slice(2), 'true');
    else {
      out.set(a.slice(2), next);
      i++;
    }
  }
  return out;
}

const f = flags(process.argv.slice(2));
const preset = f.get('preset') ?? 'tiny';
const seed = Number(f.get('seed') ?? 1);
const minutes = f.has('minutes') ? Number(f.get('minutes')) : undefined;
const steps = f.has('steps') ? Number(f.get('steps')) : undefined;
const out = f.get('out') ?? `public/checkpoints/${preset}`;
const batchSize = Number(f.get('batch') ?? 16);
const plannerShare = Number(f.get('planner-share') ?? 0.35);
const shared = f.get('shared') === 'true';
// Mostly harder tiers: L1 is learned quickly, L3/L4 need the examples.
const mix = { L1: 1, L2: 2, L3: 2, L4: 1 };

if (minutes === undefined && steps === undefined) {
  console.error('warmstart: give --minutes N or --steps N');
  process.exit(2);
}

const backend = await initBackend((f.get('backend') ?? 'auto') as BackendName | 'auto');
const tok = new CharTokenizer();
const prng = new Prng(seed);
console.log(
  JSON.stringify({ event: 'start', preset, seed, minutes, steps, batchSize, shared, mix, backend }),
);

async function train(role: AgentRole | 'shared', share: number): Promise<GPT> {
  const config = makeConfig(preset, tok.vocabSize, role);
  const model = createModel(config, prng.fork());
  const tasks = createTaskSampler({ mix, split: 'train', seed: prng.fork() });
  const roles: AgentRole[] = role === 'shared' ? ['planner', 'coder'] : [role];
  const source = taskExampleSource(
    (n) => tasks.next(n),
    tok,
    roles,
    prng.fork(),
    role === 'shared',
  );
  const batches = new BucketedBatches(source, batchSize, prng.fork(), 8, config.nCtx);
  console.log(JSON.stringify({ event: 'role', role, parameters: parameterCount(config) }));
  const result = await runSft(
    model,
    () => batches.next(),
    {
      ...DEFAULT_SFT,
      padId: tok.padId,
      ...(steps !== undefined ? { steps } : { minutes: (minutes ?? 0) * share }),
    },
    (p) => console.log(JSON.stringify({ event: 'progress', role, ...round(p) })),
  );
  console.log(JSON.stringify({ event: 'done', role, ...round(result) }));
  const lab = {
    seed,
    sft: { ...result, batchSize, mix, minutesBudget: minutes ?? null, stepsBudget: steps ?? null },
    backend: backend.backend,
    command: `npm run warmstart -- ${process.argv.slice(2).join(' ')}`,
  };
  const dirs = role === 'shared' ? ['planner', 'coder'] : [role];
  for (const dir of dirs) await saveCheckpointDir(join(out, dir), model, tok, lab);
  return model;
}

function round<T extends object>(o: T): T {
  return Object.fromEntries(
    Object.entries(o).map(([k, v]) => [k, typeof v === 'number' ? Number(v.toPrecision(5)) : v]),
  ) as T;
}

if (shared) await train('shared', 1);
else {
  await train('planner', plannerShare);
  await train('coder', 1 - plannerShare);
}
console.log(JSON.stringify({ event: 'saved', out }));
process.exit(0);
