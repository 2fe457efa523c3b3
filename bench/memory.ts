// `npm run bench -- memory`: what one GRPO step of each preset's default run holds — peak
// tensor bytes and the process's peak resident memory — per backend, and what splitting the
// update into micro-batches costs in step time, as ratios to the default budget in the same
// run. Each row is a process of its own (memoryStep.ts), so each peak is its own.
import { spawnSync } from 'node:child_process';
import { BYTES_PER_MIB, defaultMemoryBudgetBytes } from '../src/model';
import type { BenchSection } from './table';

/** cpu takes minutes per default step even at the tiny preset: on request only. */
const WITH_CPU = process.env.BENCH_CPU === '1';
/** base (~4.9M parameters) takes minutes per default step on a CPU: on request only. */
const WITH_BASE = process.env.BENCH_BASE === '1';
const BUDGETS_MIB = [128, 256, 512, 1024, 2048];

interface StepMeasure {
  ok: boolean;
  adapter: string;
  budgetMiB: number;
  peakTensorBytes?: number;
  maxRssBytes: number;
  stepSeconds?: number;
  updateSeconds?: number;
  coderMicroBatches?: number | null;
  weights?: string;
  failure?: { kind: string; message: string };
}

function measure(preset: string, backend: string, budget?: number, steps = 1): StepMeasure {
  const args = ['vite-node', 'bench/memoryStep.ts', '--', '--preset', preset];
  args.push('--backend', backend, '--steps', String(steps));
  if (budget !== undefined) args.push('--budget', String(budget));
  const child = spawnSync('npx', args, { encoding: 'utf8', maxBuffer: 64 * BYTES_PER_MIB });
  const line = `${child.stdout}`.split('\n').find((l) => l.startsWith('MEMORY_BENCH '));
  if (!line) {
    const why = `${child.stderr}`.trim().split('\n').slice(-1)[0] ?? `exit ${child.status}`;
    return {
      ok: false,
      adapter: backend,
      budgetMiB: budget ?? 0,
      maxRssBytes: 0,
      failure: { kind: 'crash', message: why },
    };
  }
  return JSON.parse(line.slice('MEMORY_BENCH '.length)) as StepMeasure;
}

const mib = (bytes: number | undefined) => (bytes === undefined ? '' : bytes / BYTES_PER_MIB);

/** One table row: what ran, its measures, and the ratio columns (empty for preset rows). */
function row(
  run: string,
  backend: string,
  m: StepMeasure,
  ratios: (string | number)[] = ['', ''],
): (string | number)[] {
  return [
    run,
    backend,
    m.adapter,
    m.budgetMiB,
    m.coderMicroBatches ?? '',
    mib(m.peakTensorBytes),
    mib(m.maxRssBytes),
    m.stepSeconds ?? (m.failure ? `failed: ${m.failure.kind}` : ''),
    ...ratios,
    m.weights ?? '',
  ];
}

export const memoryBench: BenchSection = async () => {
  const rows: (string | number)[][] = [];
  const notes: string[] = [];
  const presets = WITH_BASE ? ['tiny', 'small', 'base'] : ['tiny', 'small'];
  if (!WITH_BASE)
    notes.push('base: skipped (BENCH_BASE=1 to measure it; minutes per default step on a CPU)');
  if (!WITH_CPU) notes.push('cpu: skipped (BENCH_CPU=1; minutes per default step)');
  const backends = WITH_CPU ? ['wasm', 'cpu'] : ['wasm'];
  for (const backend of backends) {
    for (const preset of presets) {
      rows.push(row(`${preset} default`, backend, measure(preset, backend)));
    }
  }
  // Step time against the budget, tiny default on wasm: 2 steps per budget (the second
  // reuses compiled kernels and a grown heap, as training does).
  const defaultMiB = defaultMemoryBudgetBytes('wasm') / BYTES_PER_MIB;
  const sweep = BUDGETS_MIB.map((budget) => ({ budget, m: measure('tiny', 'wasm', budget, 2) }));
  const reference = sweep.find((s) => s.budget === defaultMiB)?.m;
  for (const { budget, m } of sweep) {
    const ratio = (value: number | undefined, of: number | undefined) =>
      value !== undefined && of ? value / of : '';
    rows.push(
      row(`tiny, budget ${budget} MiB`, 'wasm', m, [
        ratio(m.stepSeconds, reference?.stepSeconds),
        ratio(m.updateSeconds, reference?.updateSeconds),
      ]),
    );
  }
  return {
    title: 'Memory of one GRPO step, and what micro-batching costs',
    environment: `default run config per preset (4 tasks × 4 plans × 4 programs, every setting at its default, no evaluation); one process per row; default wasm budget ${defaultMiB} MiB`,
    columns: [
      'run',
      'backend',
      'adapter',
      'budget MiB',
      'coder micro-batches',
      'peak tensors MiB',
      'peak resident MiB',
      's/step',
      'step time × default',
      'update time × default',
      'weights',
    ],
    rows,
    notes: [
      "Peak tensors: tf.profile over the step (models and optimizer state excluded). Peak resident: the process's maxRSS (includes Node, the sandbox worker and the wasm heap, which never shrinks).",
      'Budget rows: 2 steps each, times averaged; ratios are to the default budget in this run.',
      ...notes,
    ],
  };
};
