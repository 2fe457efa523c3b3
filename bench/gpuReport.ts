// `npm run --silent bench -- gpu-report`: the lab's kernels started on this machine's WebGPU
// adapter (software ones too), their self-check and the matmul tuner, as a table of every check
// (largest error against its tolerance) and the GPU report's markdown and JSON — what a user on
// a GPU this project never saw can paste into a bug report.
import { checkKernelsForBase, initBackend } from '../src/gpu/backend';
import { formatGpuReport } from '../src/gpu/engine/gpuReportFormat';
import type { BenchSection } from './table';

export const gpuReportBench: BenchSection = async () => {
  // Every config's kernels too (a run checks those of its config when its base first reaches
  // the kernels): a report covers every kernel the engine may run.
  const backend = await checkKernelsForBase(await initBackend('kernels'), null);
  const report = backend.gpu;
  if (!report) throw new Error(`no self-check ran: ${backend.reason}`);
  return {
    title: 'GPU report: the kernels’ self-check on this adapter',
    environment: `${report.adapter}; ${report.host}; kernels ${backend.kernels ? 'on' : 'off'} (${backend.reason})`,
    columns: ['check', 'sizes', 'result', 'error / tolerance', 'ms', 'compiling, ms'],
    rows: report.results.map((r) => [
      r.name,
      r.at,
      r.ok ? 'ok' : 'FAILED',
      r.ratio,
      r.ms,
      r.compileMs ?? 0,
    ]),
    notes: [formatGpuReport(report), `\`\`\`json\n${JSON.stringify(report, null, 2)}\n\`\`\``],
  };
};
