// `npm run --silent train -- grpo --preset tiny --mode core --steps 50 --seed 1 --out runs/a`
// Headless collaborative GRPO. Writes DIR/config.json, DIR/metrics.jsonl (one line per step,
// eval/* merged in every --eval-every steps), DIR/samples.jsonl (the step's plan × program
// groups), DIR/checkpoints/{planner,coder}/, with --lora-rank R DIR/adapters/<role>/ (PEFT's
// layout), and DIR/snapshot/ (everything --resume needs).
// `--resume DIR` continues a cut-off run exactly where its last snapshot left it.
// Options: --checkpoint DIR (with planner/ and coder/; default public/checkpoints/<preset>, or
// <preset>-examples with --task-set examples,
// when present, else freshly initialized models) --backend auto|kernels|tfjs-webgpu|wasm|cpu
// --tasks-per-step --plans --programs --beta --lr --iterations --loss grpo|dapo|dr_grpo
// --temperature --eval-tasks N --families a,b --tiers L1:1,L2:1 --final-eval (writes DIR/eval.json)
// --memory-budget MIB (one micro-batch's budget; default: the backend's; also with --resume).
// --minutes M: a wall-clock budget instead of a step count (ends after the step in progress,
// then writes the final evaluation to DIR/eval.json, as --final-eval does). A new run with
// periodic evaluation (--eval-every > 0) also evaluates at step 0: metrics.jsonl's first line.
// --agents planner,coder,debugger | retriever,planner,coder | retriever,planner,coder,debugger
// adds the Debugger (--repairs D --repaired-programs P --repair-credit original|repaired) and
// the Retriever (--candidates K --retrieval learned|bm25); their warm starts are read from
// the checkpoint folder's debugger/ and retriever/ when there, and written beside the others.
// Every run setting has its flag in one table, src/engine/settings.ts (also --epsilon-low,
// --epsilon-high, --max-grad-norm, --scale-rewards, --pass-weight, --efficiency-weight,
// --format-penalty, --top-k), the same table the page's URL and controls use.
// An out-of-memory or a crash ends the run with its reason and the --resume line that
// continues it from the last saved step (with half the budget after an out-of-memory).
import { existsSync } from 'node:fs';
import { mkdir, readdir, readFile, rm, writeFile } from 'node:fs/promises';
import { dirname, join } from 'node:path';
import { loadBaseModel } from '../engine/baseModel';
import type { BaseModel } from '../engine/baseRoles';
import { classifyFailure, watchEngineLog } from '../engine/failure';
import { defaultRunConfig, type Suites, TrainingSession } from '../engine/session';
import { getCheckpoint } from '../engine/snapshotFiles';
import { warmStartFolder } from '../engine/taskSets';
import {
  BACKEND_CHOICES,
  type BackendChoice,
  isBackendChoice,
  type RunConfig,
  type RunSnapshot,
  type StepReport,
} from '../engine/types';
import { checkKernelsForBase, initBackend, onBackendChange } from '../gpu/backend';
import { runsOn } from '../gpu/runsOn';
import {
  BYTES_PER_MIB,
  createModel,
  defaultMemoryBudgetBytes,
  type LoadedCheckpoint,
  makeConfig,
} from '../model';
import { loadCheckpointDir, writeCheckpointDir } from '../model/checkpointNode';
import { hubTransformerConfig } from '../model/families/hubConfig';
import { hasAgent, usesPlanner } from '../rl/config';
import { createSandbox } from '../sandbox/nodeSandbox';
import { loadSuite, SUITES } from '../tasks';
import { CharTokenizer } from '../tokenizer';
import type { FlagSpecs } from './flags';
import { parseJsonText, readJsonFile } from './jsonFiles';
import { checkpointSource } from './modelHf';
import { commandLine, exitWhenWritten, UsageError } from './runCli';
import { runConfigFromSettingFlags, settingFlags } from './settingFlags';
import { readTaskSets } from './taskSetFiles';

