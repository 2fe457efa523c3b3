// `npm run bench -- webgpu [--json]`: the lab's own WebGPU engine (src/gpu/engine, shaders/)
// against tfjs-webgpu op by op on the same adapter and against tfjs wasm, in the same run:
// dispatches per generated token, submissions per training step, sampling and training
// tokens per second. One child process per Vulkan driver (bench/webgpuRun.ts; Dawn picks its
// driver at start): SwiftShader always where Debian's chromium is installed, plus every ICD
// file listed in WEBGPU_ICDS (colon-separated; e.g. lavapipe set up as TESTING.md describes —
// its libraries' folder goes in WEBGPU_LD_LIBRARY_PATH). `--json` prints one object per row.
// Goals (issue 15): sampling ≥ 5× and training ≥ 3× tfjs-webgpu on each adapter, at most
// 3 dispatches per layer per token + 3.
import { spawnSync } from 'node:child_process';
import { existsSync, readFileSync } from 'node:fs';
import type { BenchSection, BenchTable } from './table';
import type { WebgpuRow } from './webgpuRun';

const SWIFTSHADER = '/usr/lib/chromium/vk_swiftshader_icd.json';

function drivers(): string[] {
  const listed = (process.env.WEBGPU_ICDS ?? '').split(':').filter(Boolean);
  const all = existsSync(SWIFTSHADER) ? [SWIFTSHADER, ...listed] : listed;
  return [...new Set(all)];
}

function runOn(icd: string | null): { rows: WebgpuRow[]; kernels: string[]; failure?: string } {
  const env: Record<string, string | undefined> = {
    ...process.env,
    XDG_RUNTIME_DIR: process.env.XDG_RUNTIME_DIR ?? '/tmp',
  };
  if (icd) env.VK_ICD_FILENAMES = icd;
  if (icd && icd !== SWIFTSHADER && process.env.WEBGPU_LD_LIBRARY_PATH)
    env.LD_LIBRARY_PATH = [process.env.WEBGPU_LD_LIBRARY_PATH, env.LD_LIBRARY_PATH]
      .filter(Boolean)
      .join(':');
  const child = spawnSync('npx', ['vite-node', 'bench/webgpuRun.ts'], {
    encoding: 'utf8',
    env,
    maxBuffer: 64 * 1024 * 1024,
  });
  const { rows, kernels } = parseRows(`${child.stdout}`);
  if (child.status === 0) return { rows, kernels };
  const why = `${child.stderr}`.trim().split('\n').slice(-1)[0] ?? `exit ${child.status}`;
  return { rows, kernels, failure: `${icd ?? 'default driver'}: ${why}` };
}

/** The WEBGPU_BENCH and WEBGPU_KERNELS lines of bench/webgpuRun.ts' output. */
function parseRows(stdout: string): { rows: WebgpuRow[]; kernels: string[] } {
  const lines = stdout.split('\n');
  const rows = lines
    .filter((l) => l.startsWith('WEBGPU_BENCH '))
    .map((l) => JSON.parse(l.slice('WEBGPU_BENCH '.length)) as WebgpuRow);
  const kernels = lines
    .filter((l) => l.startsWith('WEBGPU_KERNELS '))
    .map((l) => {
      const k = JSON.parse(l.slice('WEBGPU_KERNELS '.length)) as {
        adapter: string;
        ms: Record<string, number>;
      };
      const parts = Object.entries(k.ms).map(([name, ms]) => `${name}: ${ms.toFixed(2)} ms`);
      return `Kernel versions on ${k.adapter}: ${parts.join('; ')}.`;
    });
  return { rows, kernels };
}

/**
 * Output saved from another machine (WEBGPU_ROWS, colon-separated files): bench/gpu/run.sh on a
 * machine with a real GPU writes its rows so that they join this table.
 */
