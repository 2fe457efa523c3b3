// The headless trainer as a user runs it: a wall-clock budget (--minutes) ends after the step
// in progress and still writes the final evaluation; a run with periodic evaluation evaluates
// at step 0 first (the warm start's level, on the same quick-eval set).
import { spawnSync } from 'node:child_process';
import { existsSync, mkdtempSync, readFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { expectInterventions } from './interventions-fixtures';

describe('npm run train -- grpo', () => {
  it('--minutes stops after the step in progress, with step-0 and final evaluations', () => {
    const out = join(mkdtempSync(join(tmpdir(), 'cli-train-')), 'run');
    const args = ['scripts/cli.mjs', 'train', 'grpo', '--minutes', '0.001'];
    args.push('--tasks-per-step', '1', '--plans', '2', '--programs', '2');
    args.push('--eval-every', '1', '--eval-tasks', '1', '--seed', '4', '--out', out);
    const run = spawnSync(process.execPath, args, { encoding: 'utf8', timeout: 300_000 });
    expect(run.status, run.stderr.slice(-2000)).toBe(0);
    const lines = readFileSync(join(out, 'metrics.jsonl'), 'utf8').trim().split('\n');
    const records = lines.map((line) => JSON.parse(line) as Record<string, number>);
    // Step 0 (evaluation only), then exactly the one step that was in progress at the deadline.
    expect(records.map((r) => r.step)).toEqual([0, 1]);
    expect(records[0]?.['eval/pass@1']).toBeGreaterThanOrEqual(0);
    // Every evaluation carries the Collaboration Gain by intervention, overall and per suite.
    for (const r of records) expectInterventions(r, ['', '/L1', '/heldout']);
    expect(records[0]?.['coder/reward']).toBeUndefined();
    expect(records[1]?.['coder/reward']).toBeDefined();
    const evaluation = JSON.parse(readFileSync(join(out, 'eval.json'), 'utf8'));
    expect(evaluation.step).toBe(1);
    expect(Number.isFinite(evaluation.metrics['eval/collaboration_gain'])).toBe(true);
    expect(existsSync(join(out, 'snapshot', 'run.json'))).toBe(true);
  }, 300_000);

  it('--backend kernels: the same seed twice gives the same samples and curves', () => {
    const root = mkdtempSync(join(tmpdir(), 'cli-kernels-'));
    const runOnce = (name: string) => {
      const out = join(root, name);
      const args = ['scripts/cli.mjs', 'train', 'grpo', '--steps', '2'];
      args.push('--tasks-per-step', '2', '--plans', '2', '--programs', '2', '--eval-every', '0');
      args.push('--backend', 'kernels', '--seed', '5', '--out', out);
      const run = spawnSync(process.execPath, args, { encoding: 'utf8', timeout: 300_000 });
      expect(run.status, run.stderr.slice(-2000)).toBe(0);
      const config = JSON.parse(readFileSync(join(out, 'config.json'), 'utf8'));
      expect(config.backend.kernels).toBe(true); // sampled and updated on the lab's kernels
      // Every metric but the clocks.
      const curves = readFileSync(join(out, 'metrics.jsonl'), 'utf8')
        .trim()
        .split('\n')
        .map((line) =>
          Object.entries(JSON.parse(line) as Record<string, number>).filter(
            ([k]) => !/time|per_second|tokens_per/.test(k),
          ),
        );
      return { curves, samples: readFileSync(join(out, 'samples.jsonl'), 'utf8') };
    };
    const first = runOnce('a');
    const second = runOnce('b');
    expect(first.curves.length).toBe(2);
    expect(second.curves).toEqual(first.curves);
    expect(second.samples).toBe(first.samples);
  }, 600_000);
});
