// `npm run bench -- grpo`: learning throughput of GRPO on the default preset — programs per
// second sampled, judged and learned from, tokens per second of sampling and of the update,
// and the shares of rollout / sandbox / update — for each shipped warm start (the character
// tokenizer's and the BPE one's) on every tfjs backend present, in one run, as ratios to the
// character model. Shares and ratios, not absolute times, are what to compare on these
// shared machines.
import { existsSync } from 'node:fs';
import { coderPrompt, plannerPrompt } from '../src/agents/format';
import { defaultRunConfig, TrainingSession } from '../src/engine/session';
import type { StepReport } from '../src/engine/types';
import { type BackendName, initBackend } from '../src/gpu/backend';
import type { LoadedCheckpoint } from '../src/model';
import { loadCheckpointDir } from '../src/model/checkpointNode';
import { createSandbox } from '../src/sandbox/nodeSandbox';
import type { BenchSection } from './table';

/** The warm starts compared: the character model is the reference of every ratio. */
/** Each with its tokenizer's caps: the longest reference plan/program fits (src/rl/config.ts). */
const WARM_STARTS = [
  {
    name: 'characters',
    dir: 'public/checkpoints/tiny-char',
    caps: { maxPlanTokens: 176, maxProgramTokens: 192 },
  },
  { name: 'BPE 512', dir: 'public/checkpoints/tiny', caps: {} },
];
const TIMED_STEPS = 2;
// tfjs-webgpu on a software adapter (SwiftShader) took ~350 s for one step here, tfjs cpu
// minutes: both only on request, so the section stays a few minutes on a CPU machine.
const WITH_WEBGPU = process.env.BENCH_WEBGPU === '1';
const WITH_CPU = process.env.BENCH_CPU === '1';

// The default preset and GRPO settings at the measuring point: 4 tasks × 2 plans × 4
// programs = 32 programs per step, T 0.7, no periodic evaluation.
const configFor = (caps: { maxPlanTokens?: number; maxProgramTokens?: number }) =>
  defaultRunConfig({
    evalEvery: 0,
    grpo: {
      tasksPerStep: 4,
      plansPerTask: 2,
      programsPerPlan: 4,
      temperature: 0.7,
      seed: 1,
      ...caps,
    },
  });
const config = configFor({});

interface Throughput {
  programsPerSecond: number;
  sampleTokensPerSecond: number;
  updateTokensPerSecond: number;
  secondsPerStep: number;
  shares: { rollout: number; sandbox: number; update: number };
}

/** Tokens sampled and tokens the update reads (prompt + completion), from a step's groups. */
function stepTokens(report: StepReport, coder: LoadedCheckpoint) {
  const tok = coder.tokenizer;
  let sampled = 0;
  let updated = 0;
  for (const group of report.groups) {
    const plannerPromptLength = plannerPrompt(tok, group.statement).length;
    for (const plan of group.plans) {
      sampled += plan.tokens;
      updated += plannerPromptLength + plan.tokens;
      const coderPromptLength = coderPrompt(tok, group.statement, plan.plan).length;
      for (const program of plan.programs) {
        sampled += program.tokens;
        updated += coderPromptLength + program.tokens;
      }
    }
  }
  return { sampled, updated };
}

async function measure(
  dir: string,
  caps: { maxPlanTokens?: number; maxProgramTokens?: number },
  sandbox: Awaited<ReturnType<typeof createSandbox>>,
) {
  const config = configFor(caps);
  const planner = await loadCheckpointDir(`${dir}/planner`);
  const coder = await loadCheckpointDir(`${dir}/coder`);
  const tokenizer = coder.tokenizer;
  const session = await TrainingSession.create(config, { planner, coder, sandbox });
  try {
    await session.trainStep(); // warm-up: kernel setup, heap growth
    const reports: StepReport[] = [];
    for (let i = 0; i < TIMED_STEPS; i++) reports.push(await session.trainStep());
    const sum = (key: string) => reports.reduce((s, r) => s + (r.metrics[key] ?? 0), 0);
    const total = sum('step_time');
    const tokens = reports
      .map((r) => stepTokens(r, { ...coder, tokenizer }))
      .reduce((a, b) => ({ sampled: a.sampled + b.sampled, updated: a.updated + b.updated }));
    const programs = reports.reduce(
      (s, r) =>
        s + r.groups.reduce((g, group) => g + group.plans.length * config.grpo.programsPerPlan, 0),
      0,
    );
    const result: Throughput = {
      programsPerSecond: programs / total,
      sampleTokensPerSecond: tokens.sampled / sum('step_time/rollout'),
      updateTokensPerSecond: tokens.updated / sum('step_time/update'),
      secondsPerStep: total / reports.length,
      shares: {
        rollout: sum('step_time/rollout') / total,
        sandbox: sum('step_time/sandbox') / total,
        update: sum('step_time/update') / total,
      },
    };
    return { result, vocabSize: tokenizer.vocabSize };
  } finally {
    session.dispose();
  }
}

export const grpoBench: BenchSection = async () => {
  const sandbox = await createSandbox({ size: 1 });
  const rows: (string | number)[][] = [];
  const notes: string[] = [];
  const backends: BackendName[] = ['wasm'];
  if (WITH_CPU) backends.push('cpu');
  if (WITH_WEBGPU) backends.push('webgpu');
  if (!WITH_CPU) notes.push('cpu: skipped (BENCH_CPU=1 to measure it; minutes per step)');
  if (!WITH_WEBGPU)
    notes.push('webgpu (tfjs): skipped (BENCH_WEBGPU=1; ~350 s per step on SwiftShader here)');
  try {
    for (const backend of backends) {
      let adapter: string;
      try {
        adapter = (await initBackend(backend)).adapter;
      } catch (error) {
        notes.push(`${backend}: not available (${(error as Error).message})`);
        continue;
      }
      let reference: Throughput | null = null;
      for (const start of WARM_STARTS) {
        if (!existsSync(`${start.dir}/coder/model.safetensors`)) {
          notes.push(`${start.name}: no warm start at ${start.dir}`);
          continue;
        }
        const { result, vocabSize } = await measure(start.dir, start.caps, sandbox);
        reference ??= result;
        rows.push([
          backend,
          adapter,
          `${start.name} (V ${vocabSize})`,
          result.programsPerSecond,
          result.programsPerSecond / reference.programsPerSecond,
          result.sampleTokensPerSecond,
          result.updateTokensPerSecond,
          result.secondsPerStep,
          result.shares.rollout,
          result.shares.sandbox,
          result.shares.update,
        ]);
      }
    }
  } finally {
    await sandbox.close();
  }
  const { grpo } = config;
  return {
    title: 'GRPO throughput: programs sampled, judged and learned per second',
    environment: `preset ${config.preset}, mode ${grpo.mode}, ${grpo.tasksPerStep} tasks × ${grpo.plansPerTask} plans × ${grpo.programsPerPlan} programs, T ${grpo.temperature}, β ${grpo.beta}, every other setting at its default (plan/program caps in each tokenizer's tokens: characters 176/192, BPE 64/96); ${TIMED_STEPS} timed steps after 1 warm-up; sandbox 1 worker`,
    columns: [
      'backend',
      'adapter',
      'warm start (tokenizer)',
      'programs/s',
      '× characters',
      'sample tok/s',
      'update tok/s',
      's/step',
      'rollout share',
      'sandbox share',
      'update share',
    ],
    rows,
    notes: [
      'Sample tok/s: tokens generated per second of rollout. Update tok/s: prompt + completion tokens the update reads per second of update. Shares of step_time; the rest is credit and metrics.',
      ...notes,
    ],
  };
};
