// The examples world as a user runs it: `train grpo --task-set examples --coder-sees plan`
// evaluates at step 0 and at step 2 with the Collaboration Gain by intervention, overall and
// per suite (examples, examples-length, examples-compose); the samples carry each task's
// examples, and plan dropout's plans are marked and earn the Planner no advantage. The
// self-plan baseline runs from its own shipped warm start, intervenes on its own plan, and
// its samples keep each sequence's plan beside the program it judged.
import { spawnSync } from 'node:child_process';
import { mkdtempSync, readFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import type { SampleGroup } from '../../src/engine/types';
import { expectInterventions } from './interventions-fixtures';

const SUITE_SUFFIXES = ['', '/examples', '/examples-length', '/examples-compose'];

/**
 * Two steps of `train grpo --task-set examples` with `flags`, evaluated at steps 0 and 2: its
 * metric records (checked to carry the interventions then), config.json and sample groups.
 */
function trainTwoSteps(flags: string[]) {
  const out = join(mkdtempSync(join(tmpdir(), 'cli-examples-')), 'run');
  const args = ['scripts/cli.mjs', 'train', 'grpo', '--task-set', 'examples', ...flags];
  args.push('--steps', '2', '--seed', '1', '--eval-every', '2', '--eval-tasks', '2');
  args.push('--tasks-per-step', '1', '--out', out);
  const run = spawnSync(process.execPath, args, { encoding: 'utf8', timeout: 300_000 });
  expect(run.status, run.stderr.slice(-2000)).toBe(0);
  const lines = (file: string) => readFileSync(join(out, file), 'utf8').trim().split('\n');
  const records = lines('metrics.jsonl').map((line) => JSON.parse(line) as Record<string, number>);
  expect(records.map((r) => r.step)).toEqual([0, 1, 2]);
  for (const r of [records[0]!, records[2]!]) expectInterventions(r, SUITE_SUFFIXES);
  return {
    records,
    config: JSON.parse(readFileSync(join(out, 'config.json'), 'utf8')),
    groups: lines('samples.jsonl').map((line) => JSON.parse(line) as SampleGroup),
  };
}

describe('npm run train -- grpo --task-set examples', () => {
  it('--coder-sees plan: interventions at steps 0 and 2, examples in the samples, dropped plans marked', () => {
    const sees = [
      '--coder-sees',
      'plan',
      '--plan-dropout',
      '0.5',
      '--plans',
      '2',
      '--programs',
      '2',
    ];
    const { records, config, groups } = trainTwoSteps(sees);
    expect(records[1]?.['eval/collaboration_gain']).toBeUndefined();
    expect(config.config.grpo.coderSees).toBe('plan');
    expect(config.checkpoint).toBe('public/checkpoints/tiny-examples');
    for (const group of groups) {
      expect(group.examples?.length).toBeGreaterThanOrEqual(3);
      expect(group.statement).toContain(`solve(${JSON.stringify(group.examples?.[0]?.args[0])})`);
    }
    const plans = groups.flatMap((g) => g.plans);
    const dropped = plans.filter((p) => p.dropped);
    expect(dropped.length).toBeGreaterThan(0);
    for (const plan of dropped) expect(plan.advantage).toBe(0);
  }, 300_000);

  it('--mode self-plan: its own warm start, interventions on its own plan, the plan in the samples', () => {
    const { records, config, groups } = trainTwoSteps(['--mode', 'self-plan', '--programs', '4']);
    expect(records[1]?.['planner/reward']).toBeUndefined();
    expect(config.checkpoint).toBe('public/checkpoints/tiny-examples-self-plan');
    const programs = groups.flatMap((g) => g.plans.flatMap((p) => p.programs));
    expect(programs).toHaveLength(2 * 4);
    // The warm start writes numbered plans before its programs.
    expect(programs.filter((p) => /^1\. /.test(p.selfPlan ?? '')).length).toBeGreaterThan(0);
  }, 300_000);
});
