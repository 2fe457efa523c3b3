// `npm run --silent eval -- --checkpoint DIR --suite heldout|L1|L2|L3|L4 [--samples K] [--json]`
// DIR holds planner/ and coder/ checkpoints. Loads public/tasks/suite-<name>.json, runs
// Planner → Coder, judges the programs in the QuickJS sandbox and reports pass@1 (greedy),
// pass@K over K sampled pairs, and the cost and peak memory of passing programs, per tier.
// The evaluator is the engine's (src/agents/evaluate.ts), with the default run config's
// token caps (maxPlanTokens, maxProgramTokens).
import { readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { evaluateSuites, type TierReport } from '../agents/evaluate';
import { DEFAULT_RUN_CONFIG } from '../engine/runConfig';
import { type BackendChoice, initBackend } from '../gpu/backend';
import { loadCheckpointDir } from '../model/checkpointNode';
import { KvCacheSampler } from '../rollout/kvSampler';
import { createSandbox } from '../sandbox/nodeSandbox';
import { loadSuite } from '../tasks';
import { parseFlags } from './flags';

const f = parseFlags(process.argv.slice(2));
const checkpoint = f.get('checkpoint');
const suites = (f.get('suite') ?? 'heldout').split(',');
if (!checkpoint) {
  console.error('eval: --checkpoint DIR is required (DIR holds planner/ and coder/)');
  process.exit(2);
}
const backend = await initBackend((f.get('backend') ?? 'auto') as BackendChoice);
const planner = await loadCheckpointDir(join(checkpoint, 'planner'), false);
const coder = await loadCheckpointDir(join(checkpoint, 'coder'), false);
const agents = {
  tokenizer: planner.tokenizer,
  planner: new KvCacheSampler(planner.model),
  coder: new KvCacheSampler(coder.model),
  shared: planner.model.config.role === 'shared',
};
const { maxPlanTokens, maxProgramTokens } = DEFAULT_RUN_CONFIG.grpo;
const sandbox = await createSandbox();
const out: Record<string, unknown> = { checkpoint, backend, suites: {} };
try {
  for (const suite of suites) {
    const file = join('public/tasks', `suite-${suite}.json`);
    const tasks = loadSuite(await readFile(file, 'utf8')).tasks;
    const limit = f.has('limit') ? Number(f.get('limit')) : tasks.length;
    const start = performance.now();
    const result = await evaluateSuites(
      agents,
      { [suite]: tasks.slice(0, limit) },
      {
        maxPlanTokens,
        maxProgramTokens,
        referencePlans: true,
        coderAlone: true,
        samples: Number(f.get('samples') ?? 1),
        temperature: Number(f.get('temperature') ?? 0.8),
        seed: Number(f.get('seed') ?? 1),
      },
      sandbox,
    );
    const report = result.suites[suite]!;
    const seconds = (performance.now() - start) / 1000;
    (out.suites as Record<string, unknown>)[suite] = {
      ...report,
      seconds,
      examples: f.has('show') ? report.examples : report.examples.slice(0, 3),
    };
    if (!f.has('json')) printSuite(suite, report.overall, report.tiers, seconds);
  }
} finally {
  await sandbox.close();
}
if (f.has('json')) console.log(JSON.stringify(out, null, 2));
process.exit(0);

function printSuite(
  suite: string,
  overall: TierReport,
  tiers: Record<string, TierReport>,
  seconds: number,
): void {
  console.log(`suite ${suite} (${seconds.toFixed(0)} s, ${backend.backend})`);
  const rows = [...Object.entries(tiers), ['all', overall] as [string, TierReport]];
  for (const [tier, r] of rows) {
    const parts = Object.entries(r).map(
      ([k, v]) => `${k}=${typeof v === 'number' && !Number.isInteger(v) ? v.toFixed(3) : v}`,
    );
    console.log(`  ${tier.padEnd(4)} ${parts.join('  ')}`);
  }
}
