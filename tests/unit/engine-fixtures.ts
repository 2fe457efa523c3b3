// Shared by the engine tests: a quick supervised warm start of a small Coder on a couple of
// task families (so some GRPO samples pass and groups have signal), a fresh Planner, suites.
import { createHash } from 'node:crypto';
import { existsSync, readdirSync, readFileSync, renameSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import * as tf from '@tensorflow/tfjs-core';
import { roleExample } from '../../src/agents/format';
import {
  type CheckpointFiles,
  createModel,
  type LoadedCheckpoint,
  loadCheckpoint,
  makeConfig,
  saveCheckpoint,
} from '../../src/model';
import { readCheckpointDir, writeCheckpointDir } from '../../src/model/checkpointNode';
import { DEFAULT_SFT, runSft } from '../../src/sft';
import { generateTasks, type Task } from '../../src/tasks';
import { Rng } from '../../src/tasks/random';
import { CharTokenizer } from '../../src/tokenizer';

export const FAMILIES = ['list-order', 'list-reduce'];
/** Small enough for a CPU test, wide enough to hold statement + plan + program. */
export const SHAPE = { nEmbd: 48, nLayer: 2, nHead: 4, nCtx: 256 };

export function familyTasks(
  count: number,
  seed: number,
  split: 'train' | 'validation' = 'train',
): Task[] {
  const tasks: Task[] = [];
  for (const task of generateTasks({ tiers: ['L1'], split, count: count * 12, seed })) {
    if (FAMILIES.includes(task.family)) tasks.push(task);
    if (tasks.length === count) break;
  }
  return tasks;
}

/**
 * A Coder taught `steps` SFT steps to write the program from the statement and an empty
 * plan (what single mode asks), or from the reference plan (`withPlans`).
 */
export async function quickCoder(steps: number, seed = 3): Promise<LoadedCheckpoint> {
  const tokenizer = new CharTokenizer();
  const model = createModel(makeConfig('tiny', tokenizer.vocabSize, 'coder', SHAPE), seed);
  const tasks = familyTasks(200, seed);
  const prng = new Rng(seed);
  await runSft(
    model,
    () =>
      Array.from({ length: 16 }, () => {
        const task = tasks[prng.below(tasks.length)] as Task;
        const strategy = task.strategies[0];
        const plan = prng.next() < 0.5 ? '' : (strategy?.plan ?? '');
        return roleExample(tokenizer, 'coder', {
          statement: task.statement,
          plan,
          code: strategy?.code ?? '',
        });
      }),
    { ...DEFAULT_SFT, steps, warmupSteps: 10, padId: tokenizer.padId, logEvery: 1000 },
  );
  return { model, tokenizer, lab: {} };
}

export function freshPlanner(seed = 5): LoadedCheckpoint {
  const tokenizer = new CharTokenizer();
  return {
    model: createModel(makeConfig('tiny', tokenizer.vocabSize, 'planner', SHAPE), seed),
    tokenizer,
    lab: {},
  };
}

/** A Planner taught `steps` SFT steps to write the reference plan of the two families. */
export async function quickPlanner(steps: number, seed = 4): Promise<LoadedCheckpoint> {
  const planner = freshPlanner(seed);
  const tasks = familyTasks(200, seed);
  const prng = new Rng(seed);
  await runSft(
    planner.model,
    () =>
      Array.from({ length: 16 }, () => {
        const task = tasks[prng.below(tasks.length)] as Task;
        const strategy = task.strategies[0];
        return roleExample(planner.tokenizer, 'planner', {
          statement: task.statement,
          plan: strategy?.plan ?? '',
          code: '',
        });
      }),
    { ...DEFAULT_SFT, steps, warmupSteps: 10, padId: planner.tokenizer.padId, logEvery: 1000 },
  );
  return planner;
}

/**
 * The quick roles' checkpoint files, cached in the OS temp folder so the engine test files
 * share one SFT run per role. The folder's name carries a hash of everything that made the
 * weights (FIXTURE_SOURCES, this file, tfjs's version, the backend, the options), so a change
 * to any of them trains afresh instead of reusing stale weights.
 */
export async function cachedQuickCoder(steps: number, seed = 3): Promise<CheckpointFiles> {
  return cached('coder', steps, seed, () => quickCoder(steps, seed));
}

export async function cachedQuickPlanner(steps: number, seed = 4): Promise<CheckpointFiles> {
  return cached('planner', steps, seed, () => quickPlanner(steps, seed));
}

/** The code a quick role's weights depend on: model, training, tokenizer, prompts, tasks. */
const FIXTURE_SOURCES = [
  'src/model',
  'src/sft',
  'src/tokenizer',
  'src/agents/format.ts',
  'src/tasks',
];
const ROOT = fileURLToPath(new URL('../../', import.meta.url));

let sourceHash: string | null = null;

/** SHA-256 over the fixture sources and this file, path by path (computed once). */
function fixtureSourceHash(): string {
  if (sourceHash) return sourceHash;
  const hash = createHash('sha256');
  const files = FIXTURE_SOURCES.flatMap((source) => {
    const path = join(ROOT, source);
    if (source.endsWith('.ts')) return [source];
    return readdirSync(path, { recursive: true, encoding: 'utf8' })
      .filter((name) => name.endsWith('.ts'))
      .map((name) => join(source, name));
  });
  for (const file of [...files.sort(), 'tests/unit/engine-fixtures.ts']) {
    hash
      .update(`${file}\0`)
      .update(readFileSync(join(ROOT, file)))
      .update('\0');
  }
  sourceHash = hash.digest('hex');
  return sourceHash;
}

/** The cache key of one quick role: the code, tfjs's version, the backend and the options. */
export function fixtureKey(role: string, steps: number, seed: number): string {
  const recipe = JSON.stringify({
    role,
    steps,
    seed,
    families: FAMILIES,
    shape: SHAPE,
    tfjs: tf.version_core,
    backend: tf.getBackend(),
    sources: fixtureSourceHash(),
  });
  return createHash('sha256').update(recipe).digest('hex').slice(0, 16);
}

async function cached(
  role: string,
  steps: number,
  seed: number,
  train: () => Promise<LoadedCheckpoint>,
): Promise<CheckpointFiles> {
  const dir = join(tmpdir(), `core-code-lab-quick-${role}-${fixtureKey(role, steps, seed)}`);
  // tokenizer.json is written last: its presence means the folder is complete.
  if (existsSync(join(dir, 'tokenizer.json'))) return readCheckpointDir(dir);
  const trained = await train();
  const files = await saveCheckpoint(trained.model, trained.tokenizer);
  // Test files run two at a time: write aside, then rename, so a reader never sees half a folder.
  const partial = `${dir}.partial-${process.pid}`;
  await writeCheckpointDir(partial, files);
  try {
    renameSync(partial, dir);
  } catch {
    rmSync(partial, { recursive: true, force: true }); // another file finished the same fixture first
  }
  return files;
}

export { loadCheckpoint };
