// The GPU report as plain data, and its text: what a user on a GPU this project never saw can
// paste into a bug report (the page's "Copy GPU report", `npm run --silent bench -- gpu-report`).
// Plain data and pure functions only: the page formats it on its main thread (engine/api.ts).
import type { CheckResult, SelfCheckSummary } from './selfCheck/types';

/** The Worker's activity while the kernels are checked (the page's backend line shows it). */
export const SELF_CHECK_ACTIVITY = 'checking the GPU kernels';

export interface GpuReport {
  adapter: string;
  software: boolean;
  info: Record<string, string | boolean>;
  features: string[];
  /** Every limit the adapter offers. */
  limits: Record<string, number>;
  /** The limits the engine requested at device creation, as the device granted them. */
  requested: Record<string, number>;
  selfCheck: SelfCheckSummary;
  results: CheckResult[];
  matmul: { pick: string; allowed: string[]; timingsMs: Record<string, number> };
  /** navigator.userAgent in a browser, the Node version in Node. */
  host: string;
}

const num = (x: number) =>
  Number.isFinite(x) ? (Math.abs(x) >= 100 ? x.toFixed(0) : x.toPrecision(3)) : String(x);

/** Markdown: a summary, the tuner, every check (largest error against tolerance), limits, features. */
export function formatGpuReport(r: GpuReport): string {
  const s = r.selfCheck;
  const lines = [
    '## GPU report',
    '',
    `- adapter: ${r.adapter}${r.software ? ' (software)' : ''}`,
    `- host: ${r.host}`,
    `- self-check: ${s.checked} kernels, ${s.checks} checks, ${s.failed.length ? `failed: ${s.failed.join(', ')}` : 'all passed'} (${s.ms} ms, ${s.compileMs ?? 0} ms of it compiling pipelines the run then reuses)`,
    `- matmul: runs ${r.matmul.pick}; allowed ${r.matmul.allowed.join(', ') || 'none'}; timings ${Object.entries(
      r.matmul.timingsMs,
    )
      .map(([v, ms]) => `${v} ${num(ms)} ms`)
      .join(', ')}`,
    '',
    '| check | sizes | result | largest error / tolerance | worst element | ms | compiling, ms |',
    '|---|---|---|---|---|---|---|',
    ...r.results.map((c) => {
      const w = c.worst;
      const where = c.error
        ? c.error.replaceAll('|', '/')
        : w
          ? `${w.output}[${w.index}]: ${num(w.gpu)} vs ${num(w.ref)}`
          : '';
      return `| ${c.name} | ${c.at} | ${c.ok ? 'ok' : 'FAILED'} | ${num(c.ratio)} | ${where} | ${num(c.ms)} | ${num(c.compileMs ?? 0)} |`;
    }),
    '',
    `- info: ${JSON.stringify(r.info)}`,
    `- requested limits: ${JSON.stringify(r.requested)}`,
    `- adapter limits: ${JSON.stringify(r.limits)}`,
    `- features: ${r.features.join(', ') || 'none'}`,
  ];
  return lines.join('\n');
}
