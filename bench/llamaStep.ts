// `npm run bench -- llama-step`: one GRPO step on the lab's kernels against the same step on tfjs
// wasm, for the lab's tiny GPT-2 on its defaults and with LoRA r 8 (its adapters updated on the
// kernels' one model), and for a random Llama-family base (the tests'
// random Qwen2, tests/unit/hf-fixtures.ts' chatFixtureSpec) with LoRA rank 4, on the procedural
// tasks and on MBXP — issue 31's table, so a change to either engine shows its ratio. Each run is
// the CLI as a user runs it (`train grpo --steps 2 --seed 1 --eval-every 0`, its own process);
// the table reads step 2 (step 1 also compiles pipelines). LLAMA_STEP_QUICK=1 caps the base's
// runs to one task, 2 plans × 2 programs and 16 / 24 tokens (random weights never stop, so the
// defaults run every sample to its cap: minutes a step on a CPU driver). Then the peak resident
// memory of `model logits` at Qwen2.5-Coder-0.5B's shape (random BF16 weights, 1 GB on disk), on
// the kernels and on tfjs cpu, each in its own process, and the LoRA forward + backward ÷ forward
// over 64 tokens at that shape, in this process (~3 minutes; LLAMA_STEP_05B=0 skips both), and the
// sampling counts of llamaSamplingCounts.ts (prefilled against distinct prompt tokens, dispatches
// per sampled token).
import { spawn, spawnSync } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { SHADERS } from '../src/gpu/engine/ops';
import { GpuRuntime } from '../src/gpu/engine/runtime';
import { getKernelDevice } from '../src/gpu/kernels/device';
import { chatFixtureSpec, qwen05bSpec, writeHfCheckpoint } from '../tests/unit/hf-fixtures';
import { randomLlama } from '../tests/unit/llama-device-fixtures';
import { loraPass, QWEN05B_SHAPE } from './llamaLora';
import { samplingCountNotes } from './llamaSamplingCounts';
import type { BenchSection, BenchTable } from './table';

interface StepTimes {
  step: number;
  rollout: number;
  update: number;
}

/** Step 2's seconds from a run's metrics.jsonl. */
function secondStep(out: string): StepTimes {
  const lines = readFileSync(join(out, 'metrics.jsonl'), 'utf8').trim().split('\n');
  const record = JSON.parse(lines.at(-1) as string) as Record<string, number>;
  return {
    step: record.step_time ?? Number.NaN,
    rollout: record['step_time/rollout'] ?? Number.NaN,
    update: record['step_time/update'] ?? Number.NaN,
  };
}

function trainOnce(args: string[], out: string): StepTimes {
  const run = spawnSync(
    process.execPath,
    ['scripts/cli.mjs', 'train', 'grpo', '--steps', '2', '--seed', '1', '--eval-every', '0'].concat(
      args,
      ['--out', out],
    ),
    { encoding: 'utf8', timeout: 3_600_000 },
  );
  if (run.status !== 0)
    throw new Error(`train ${args.join(' ')} failed: ${run.stderr.trim().split('\n').at(-1)}`);
  return secondStep(out);
}

/** A CLI run's peak resident memory in GiB (VmHWM, polled while it runs). */
function peakResidentGiB(args: string[]): Promise<number> {
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, ['scripts/cli.mjs', ...args], { stdio: 'ignore' });
    let peakKb = 0;
    const poll = setInterval(() => {
      try {
        const kb = /VmHWM:\s+(\d+) kB/.exec(readFileSync(`/proc/${child.pid}/status`, 'utf8'))?.[1];
        if (kb) peakKb = Math.max(peakKb, Number(kb));
      } catch {} // gone between polls
    }, 50);
    child.on('error', reject);
    child.on('close', (code) => {
      clearInterval(poll);
      code === 0
        ? resolve(peakKb / 2 ** 20)
        : reject(new Error(`model ${args.join(' ')}: exit ${code}`));
    });
  });
}

/** Issue 31's memory figure: `model logits` at the 0.5B shape, kernels and tfjs cpu. */
async function logitsMemoryNote(root: string): Promise<string> {
  const dir = join(root, 'qwen2.5-coder-0.5b');
  writeHfCheckpoint(dir, qwen05bSpec(), 1);
  spawnSync(process.execPath, ['scripts/cli.mjs', 'model', '--help']); // the bundle, built apart
  const logits = ['model', 'logits', '--checkpoint', dir, '--text', 'the fun'];
  const kernels = await peakResidentGiB([...logits, '--backend', 'kernels']);
  const cpu = await peakResidentGiB(logits);
  rmSync(dir, { recursive: true, force: true });
  return `Qwen2.5-Coder-0.5B's shape (random BF16 weights): \`model logits\` of 3 tokens peaks at ${kernels.toFixed(2)} GiB resident on the kernels (weights 16-bit on the device; issue 31's target ≤ 1.6 GB) and ${cpu.toFixed(2)} GiB on tfjs cpu (float32 weights), each process alone.`;
}

