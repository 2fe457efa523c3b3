// The self-check's data: what one check is (a registry entry) and what it found. Plain data
// (no tfjs, no device), so the page can show and format it (gpu/engine/gpuReport.ts).

/** The model sizes a check runs at: a generic set at engine start, the run's own at first use. */
export interface CheckSizes {
  /** Width, heads, MLP width, vocabulary, as ModelConfig names them. */
  nEmbd: number;
  nHead: number;
  nInner: number;
  vocabSize: number;
  /** Where the sizes come from, for the report ("start" or "tiny 64×4, V 617"). */
  label: string;
}

/** One comparison's verdict: |gpu − ref| ≤ rtol·|ref| + atol element by element. */
export interface Tolerance {
  atol: number;
  rtol: number;
}

export interface CheckResult {
  /** The registry entry's name, e.g. `matmul/v2_tiled` or `attention/backward`. */
  name: string;
  /** The sizes it ran at (CheckSizes.label). */
  at: string;
  ok: boolean;
  /** The output whose element strayed most, and that element's numbers. */
  worst: { output: string; index: number; gpu: number; ref: number; error: number } | null;
  /** The largest |gpu − ref| / (rtol·|ref| + atol) over every output: ≤ 1 passes. */
  ratio: number;
  tolerance: Tolerance;
  /** A validation or out-of-memory error, or an exception, instead of numbers. */
  error?: string;
  ms: number;
  /** Of `ms`, the time spent compiling its pipelines (on a software adapter, most of it). */
  compileMs?: number;
}

/** What the CLI's `start` event and the page's backend line carry. */
export interface SelfCheckSummary {
  /** Distinct kernels (entry names) checked. */
  checked: number;
  /** Checks run (an entry may run at several sizes). */
  checks: number;
  failed: string[];
  ms: number;
  /** Of `ms`, compiling the kernels' pipelines: paid once, the run reuses them. */
  compileMs: number;
  adapter: string;
}

export function summarize(results: readonly CheckResult[], adapter: string): SelfCheckSummary {
  return {
    checked: new Set(results.map((r) => r.name)).size,
    checks: results.length,
    failed: [...new Set(results.filter((r) => !r.ok).map((r) => r.name))],
    ms: Math.round(results.reduce((s, r) => s + r.ms, 0)),
    compileMs: Math.round(results.reduce((s, r) => s + (r.compileMs ?? 0), 0)),
    adapter,
  };
}

/** One failure in words: `matmul/v2_tiled at start: error 3.1e-2 against 1.0e-4 (310× the tolerance)`. */
export function describeFailure(r: CheckResult): string {
  if (r.error) return `${r.name} at ${r.at}: ${r.error}`;
  const w = r.worst;
  if (!w) return `${r.name} at ${r.at}: failed`;
  const allowed = r.tolerance.rtol * Math.abs(w.ref) + r.tolerance.atol;
  const times = Number.isFinite(r.ratio)
    ? `${r.ratio.toPrecision(3)}× the tolerance`
    : 'not finite';
  return `${r.name} at ${r.at}: ${w.output}[${w.index}] off by ${w.error.toExponential(1)} against ${allowed.toExponential(1)} allowed (${times})`;
}
