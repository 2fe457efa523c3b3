// One GRPO step of a preset's default run in a process of its own, for `npm run bench --
// memory`: prints one JSON line with the step's peak tensor bytes, the
// process's peak resident memory, and its times. A process per measurement, so each peak
// resident figure is that configuration's own (the wasm heap never shrinks).
// Usage: vite-node bench/memoryStep.ts -- --preset tiny --backend wasm [--budget MIB]
import { existsSync } from 'node:fs';
import { parseFlags } from '../src/cli/flags';
import { classifyFailure, watchEngineLog } from '../src/engine/failure';
import { defaultRunConfig, TrainingSession } from '../src/engine/session';
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

const flags = parseFlags(process.argv.slice(2).filter((arg) => arg !== '--'));
const preset = (flags.get('preset') ?? 'tiny') as PresetName;
const backendName = (flags.get('backend') ?? 'wasm') as BackendName;
const budget = flags.has('budget') ? Number(flags.get('budget')) : undefined;
const steps = Number(flags.get('steps') ?? 1);
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
