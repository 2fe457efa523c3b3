// `npm run bench -- grpo`: GRPO steps per second of the default preset and how a step's
// time splits into rollout (sampling), sandbox (judging) and update (GRPO gradient steps),
// on every tfjs backend present. Uses the shipped warm start when it exists (so programs run
// in the sandbox), freshly initialized weights otherwise. Shares, not absolute times, are
// what to compare on these shared machines.
import { existsSync } from 'node:fs';
import { defaultRunConfig, TrainingSession } from '../src/engine/session';
import { type BackendName, initBackend } from '../src/gpu/backend';
import { createModel, type LoadedCheckpoint, makeConfig } from '../src/model';
import { loadCheckpointDir } from '../src/model/checkpointNode';
import { createSandbox } from '../src/sandbox/nodeSandbox';
import { CharTokenizer } from '../src/tokenizer';
import type { BenchSection } from './table';

const WARM_START = 'public/checkpoints/tiny';
const TIMED_STEPS = 2;
/** A backend whose warm-up step is slower than this is timed on that step alone. */
const SLOW_WARMUP_SECONDS = 10;
// tfjs-webgpu on a software adapter (SwiftShader) took ~350 s for one such step here: it is
// measured only on request, so the section stays under two minutes on a CPU machine.
const WITH_WEBGPU = process.env.BENCH_WEBGPU === '1';

// The default preset and GRPO settings, with a smaller batch so every backend fits in the
// bench's budget: 2 tasks × 2 plans × 4 programs = 16 programs per step.
const config = defaultRunConfig({
  evalEvery: 0,
  grpo: { tasksPerStep: 2, plansPerTask: 2, programsPerPlan: 4, seed: 1 },
});

async function loadRole(role: 'planner' | 'coder', seed: number): Promise<LoadedCheckpoint> {
  const dir = `${WARM_START}/${role}`;
  if (existsSync(`${dir}/model.safetensors`)) return loadCheckpointDir(dir);
  const tokenizer = new CharTokenizer();
  return {
    model: createModel(makeConfig(config.preset, tokenizer.vocabSize, role), seed),
    tokenizer,
    lab: {},
  };
}

export const grpoBench: BenchSection = async () => {
  const sandbox = await createSandbox({ size: 1 });
  const rows: (string | number)[][] = [];
  const notes: string[] = [];
  try {
    const backends: BackendName[] = WITH_WEBGPU ? ['cpu', 'wasm', 'webgpu'] : ['cpu', 'wasm'];
    if (!WITH_WEBGPU)
      notes.push(
        'webgpu: skipped (BENCH_WEBGPU=1 to measure it; ~350 s per step on SwiftShader here)',
      );
    for (const backend of backends) {
      let adapter: string;
      try {
        adapter = (await initBackend(backend)).adapter;
      } catch (error) {
        notes.push(
          `${backend}: not available (${error instanceof Error ? error.message : String(error)})`,
        );
        continue;
      }
      const session = await TrainingSession.create(config, {
        planner: await loadRole('planner', 11),
        coder: await loadRole('coder', 12),
        sandbox,
      });
      try {
        const warmup = await session.trainStep();
        const timed =
          warmup.metrics.step_time !== undefined && warmup.metrics.step_time > SLOW_WARMUP_SECONDS
            ? [warmup]
            : await timedSteps(session);
        const sum = (key: string) => timed.reduce((s, r) => s + (r.metrics[key] ?? 0), 0);
        const total = sum('step_time');
        rows.push([
          backend,
          adapter,
          timed.length / total,
          total / timed.length,
          sum('step_time/rollout') / total,
          sum('step_time/sandbox') / total,
          sum('step_time/update') / total,
        ]);
      } finally {
        session.dispose();
      }
    }
  } finally {
    await sandbox.close();
  }
  const weights = existsSync(`${WARM_START}/coder/model.safetensors`)
    ? 'shipped warm start'
    : 'fresh weights (no warm start yet)';
  return {
    title: 'GRPO step time by backend',
    environment: `preset ${config.preset} (${weights}), mode ${config.grpo.mode}, ${config.grpo.tasksPerStep} tasks × ${config.grpo.plansPerTask} plans × ${config.grpo.programsPerPlan} programs, β ${config.grpo.beta}, ${TIMED_STEPS} timed steps after 1 warm-up, sandbox 1 worker`,
    columns: [
      'backend',
      'adapter',
      'steps/s',
      's/step',
      'rollout share',
      'sandbox share',
      'update share',
    ],
    rows,
    notes: [
      'Shares of step_time; the rest is credit assignment and metrics. A slow backend (warm-up > 10 s) is timed on its warm-up step.',
      ...notes,
    ],
  };
};

async function timedSteps(session: TrainingSession) {
  const reports = [];
  for (let i = 0; i < TIMED_STEPS; i++) reports.push(await session.trainStep());
  return reports;
}
