// One GRPO step of a preset's default run in a process of its own, for `npm run bench --
// memory`: prints one JSON line with the step's peak tensor bytes, the
// process's peak resident memory, and its times. A process per measurement, so each peak
// resident figure is that configuration's own (the wasm heap never shrinks).
// Usage: vite-node bench/memoryStep.ts -- --preset tiny --backend wasm [--budget MIB]
import { existsSync } from 'node:fs';
import type { FlagSpecs } from '../src/cli/flags';
import { commandLine } from '../src/cli/runCli';
import { classifyFailure, watchEngineLog } from '../src/engine/failure';
import { defaultRunConfig, TrainingSession } from '../src/engine/session';
import { PRESET_NAMES } from '../src/engine/settings';
import { BACKEND_CHOICES } from '../src/engine/types';
import { type BackendName, initBackend } from '../src/gpu/backend';
import {
  createModel,
  type LoadedCheckpoint,
  makeConfig,
  type PresetName,
  peakTensorBytes,
} from '../src/model';
import { loadCheckpointDir } from '../src/model/checkpointNode';
import { createSandbox } from '../src/sandbox/nodeSandbox';
import { CharTokenizer } from '../src/tokenizer';

const FLAGS = {
  preset: { kind: 'choice', choices: PRESET_NAMES, help: 'model size (default tiny)' },
  backend: {
    kind: 'choice',
    choices: [...BACKEND_CHOICES, 'webgpu'],
    help: 'where it runs (default wasm; webgpu: tfjs-webgpu)',
  },
  budget: { kind: 'number', help: 'micro-batch memory budget in MiB (default: the backend’s)' },
  steps: { kind: 'integer', help: 'GRPO steps to measure (default 1)' },
} satisfies FlagSpecs;
const { flags } = commandLine('memory-step', FLAGS, {
  usage: 'vite-node bench/memoryStep.ts -- --preset tiny --backend wasm [--budget MIB]',
});
const preset = (flags.preset ?? 'tiny') as PresetName;
const backendName = (flags.backend ?? 'wasm') as BackendName;
const budget = flags.budget;
const steps = flags.steps ?? 1;
const recent: string[] = [];
watchEngineLog(recent, () => {});

const backend = await initBackend(backendName);
const sandbox = await createSandbox({ size: 1 });
// The preset's default run: every GRPO setting at its default, no periodic evaluation.
const config = defaultRunConfig({
  preset,
  evalEvery: 0,
  ...(budget !== undefined ? { memoryBudgetMiB: budget } : {}),
});

async function loadRole(role: 'planner' | 'coder', seed: number): Promise<LoadedCheckpoint> {
  const dir = `public/checkpoints/${preset}/${role}`;
  if (existsSync(`${dir}/model.safetensors`)) return loadCheckpointDir(dir);
  const tokenizer = new CharTokenizer();
  return {
    model: createModel(makeConfig(preset, tokenizer.vocabSize, role), seed),
    tokenizer,
    lab: {},
  };
}

const session = await TrainingSession.create(config, {
  planner: await loadRole('planner', 11),
  coder: await loadRole('coder', 12),
  sandbox,
});
try {
  const reports: Awaited<ReturnType<TrainingSession['trainStep']>>[] = [];
  const { peakBytes } = await peakTensorBytes(async () => {
    for (let i = 0; i < steps; i++) reports.push(await session.trainStep());
  });
  const sum = (key: string) => reports.reduce((total, r) => total + (r.metrics[key] ?? 0), 0);
  print({
    ok: true,
    adapter: backend.adapter,
    budgetMiB: session.memoryBudgetMiB,
    peakTensorBytes: peakBytes,
    maxRssBytes: process.resourceUsage().maxRSS * 1024,
    stepSeconds: sum('step_time') / steps,
    updateSeconds: sum('step_time/update') / steps,
    rolloutSeconds: sum('step_time/rollout') / steps,
    coderMicroBatches: reports[0]?.metrics['coder/update/micro_batches'] ?? null,
    weights: existsSync(`public/checkpoints/${preset}/coder`) ? 'shipped' : 'fresh',
  });
} catch (error) {
  print({
    ok: false,
    adapter: backend.adapter,
    budgetMiB: session.memoryBudgetMiB,
    failure: classifyFailure(error, recent),
    maxRssBytes: process.resourceUsage().maxRSS * 1024,
  });
}
process.exit(0);

function print(line: Record<string, unknown>): void {
  process.stdout.write(`MEMORY_BENCH ${JSON.stringify(line)}\n`);
}