/** Every run setting's flag (engine/settings.ts), then the run's own. */
const FLAGS = {
  ...settingFlags(),
  steps: { kind: 'integer', help: 'GRPO steps (default 10; with --resume, the run’s own)' },
  minutes: { kind: 'number', help: 'a wall-clock budget instead of --steps; then --final-eval' },
  out: { kind: 'string', help: 'the run’s folder (replaced if there)' },
  resume: { kind: 'string', help: 'continue the run in this folder from its last snapshot' },
  checkpoint: {
    kind: 'string',
    help: 'warm starts: a folder with planner/ and coder/ (default public/checkpoints/<preset>; <preset>-examples for the examples task set)',
  },
  'final-eval': { kind: 'boolean', help: 'evaluate the end of the run into DIR/eval.json' },
} satisfies FlagSpecs;
const argv = process.argv.slice(2);
const { flags: f } = commandLine('train', FLAGS, {
  usage: 'npm run --silent train -- grpo --steps S --out DIR [flags] | grpo --resume DIR',
  words: { name: 'command', choices: ['grpo'] },
});
/** The setting flags' values (their names come from the table, so untyped here). */
const settingValues: Readonly<Record<string, unknown>> = f;
// XNNPACK's failure line leaves an op's output unwritten: it ends the run (see failure.ts).
const recentLogLines: string[] = [];
watchEngineLog(recentLogLines, () => {});
const resumeDir = f.resume;
const out = resumeDir ?? f.out;
if (!out) throw new UsageError('give --out DIR (or --resume DIR)');
/** What may change when a run resumes; its settings are its snapshot's. */
const RESUME_FLAGS = ['resume', 'steps', 'minutes', 'final-eval', 'backend', 'memory-budget'];
const fixed = Object.keys(f).filter((name) => !RESUME_FLAGS.includes(name) && name !== 'debug');
if (resumeDir && fixed.length > 0) {
  const allowed = RESUME_FLAGS.slice(1).map((name) => `--${name}`);
  throw new UsageError(
    `--${fixed[0]} cannot change a resumed run (its settings are in ${join(resumeDir, 'snapshot')}); with --resume: ${allowed.join(' ')}`,
  );
}
// A new run's settings are checked before anything is loaded or written.
const newConfig = resumeDir ? null : runConfigFromFlags();
/** What a resumed run was started with (its DIR/config.json), read once. */
const resumed = resumeDir
  ? await readJsonFile<{
      config?: RunConfig;
      steps: number | null;
      minutes?: number | null;
      finalEval: boolean;
    }>(join(resumeDir, 'config.json'))
  : null;
let backend = await initBackend(backendOfRun());
// The kernels turn themselves off on a lost or failed device; the run goes on on tfjs.
onBackendChange((report, why) =>
  log({
    event: 'warning',
    message: `the lab's WebGPU kernels stopped (${why}); continuing on tfjs ${report.backend}`,
  }),
);
const sandbox = await createSandbox();
const suites = await readSuites();