function savedRuns(): { rows: WebgpuRow[]; kernels: string[]; failure?: string; from: string }[] {
  return (process.env.WEBGPU_ROWS ?? '')
    .split(':')
    .filter(Boolean)
    .map((file) =>
      existsSync(file)
        ? { ...parseRows(readFileSync(file, 'utf8')), from: file }
        : { rows: [], kernels: [], failure: `${file}: no such file`, from: file },
    );
}

const fmt = (v: number | null) => (v === null ? '—' : v);

export const webgpuBench: BenchSection = async (): Promise<BenchTable> => {
  const json = process.argv.includes('--json');
  const rows: (string | number)[][] = [];
  const notes: string[] = [];
  const icds = drivers();
  const saved = savedRuns();
  const runs = [...(icds.length > 0 ? icds : [null]).map(runOn), ...saved];
  for (const result of runs) {
    if (result.failure) notes.push(`failed: ${result.failure}`);
    notes.push(...result.kernels);
    for (const r of result.rows) {
      if (json)
        console.log(
          JSON.stringify({
            adapter: r.adapter,
            variant: r.variant,
            n_layer: r.n_layer,
            dispatches_per_token: r.dispatches_per_token,
            submissions_per_train_step: r.submissions_per_train_step,
            sample_tok_s: r.sample_tok_s,
            train_tok_s: r.train_tok_s,
          }),
        );
      const ref = result.rows.find((x) => x.variant === 'tfjs-webgpu' && x.preset === r.preset);
      const wasm = result.rows.find((x) => x.variant === 'wasm' && x.preset === r.preset);
      rows.push([
        r.variant === 'wasm' ? `${r.adapter} (CPU)` : r.adapter.replace(/ \/ .*\/ /, ' / '),
        r.variant,
        `${r.preset} (${r.n_layer} layers)`,
        fmt(r.dispatches_per_token),
        fmt(r.submissions_per_train_step),
        r.sample_tok_s,
        r.train_tok_s,
        ref
          ? `${(r.sample_tok_s / ref.sample_tok_s).toFixed(1)}× / ${(r.train_tok_s / ref.train_tok_s).toFixed(1)}×`
          : '',
        wasm
          ? `${(r.sample_tok_s / wasm.sample_tok_s).toFixed(2)}× / ${(r.train_tok_s / wasm.train_tok_s).toFixed(2)}×`
          : '',
      ]);
      if (r.note) notes.push(`${r.adapter}, ${r.variant} ${r.preset}: ${r.note}`);
    }
  }
  return {
    title: "The lab's WebGPU kernels vs tfjs-webgpu vs tfjs wasm",
    environment: `Dawn in Node; drivers: ${icds.join(', ') || 'the default'}${saved.length ? `; rows saved from ${saved.map((r) => r.from).join(', ')}` : ''}. Sampling: 32 rows × 48-token prompts, 32 new tokens (tfjs-webgpu 6), T 0.7, prefill included; training: one GRPO step (forward, loss, backward, clipped AdamW) on 8 × 96 tokens, the head at the 63 completion positions of each row as both trainers run it; vocabulary 617 (the shipped BPE); one warm-up each, then the best of ${process.env.BENCH_REPEAT ?? 3} runs (tfjs-webgpu: ${process.env.BENCH_REPEAT_TFJS_WEBGPU ?? 1}, tens of seconds a run on CPU drivers)`,
    columns: [
      'adapter',
      'variant',
      'model',
      'dispatches / token',
      'submissions / train step',
      'sample tok/s',
      'train tok/s',
      'vs tfjs-webgpu (sample / train)',
      'vs wasm (sample / train)',
    ],
    rows,
    notes: [
      'Dispatches per token: every dispatch of a sample() call (prefill included) over its decode steps; the kernels’ own decode step is one fused dispatch per layer plus the sampler. Submissions per training step include the readback of the step’s report.',
      'Ratios are within one adapter and one run; absolute figures drift on these shared machines.',
      ...notes,
    ],
  };
};
