// `npm run train -- grpo --agents …` as a user runs it, on the shipped warm starts: the
// Debugger's and the Retriever's metrics (TRL names prefixed by role), the evaluation with one
// repair round, the chain in samples.jsonl, and their checkpoints beside the others. The
// default topology's record has none of them.
import { spawnSync } from 'node:child_process';
import { existsSync, mkdtempSync, readFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';

function train(agents: string | null, extra: string[] = []) {
  const out = join(mkdtempSync(join(tmpdir(), 'cli-agents-')), 'run');
  const args = ['scripts/cli.mjs', 'train', 'grpo', '--steps', '1', '--backend', 'wasm'];
  if (agents) args.push('--agents', agents);
  // β > 0 so each trained agent has a frozen reference and reports its KL.
  args.push('--tasks-per-step', '2', '--tiers', 'L3:1', '--seed', '3', '--beta', '0.04');
  args.push('--out', out, ...extra);
  const run = spawnSync(process.execPath, args, { encoding: 'utf8', timeout: 300_000 });
  expect(run.status, run.stderr.slice(-2000) + run.stdout.slice(-2000)).toBe(0);
  const records = readFileSync(join(out, 'metrics.jsonl'), 'utf8')
    .trim()
    .split('\n')
    .map((line) => JSON.parse(line) as Record<string, number>);
  const groups = readFileSync(join(out, 'samples.jsonl'), 'utf8')
    .trim()
    .split('\n')
    .map((line) => JSON.parse(line));
  return { out, records, groups, stdout: run.stdout };
}

describe('npm run train -- grpo --agents', () => {
  it('planner,coder,debugger writes the Debugger’s metrics, repairs and checkpoint', () => {
    const { out, records, groups } = train('planner,coder,debugger', [
      '--eval-every',
      '1',
      '--eval-tasks',
      '2',
      '--repairs',
      '2',
      '--temperature',
      '1.5',
    ]);
    const step = records.at(-1)!;
    // L3 tasks at temperature 1.5: the step has failing programs for the Debugger.
    expect(step['debugger/programs']).toBeGreaterThan(0);
    for (const name of [
      'debugger/reward',
      'debugger/reward_std',
      'debugger/frac_reward_zero_std',
      'debugger/rewards/pass_fraction/mean',
    ]) {
      expect(step[name], name).toBeTypeOf('number');
    }
    expect(step['eval/pass@1_repair']).toBeGreaterThanOrEqual(step['eval/pass@1']!);
    expect(step['eval/repair/fixed']).toBeTypeOf('number');
    if (step['debugger/programs']! > 0) {
      for (const name of ['debugger/kl', 'debugger/entropy', 'debugger/fixed']) {
        expect(step[name], name).toBeTypeOf('number');
      }
      const repaired = groups
        .flatMap((g) =>
          g.plans.flatMap(
            (p: { programs: { repairs?: unknown[]; report?: string }[] }) => p.programs,
          ),
        )
        .filter((p: { repairs?: unknown[] }) => p.repairs);
      expect(repaired.length).toBe(step['debugger/programs']);
      expect(repaired[0].repairs).toHaveLength(2);
      expect(repaired[0].report).toMatch(/should be|no function|fails/);
    }
    expect(existsSync(join(out, 'checkpoints', 'debugger', 'model.safetensors'))).toBe(true);
    expect(existsSync(join(out, 'snapshot', 'debugger', 'model.safetensors'))).toBe(true);
  }, 300_000);

  it('retriever,planner,coder writes the Retriever’s metrics and each plan’s example', () => {
    // No evaluation: what is checked is the step's record (the Debugger's run checks evaluation).
    const { out, records, groups } = train('retriever,planner,coder', ['--eval-every', '0']);
    const step = records.at(-1)!;
    for (const name of [
      'retriever/reward',
      'retriever/reward_std',
      'retriever/frac_reward_zero_std',
      'retriever/kl',
      'retriever/entropy',
      'retriever/choice_valid',
    ]) {
      expect(step[name], name).toBeTypeOf('number');
    }
    const plan = groups[0].plans[0];
    expect(plan.retrieval.candidates).toHaveLength(4);
    expect(plan.retrieval.statement).toBeTypeOf('string');
    expect(plan.retrieval.advantage).toBeTypeOf('number');
    expect(existsSync(join(out, 'checkpoints', 'retriever', 'model.safetensors'))).toBe(true);
  }, 300_000);

  it('the default topology reports Planner and Coder only', () => {
    const { records, groups } = train(null, ['--eval-every', '0']);
    const names = Object.keys(records.at(-1)!);
    expect(names.some((n) => n.startsWith('debugger/') || n.startsWith('retriever/'))).toBe(false);
    expect(names).toContain('planner/reward');
    expect(groups[0].plans[0].retrieval).toBeUndefined();
  }, 300_000);
});