let session: TrainingSession;
let totalSteps: number;
let finalEval: boolean;
let minutes = f.minutes;
if (resumeDir && resumed) {
  // A run made with --minutes resumes with a fresh budget of the same length.
  if (minutes === undefined && f.steps === undefined && resumed.steps === null) {
    minutes = resumed.minutes ?? undefined;
  }
  const snapshot = await readSnapshot(join(resumeDir, 'snapshot'));
  if (settingValues['memory-budget'] !== undefined) {
    snapshot.config = {
      ...snapshot.config,
      memoryBudgetMiB: Number(settingValues['memory-budget']),
    };
  }
  session = await TrainingSession.restore(snapshot, {
    ...(snapshot.config.base !== undefined ? { base: await loadBase(snapshot.config) } : {}),
    sandbox,
    suites,
    ...(await readTaskSets(snapshot.config)),
  });
  totalSteps = f.steps ?? resumed.steps ?? Number.POSITIVE_INFINITY;
  finalEval = resumed.finalEval || f['final-eval'] === true || minutes !== undefined;
  // Lines written after the last snapshot are redone, so drop them.
  for (const file of ['metrics.jsonl', 'samples.jsonl']) {
    await keepStepsUpTo(join(resumeDir, file), snapshot.step);
  }
} else if ((newConfig ?? runConfigFromFlags()).base !== undefined) {
  // Over a pretrained base: one frozen model, every role its LoRA adapter (engine/baseRoles.ts).
  const config = newConfig ?? runConfigFromFlags();
  session = await TrainingSession.create(config, {
    base: await loadBase(config),
    sandbox,
    suites,
    ...(await readTaskSets(config)),
  });
  totalSteps = f.steps ?? (minutes !== undefined ? Number.POSITIVE_INFINITY : 10);
  finalEval = f['final-eval'] === true || minutes !== undefined;
  await startRunFolder(config, null);
} else {
  const config = newConfig ?? runConfigFromFlags();
  const checkpoint = f.checkpoint ?? `public/${warmStartFolder(config)}`;
  // With a Retriever the Planner reads a worked example first: its warm start continued on
  // such prompts (planner-retrieval/, from npm run warmstart-agents) when the folder has it.
  const plannerDir =
    hasAgent(config.grpo.agents, 'retriever') &&
    existsSync(join(checkpoint, 'planner-retrieval', 'model.safetensors'))
      ? 'planner-retrieval'
      : 'planner';
  const coder = await loadRole(checkpoint, 'coder', config, 12);
  // A missing Planner (single mode's warm start has none) starts fresh on the Coder's tokenizer.
  const planner = await loadRole(checkpoint, plannerDir, config, 11, coder.tokenizer);
  // The Debugger's and the Retriever's warm starts sit beside the others (npm run
  // warmstart-agents); without one the session starts that agent from the Coder / Planner.
  const extra: { debugger?: LoadedCheckpoint; retriever?: LoadedCheckpoint } = {};
  for (const role of ['debugger', 'retriever'] as const) {
    if (hasAgent(config.grpo.agents, role)) {
      if (existsSync(join(checkpoint, role, 'model.safetensors'))) {
        extra[role] = await loadCheckpointDir(join(checkpoint, role));
      } else {
        log({
          event: 'warning',
          message: `no ${role} checkpoint in ${checkpoint}: it starts as a copy of the ${role === 'debugger' ? 'coder' : 'planner'}`,
        });
      }
    }
  }
  session = await TrainingSession.create(config, {
    planner,
    coder,
    ...extra,
    sandbox,
    suites,
    ...(await readTaskSets(config)),
  });
  totalSteps = f.steps ?? (minutes !== undefined ? Number.POSITIVE_INFINITY : 10);
  finalEval = f['final-eval'] === true || minutes !== undefined;
  await startRunFolder(config, existsSync(join(checkpoint, 'coder')) ? checkpoint : null);
}

/** A new run's folder: config.json, empty metrics and samples, step 0's evaluation and snapshot. */
async function startRunFolder(config: RunConfig, checkpoint: string | null): Promise<void> {
  if (!out) return;
  await rm(out, { recursive: true, force: true });
  await mkdir(out, { recursive: true });
  const provenance = {
    config,
    steps: Number.isFinite(totalSteps) ? totalSteps : null,
    minutes: minutes ?? null,
    finalEval,
    checkpoint,
    backend,
    command: `npm run --silent train -- ${argv.join(' ')}`,
  };
  await writeFile(join(out, 'config.json'), `${JSON.stringify(provenance, null, 2)}\n`);
  await writeFile(join(out, 'metrics.jsonl'), '');
  await writeFile(join(out, 'samples.jsonl'), '');
  if (config.evalEvery > 0) {
    // The warm start's level, on the same quick-eval set as every later evaluation.
    const atStart = await session.evaluate();
    await writeFile(
      join(out, 'metrics.jsonl'),
      `${JSON.stringify({ step: 0, ...atStart.metrics })}\n`,
    );
    log({ event: 'eval', step: 0, ...pick({ step: 0, ...atStart.metrics }) });
  }
  // Step 0 saved too, so a run that fails in its first step can be resumed.
  await writeSnapshot(join(out, 'snapshot'), await session.snapshot());
}

log({
  event: 'start',
  out,
  step: session.step,
  steps: totalSteps,
  mode: session.config.grpo.mode,
  agents: session.config.grpo.agents,
  // What samples and updates, on which adapter, and the tfjs backend kept for the fall-back.
  ...startBackend(),
  // The kernels' self-check on this adapter, where the kernels were tried (also when all pass).
  ...(backend.selfCheck
    ? {
        selfCheck: {
          checked: backend.selfCheck.checked,
          failed: backend.selfCheck.failed,
          ms: backend.selfCheck.ms,
          // Of ms, compiling the pipelines the run then reuses (most of it on a CPU driver).
          compileMs: backend.selfCheck.compileMs,
        },
      }
    : {}),
});
/** The step of the snapshot on disk: where --resume continues. */
let savedStep = session.step;
// --minutes counts training time: from here, and checked after each step, so the step in
// progress at the deadline still lands.
const deadline =
  minutes !== undefined ? performance.now() + minutes * 60_000 : Number.POSITIVE_INFINITY;
