// `npm run --silent eval -- --checkpoint DIR --suite heldout|L1|L2|L3|L4 [--samples K] [--self-plan] [--json]`
// DIR holds planner/ and coder/ checkpoints (or coder/ alone: one model, single or self-plan).
// Loads public/tasks/suite-<name>.json (or a FILE.json in that format), runs
// Planner → Coder, judges the programs in the QuickJS sandbox and reports pass@1 (greedy),
// pass@K over K sampled pairs and pass@1 of the first that passes the statement's examples,
// and the cost and peak memory of passing programs, per tier.
// The evaluator is the engine's (src/agents/evaluate.ts), with the default run config's
// token caps (maxPlanTokens, maxProgramTokens).
import { existsSync } from 'node:fs';
import { join } from 'node:path';
import { evaluateSuites, type TierReport } from '../agents/evaluate';
import { DEFAULT_RUN_CONFIG } from '../engine/runConfig';
import { BACKEND_CHOICES, type BackendChoice } from '../engine/types';
import { initBackend } from '../gpu/backend';
import { loadCheckpointDir } from '../model/checkpointNode';
import { KvCacheSampler } from '../rollout/kvSampler';
import { createSandbox } from '../sandbox/nodeSandbox';
import { SUITE_NAMES } from '../tasks';
import type { FlagSpecs } from './flags';
import { commandLine, exitWhenWritten, UsageError } from './runCli';
import { readSuiteFile } from './suiteFiles';

const FLAGS = {
  checkpoint: {
    kind: 'string',
    help: 'a folder with planner/ and coder/, or coder/ alone: one model (required)',
  },
  'self-plan': {
    kind: 'boolean',
    help: 'with coder/ alone: the model writes its own plan first (a self-plan warm start)',
  },
  suite: {
    kind: 'string',
    help: `comma-separated: ${SUITE_NAMES.join(', ')} or FILE.json (default heldout)`,
  },
  backend: {
    kind: 'choice',
    choices: BACKEND_CHOICES,
    help: 'where the models run (default auto)',
  },
  samples: { kind: 'integer', help: 'K sampled pairs per task for pass@K (default 1)' },
  temperature: { kind: 'number', help: 'sampling temperature of the K samples (default 0.8)' },
  seed: { kind: 'integer', help: 'seed of the sampling (default 1)' },
  limit: { kind: 'integer', help: 'only the first N tasks of each suite' },
  show: { kind: 'boolean', help: 'with --json: every example, not the first 3' },
  json: { kind: 'boolean', help: 'print one JSON report instead of tables' },
} satisfies FlagSpecs;
const { flags: f } = commandLine('eval', FLAGS, {
  usage: 'npm run --silent eval -- --checkpoint DIR --suite heldout|L1|…|FILE.json [flags]',
});
const checkpoint = f.checkpoint;
const suites = (f.suite ?? 'heldout').split(',');
if (!checkpoint)
  throw new UsageError('--checkpoint DIR is required (DIR holds planner/ and coder/, or coder/)');
// Every suite is read before any model: a bad suite costs no model load.
const suiteTasks = new Map<string, Awaited<ReturnType<typeof readSuiteFile>>['tasks']>();
for (const suite of suites) {
  const file = suite.endsWith('.json') ? suite : join('public/tasks', `suite-${suite}.json`);
  suiteTasks.set(suite, (await readSuiteFile(file)).tasks);
}
const backend = await initBackend((f.backend ?? 'auto') as BackendChoice);
// No planner/: one model (single, or self-plan with --self-plan), as the experiments' arms.
const plannerDir = join(checkpoint, 'planner');
const planner = existsSync(plannerDir) ? await loadCheckpointDir(plannerDir, false) : null;
if (planner && f['self-plan'])
  throw new UsageError(`--self-plan: ${checkpoint} holds planner/, a pair, not one model`);
const coder = await loadCheckpointDir(join(checkpoint, 'coder'), false);
const agents = {
  tokenizer: (planner ?? coder).tokenizer,
  planner: planner ? new KvCacheSampler(planner.model) : null,
  coder: new KvCacheSampler(coder.model),
  shared: planner?.model.config.role === 'shared',
  selfPlan: f['self-plan'] === true,
};
const { maxPlanTokens, maxProgramTokens } = DEFAULT_RUN_CONFIG.grpo;
const sandbox = await createSandbox();
const out: Record<string, unknown> = { checkpoint, backend, suites: {} };
try {
  for (const suite of suites) {
    const tasks = suiteTasks.get(suite)!;
    const limit = f.limit ?? tasks.length;
    const start = performance.now();
    const result = await evaluateSuites(
      agents,
      { [suite]: tasks.slice(0, limit) },
      {
        maxPlanTokens,
        maxProgramTokens,
        referencePlans: true,
        interventions: true,
        samples: f.samples ?? 1,
        temperature: f.temperature ?? 0.8,
        seed: f.seed ?? 1,
      },
      sandbox,
    );
    const report = result.suites[suite]!;
    const seconds = (performance.now() - start) / 1000;
    (out.suites as Record<string, unknown>)[suite] = {
      ...report,
      seconds,
      examples: f.show ? report.examples : report.examples.slice(0, 3),
    };
    if (!f.json) printSuite(suite, report.overall, report.tiers, seconds);
  }
} finally {
  await sandbox.close();
}
if (f.json) console.log(JSON.stringify(out, null, 2));
await exitWhenWritten(0);

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
