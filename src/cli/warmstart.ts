// `npm run warmstart -- --preset tiny --seed 1 --minutes 50 --out public/checkpoints/tiny`
// Supervised warm start of the Planner (statement → plan) and the Coder (statement + plan
// → code) on the task world's train split, one after the other in this process, then
// writes DIR/planner/ and DIR/coder/ checkpoints. Progress: one JSON line per log step.
// Options: --backend auto|kernels|tfjs-webgpu|wasm|cpu  --batch 16  --planner-share 0.35 (of the time)
//          --steps N (per role, instead of --minutes)  --shared (one model, role tokens)
//          --coder-alone (only a Coder, statement → code with no plan: `single` mode's warm start)
//          --self-plan (one model, statement → plan <|code|> program: `self-plan` mode's, in coder/)
//          --merges N (BPE merges fitted on the train split, default 512; 0: characters)
//          --resume (go on from OUT/resume/, saved every --checkpoint-every steps of a --steps run)
import { join } from 'node:path';
import { BACKEND_CHOICES, type BackendChoice } from '../engine/types';
import { initBackend } from '../gpu/backend';
import { PRESETS, type PresetName } from '../model';
import { saveCheckpointDir } from '../model/checkpointNode';
import { DEFAULT_MERGES, warmStartModels } from '../sft/warmStart';
import type { FlagSpecs } from './flags';
import { commandLine, exitWhenWritten, UsageError } from './runCli';
import { loadWarmStartResume, removeWarmStartResume, saveWarmStartResume } from './warmstartResume';

/** A --steps run saves where it stands this often (a few seconds of a tiny model's steps). */
const DEFAULT_CHECKPOINT_EVERY = 250;

const FLAGS = {
  preset: {
    kind: 'choice',
    choices: Object.keys(PRESETS) as PresetName[],
    help: 'model size (default tiny; tiny-2x: the single-2x baseline, two tiny models in one)',
  },
  seed: { kind: 'integer', help: 'seed (default 1)' },
  minutes: { kind: 'number', help: 'time budget of both roles together' },
  steps: { kind: 'integer', help: 'steps per role, instead of --minutes' },
  out: {
    kind: 'string',
    help: 'folder for planner/ and coder/ (default public/checkpoints/<preset>)',
  },
  backend: { kind: 'choice', choices: BACKEND_CHOICES, help: 'where it trains (default auto)' },
  batch: { kind: 'integer', help: 'examples per step (default 16)' },
  'planner-share': { kind: 'number', help: 'the Planner’s share of the time (default 0.35)' },
  shared: { kind: 'boolean', help: 'one model for both roles, with role tokens' },
  'coder-alone': {
    kind: 'boolean',
    help: 'only a Coder, statement → code (single mode’s warm start)',
  },
  'self-plan': {
    kind: 'boolean',
    help: 'only one model, statement → plan <|code|> program (self-plan mode’s warm start)',
  },
  'task-set': {
    kind: 'choice',
    choices: ['procedural', 'examples'],
    help: 'the task world (default procedural); examples: signature and input/output examples',
  },
  merges: {
    kind: 'integer',
    help: `BPE merges fitted on the train split (default ${DEFAULT_MERGES}; 0: characters)`,
  },
  'checkpoint-every': {
    kind: 'integer',
    help: `with --steps: save a resumable state in OUT/resume/ every this many steps of a role (default ${DEFAULT_CHECKPOINT_EVERY}; 0: never)`,
  },
  resume: {
    kind: 'boolean',
    help: 'go on from OUT/resume/ (same flags), ending as the uninterrupted run would have',
  },
} satisfies FlagSpecs;
const { flags: f } = commandLine('warmstart', FLAGS, {
  usage: 'npm run warmstart -- --preset tiny --seed 1 --minutes 50 --out DIR [flags]',
});
const preset = (f.preset ?? 'tiny') as PresetName;
const seed = f.seed ?? 1;
const minutes = f.minutes;
const steps = f.steps;
const out = f.out ?? `public/checkpoints/${preset}`;
const batchSize = f.batch ?? 16;
const plannerShare = f['planner-share'] ?? 0.35;
const shared = f.shared === true;
const coderAlone = f['coder-alone'] === true;
const selfPlan = f['self-plan'] === true;
const merges = f.merges ?? DEFAULT_MERGES;
const taskSet = (f['task-set'] ?? 'procedural') as 'procedural' | 'examples';

if (coderAlone && selfPlan) {
  throw new UsageError('--coder-alone and --self-plan are two different baselines: give one');
}
if (minutes === undefined && steps === undefined) {
  throw new UsageError('give --minutes N or --steps N');
}
if (f.resume === true && steps === undefined) {
  throw new UsageError('--resume needs --steps: a --minutes run follows the clock and cannot');
}
if ((f['checkpoint-every'] ?? 0) < 0) {
  throw new UsageError(
    `--checkpoint-every must be 0 (never) or more, got ${f['checkpoint-every']}`,
  );
}
// The flags a resume must repeat: all of this command's but --resume.
const resumeArgs = process.argv.slice(2).filter((a) => a !== '--resume' && a !== '--debug');
const checkpointEvery =
  steps === undefined ? 0 : (f['checkpoint-every'] ?? DEFAULT_CHECKPOINT_EVERY);

const backend = await initBackend((f.backend ?? 'auto') as BackendChoice);
console.log(
  JSON.stringify({
    event: 'start',
    preset,
    seed,
    minutes,
    steps,
    batchSize,
    shared,
    ...(coderAlone ? { coderAlone } : {}),
    ...(selfPlan ? { selfPlan } : {}),
    merges,
    taskSet,
    backend,
  }),
);

const round = <T extends object>(o: T): T =>
  Object.fromEntries(
    Object.entries(o).map(([k, v]) => [k, typeof v === 'number' ? Number(v.toPrecision(5)) : v]),
  ) as T;

const resume = f.resume === true ? await loadWarmStartResume(out, resumeArgs) : undefined;
if (resume) {
  console.log(JSON.stringify({ event: 'resume', role: resume.role, step: resume.step, out }));
}

const models = await warmStartModels({
  preset,
  seed,
  minutes,
  steps,
  batchSize,
  plannerShare,
  shared,
  coderAlone,
  selfPlan,
  merges,
  taskSet,
  onRoleStart: (role, parameters) =>
    console.log(JSON.stringify({ event: 'role', role, parameters })),
  onProgress: (role, p) => console.log(JSON.stringify({ event: 'progress', role, ...round(p) })),
  ...(resume ? { resume } : {}),
  checkpointEvery,
  onCheckpoint: async (state) => {
    await saveWarmStartResume(out, resumeArgs, state);
    console.log(JSON.stringify({ event: 'checkpoint', role: state.role, step: state.step }));
  },
});

const command = `npm run warmstart -- ${process.argv.slice(2).join(' ')}`;
for (const role of coderAlone || selfPlan
  ? (['coder'] as const)
  : (['planner', 'coder'] as const)) {
  const { model, tokenizer, lab } = models[role];
  const provenance = {
    ...lab,
    sft: { ...(lab.sft as object), minutesBudget: minutes ?? null, stepsBudget: steps ?? null },
    backend: backend.backend,
    command,
  };
  await saveCheckpointDir(join(out, role), model, tokenizer, provenance);
}
await removeWarmStartResume(out);
console.log(JSON.stringify({ event: 'saved', out }));
await exitWhenWritten(0);