while (session.step < totalSteps) {
  try {
    const report = await session.trainStep();
    await appendReport(out, report);
    await writeSnapshot(join(out, 'snapshot'), await session.snapshot());
    savedStep = session.step;
    log({ event: 'step', ...pick(report.metrics) });
  } catch (error) {
    failAndExplain(error);
  }
  if (performance.now() >= deadline) break;
}
const snapshot = await session.snapshot();
for (const role of ['planner', 'coder', 'debugger', 'retriever'] as const) {
  if (!snapshot.files[`${role}/model.safetensors`]) continue;
  await writeCheckpointDir(join(out, 'checkpoints', role), getCheckpoint(snapshot.files, role));
}
// With LoRA: each role's adapter in PEFT's layout, DIR/adapters/<role>/ (PeftModel.from_pretrained).
for (const [name, bytes] of Object.entries(snapshot.files)) {
  if (!name.startsWith('adapters/')) continue;
  await mkdir(join(out, dirname(name)), { recursive: true });
  await writeFile(join(out, name), bytes);
}
if (finalEval) {
  const result = await session.evaluateDetailed();
  await writeFile(
    join(out, 'eval.json'),
    `${JSON.stringify({ step: session.step, ...result }, null, 2)}\n`,
  );
  log({ event: 'eval', ...result.metrics });
}
log({ event: 'done', out, step: session.step });
session.dispose();
await sandbox.close();
await exitWhenWritten(0);

/**
 * The wasm module cannot be trusted after an out-of-memory (or any crash mid-step), so the
 * run ends here: what failed, where, and the line that resumes it from its last snapshot.
 */
function failAndExplain(error: unknown): never {
  const failure = classifyFailure(error, recentLogLines);
  const budget = session.memoryBudgetMiB;
  const resume = [`npm run --silent train -- grpo --resume ${out}`];
  if (failure.kind === 'out_of_memory') {
    const defaultMiB = defaultMemoryBudgetBytes(backend.backend) / BYTES_PER_MIB;
    resume.push(`--memory-budget ${Math.max(16, Math.floor(Math.min(budget, defaultMiB) / 2))}`);
  }
  const where = session.activity === 'idle' ? 'between steps' : `in ${session.activity}`;
  const what = failure.kind === 'out_of_memory' ? 'ran out of memory' : 'failed';
  log({
    event: 'error',
    kind: failure.kind,
    message: `step ${savedStep + 1} ${what} ${where} (micro-batches ≤ ${budget} MiB): ${failure.message}`,
    saved_step: savedStep,
    resume: resume.join(' '),
  });
  process.exit(1);
}

/** The start event's backend fields: `backend` is the engine that samples and updates. */
function startBackend(): Record<string, string> {
  const where = runsOn(backend);
  return {
    backend: where.engine,
    adapter: where.adapter,
    ...(where.fallback ? { fallback: `tfjs ${where.fallback}` } : {}),
  };
}

/** --backend (a choice the flag parser checked), else the resumed run's own, else auto. */
function backendOfRun(): BackendChoice {
  const given = settingValues.backend as string | undefined;
  if (given === undefined) return resumed?.config?.backend ?? 'auto';
  if (isBackendChoice(given)) return given;
  throw new UsageError(`--backend must be one of ${BACKEND_CHOICES.join(' | ')}, got ${given}`);
}

/** The run the flags describe (every setting's flag is in engine/settings.ts), validated. */
function runConfigFromFlags(): RunConfig {
  return defaultRunConfig(runConfigFromSettingFlags(settingValues, defaultRunConfig()));
}

/** The run's base (config.base: a folder or a Hub id, from config.hub), frozen, with its tokenizer. */
async function loadBase(config: RunConfig): Promise<BaseModel> {
  const name = config.base ?? '';
  const source = checkpointSource(name, '--base', config.hub);
  const { base, size, dtypes } = await loadBaseModel(source, name, config);
  log({ event: 'base', base: name, model: size.modelType, dtypes });
  // The kernels check what the base's config needs now, so the start event's selfCheck counts them.
  backend = await checkKernelsForBase(backend, hubTransformerConfig(base.model.config));
  return base;
}