/** Issue 31's LoRA figure: forward + backward ÷ forward over the same 1 × 64 tokens, 0.5B shape. */
async function loraRatioNote(): Promise<string> {
  const opened = await getKernelDevice();
  if (!opened.ok) return `The 0.5B LoRA ratio: not measured (no WebGPU adapter: ${opened.why}).`;
  const rt = new GpuRuntime(opened.gpu.device);
  await rt.load([...SHADERS]);
  try {
    const T = 64;
    const weights = randomLlama(QWEN05B_SHAPE, 'BF16', 3, 0.05);
    const { policy, batch, dlogp } = loraPass(rt, QWEN05B_SHAPE, weights, 1, T);
    await policy.logProbs(batch); // pipelines compiled
    let start = performance.now();
    await policy.logProbs(batch);
    const forward = (performance.now() - start) / 1000;
    start = performance.now();
    await policy.backwardOnDevice(batch, dlogp);
    const both = (performance.now() - start) / 1000;
    policy.free();
    return `Qwen2.5-Coder-0.5B's shape (random BF16 weights), LoRA rank 8 on every target, 1 × ${T} tokens on the kernels: forward + backward ${both.toFixed(1)} s against ${forward.toFixed(1)} s of forward, ${(both / forward).toFixed(2)}× (issue 31's target ≤ 3×).`;
  } finally {
    rt.destroy();
  }
}

export const llamaStepBench: BenchSection = async (): Promise<BenchTable> => {
  const quick = process.env.LLAMA_STEP_QUICK === '1';
  const root = mkdtempSync(join(tmpdir(), 'llama-step-'));
  try {
    const base = join(root, 'qwen2');
    writeHfCheckpoint(base, chatFixtureSpec(), 23);
    const caps = quick
      ? ['--tasks-per-step', '1', '--plans', '2', '--programs', '2']
      : ([] as string[]);
    const baseCaps = quick ? [...caps, '--plan-tokens', '16', '--program-tokens', '24'] : caps;
    const runs: { label: string; args: string[] }[] = [
      {
        label: quick ? "lab's tiny GPT-2, 1 task, 2 × 2" : "lab's tiny GPT-2, defaults",
        args: caps,
      },
      {
        // The same model with LoRA: its adapters update on the kernels' one model.
        label: quick ? 'the same with LoRA r 8' : "lab's tiny GPT-2, LoRA r 8",
        args: [...caps, '--lora-rank', '8'],
      },
      {
        label: 'random Qwen2 (2 layers, hidden 32), LoRA r 4, procedural',
        args: ['--base', base, '--lora-rank', '4', ...baseCaps],
      },
      {
        label: 'the same on MBXP',
        args: ['--base', base, '--lora-rank', '4', '--task-set', 'mbxp', ...baseCaps],
      },
    ];
    const rows: (string | number)[][] = [];
    runs.forEach(({ label, args }, i) => {
      const kernels = trainOnce([...args, '--backend', 'kernels'], join(root, `k${i}`));
      const wasm = trainOnce([...args, '--backend', 'wasm'], join(root, `w${i}`));
      rows.push([
        label,
        `${kernels.step.toFixed(2)} / ${wasm.step.toFixed(2)}`,
        `${kernels.rollout.toFixed(2)} / ${wasm.rollout.toFixed(2)}`,
        `${kernels.update.toFixed(2)} / ${wasm.update.toFixed(2)}`,
        `${(kernels.step / wasm.step).toFixed(1)}×`,
      ]);
    });
    return {
      title: 'One GRPO step: the kernels against tfjs wasm (issue 31)',
      environment: `step 2 of \`train grpo --steps 2 --seed 1 --eval-every 0\`${quick ? ' with LLAMA_STEP_QUICK caps' : ''}; kernels on this machine's WebGPU adapter (SwiftShader where there is no GPU), wasm on one thread`,
      columns: ['run', 'step s (kernels / wasm)', 'rollout s', 'update s', 'kernels ÷ wasm'],
      rows,
      notes: [
        ...(await samplingCountNotes(base)),
        ...(process.env.LLAMA_STEP_05B === '0'
          ? []
          : [await logitsMemoryNote(root), await loraRatioNote()]),
      ],
    };
  } finally {
    rmSync(root, { recursive: true, force: true });
  }
};