async function loadRole(
  dir: string,
  role: 'planner' | 'coder' | 'planner-retrieval',
  config: RunConfig,
  seed: number,
  freshTokenizer: CharTokenizer = new CharTokenizer(),
): Promise<LoadedCheckpoint> {
  if (existsSync(join(dir, role, 'model.safetensors'))) return loadCheckpointDir(join(dir, role));
  log({
    event: 'warning',
    message:
      role !== 'coder' && !usesPlanner(config.grpo.mode)
        ? `no ${role} checkpoint in ${dir}: none needed, nothing plans apart from the Coder in ${config.grpo.mode} mode`
        : `no ${role} checkpoint in ${dir}: freshly initialized weights`,
  });
  const tokenizer = freshTokenizer;
  const model = createModel(
    makeConfig(config.preset, tokenizer.vocabSize, role === 'coder' ? 'coder' : 'planner'),
    seed + config.grpo.seed,
  );
  return { model, tokenizer, lab: {} };
}

async function readSuites(): Promise<Suites> {
  const suitesOut: Suites = {};
  for (const spec of SUITES) {
    const path = join('public/tasks', spec.file);
    if (existsSync(path)) {
      suitesOut[spec.name as keyof Suites] = loadSuite(await readFile(path, 'utf8')).tasks;
    }
  }
  return suitesOut;
}

async function appendReport(dir: string, report: StepReport): Promise<void> {
  await writeFile(join(dir, 'metrics.jsonl'), `${JSON.stringify(report.metrics)}\n`, { flag: 'a' });
  const samples = report.groups.map((group) => JSON.stringify(group)).join('\n');
  await writeFile(join(dir, 'samples.jsonl'), `${samples}\n`, { flag: 'a' });
  for (const skipped of report.skippedUpdates)
    log({ event: 'skipped_update', step: report.step, ...skipped });
}

/** A snapshot as files: run-config.json plus each named file; written to a temp dir, then swapped in. */
async function writeSnapshot(dir: string, snapshot: RunSnapshot): Promise<void> {
  const temp = `${dir}.tmp`;
  await rm(temp, { recursive: true, force: true });
  for (const [name, bytes] of Object.entries(snapshot.files)) {
    await mkdir(dirname(join(temp, name)), { recursive: true });
    await writeFile(join(temp, name), bytes);
  }
  await writeFile(
    join(temp, 'run-config.json'),
    JSON.stringify({ config: snapshot.config, step: snapshot.step }),
  );
  await rm(dir, { recursive: true, force: true });
  const { rename } = await import('node:fs/promises');
  await rename(temp, dir);
}

async function readSnapshot(dir: string): Promise<RunSnapshot> {
  const head = await readJsonFile<{ config: RunConfig; step: number }>(
    join(dir, 'run-config.json'),
  );
  const files: RunSnapshot['files'] = {};
  const walk = async (sub: string) => {
    for (const entry of await readdir(join(dir, sub), { withFileTypes: true })) {
      const name = sub ? `${sub}/${entry.name}` : entry.name;
      if (entry.isDirectory()) await walk(name);
      else if (name !== 'run-config.json')
        files[name] = new Uint8Array(await readFile(join(dir, name)));
    }
  };
  await walk('');
  return { config: head.config, step: head.step, files };
}

async function keepStepsUpTo(path: string, step: number): Promise<void> {
  if (!existsSync(path)) return;
  const lines = (await readFile(path, 'utf8')).split('\n');
  const kept = lines.filter(
    (line, i) =>
      line.trim() !== '' && parseJsonText<{ step: number }>(line, path, i + 1).step <= step,
  );
  await writeFile(path, kept.map((line) => `${line}\n`).join(''));
}

function pick(metrics: Record<string, number>): Record<string, number> {
  const keys = [
    'step',
    'planner/reward',
    'coder/reward',
    'coder/rewards/pass_fraction/mean',
    'coder/kl',
    'debugger/reward',
    'debugger/fixed',
    'retriever/reward',
    'eval/pass@1',
    'eval/pass@1_repair',
    'eval/collaboration_gain',
    'eval/planner_gap',
    'eval/plan_vs_none',
    'step_time',
  ];
  return Object.fromEntries(
    keys.filter((k) => k in metrics).map((k) => [k, Number((metrics[k] ?? 0).toPrecision(4))]),
  );
}

/** One JSON line on stdout, past the console (whose methods watchEngineLog wraps). */
function log(event: Record<string, unknown>): void {
  process.stdout.write(`${JSON.stringify(event)}\n`);
}
