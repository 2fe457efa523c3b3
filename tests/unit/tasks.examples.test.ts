// The examples world (src/tasks/examples/): every shipped task and every exported task is
// singled out by its examples among all chains of the space of its length or shorter (the
// space enumerated by fits.ts' counting), its references pass its tests, and the splits keep
// their promises (lengths, family pairs); the training stream keeps every step to the family
// mix, which is the generator's own shares.
import { execFileSync } from 'node:child_process';
import { mkdtempSync, readFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { defaultRunConfig } from '../../src/engine/session';
import { TaskStream } from '../../src/engine/taskStream';
import { loadSuite, serializeSuite } from '../../src/tasks';
import { countFittingChains, type ExamplePair } from '../../src/tasks/examples/fits';
import { generateExamplesTask, generateExamplesTasks } from '../../src/tasks/examples/generate';
import { FamilySchedule, TRAIN_FAMILY_MIX } from '../../src/tasks/examples/mix';
import {
  familyPairs,
  HELD_OUT_FAMILY_PAIRS,
  INSTANCES,
  LENGTH_SPLIT_LENGTH,
  type StepFamily,
} from '../../src/tasks/examples/space';
import { buildExamplesSuite, EXAMPLES_SUITES } from '../../src/tasks/examples/suites';
import { checkInNode } from '../../src/tasks/nodeCheck';
import type { Task } from '../../src/tasks/types';

const pairsOf = (task: Task): ExamplePair[] =>
  (task.examples ?? []).map((e) => ({
    input: e.args[0] as number[],
    output: e.expected as number[] | number,
  }));

/** Every chain of the space up to `length`, written out (the brute-force check of fits.ts). */
function bruteForceCount(pairs: ExamplePair[], length: number): number {
  const lists = INSTANCES.filter((i) => i.step.to === 'nums');
  const target = JSON.stringify(pairs.map((p) => p.output));
  let count = 0;
  const walk = (values: unknown[], depth: number) => {
    for (const inst of INSTANCES) {
      const next = values.map((v) => inst.step.apply(v, inst.params));
      if (JSON.stringify(next) === target) count++;
      if (depth + 1 < length && lists.includes(inst)) walk(next, depth + 1);
    }
  };
  walk(
    pairs.map((p) => p.input),
    0,
  );
  return count;
}

function expectSingledOut(task: Task): void {
  const pairs = pairsOf(task);
  expect(pairs.length, task.id).toBeGreaterThanOrEqual(3);
  expect(pairs.length, task.id).toBeLessThanOrEqual(5);
  const fit = countFittingChains(pairs, task.steps.length);
  expect(fit.count, `${task.id}: ${fit.chains.map((c) => c.map((i) => i.name)).join(' | ')}`).toBe(
    1,
  );
  expect(fit.chains[0]?.map((i) => i.step.kind)).toEqual(task.steps);
  // The examples are the first tests; hidden tests follow.
  expect(task.tests.slice(0, pairs.length)).toEqual(task.examples);
  expect(task.tests.length).toBeGreaterThan(pairs.length);
  expect(task.statement).not.toMatch(/keep|sort|add|square|sum|count|reverse/);
  for (const s of task.strategies) {
    expect(checkInNode(s.code, task.entryPoint, task.tests).passed, task.id).toBe(true);
  }
}

describe('examples world', () => {
  it('the counting matches writing every chain out, on chains up to two steps', () => {
    for (const task of generateExamplesTasks({ split: 'train', seed: 11 }, 8)) {
      const pairs = pairsOf(task);
      for (const length of [1, 2]) {
        expect(countFittingChains(pairs, length).count).toBe(bruteForceCount(pairs, length));
      }
    }
  });

  it('every shipped suite task is singled out by its examples, and the splits hold', () => {
    for (const spec of EXAMPLES_SUITES) {
      const suite = loadSuite(readFileSync(join('public', spec.file), 'utf8'));
      expect(suite.tasks).toHaveLength(50);
      for (const task of suite.tasks) {
        expectSingledOut(task);
        const chain = task.steps;
        const families = task.family.replace(/^examples-/, '').split('-') as StepFamily[];
        const held = familyPairs(families.map((family) => ({ family }))).some((p) =>
          HELD_OUT_FAMILY_PAIRS.includes(p),
        );
        if (spec.split === 'length') expect(chain).toHaveLength(LENGTH_SPLIT_LENGTH);
        else expect(chain.length).toBeLessThanOrEqual(2);
        expect(held, task.id).toBe(spec.split === 'compose');
      }
    }
  }, 30_000);

  it('the shipped examples and examples-compose suites are what the generator makes (examples-length: tasks suites --check --task-set examples, 20 s)', () => {
    for (const spec of EXAMPLES_SUITES.filter((s) => s.split !== 'length')) {
      expect(serializeSuite(buildExamplesSuite(spec)), spec.file).toBe(
        readFileSync(join('public', spec.file), 'utf8'),
      );
    }
  });

  it('tasks export --task-set examples writes 50 singled-out train tasks with tests, plan and program', () => {
    const out = join(mkdtempSync(join(tmpdir(), 'examples-export-')), 'train.jsonl');
    execFileSync(
      process.execPath,
      [
        'scripts/cli.mjs',
        'tasks',
        'export',
        '--task-set',
        'examples',
        '--split',
        'train',
        '--count',
        '50',
        '--seed',
        '3',
        '--out',
        out,
      ],
      { stdio: 'pipe' },
    );
    const records = readFileSync(out, 'utf8')
      .trim()
      .split('\n')
      .map((line) => JSON.parse(line));
    expect(records).toHaveLength(50);
    const tasks = generateExamplesTasks({ split: 'train', seed: 3 }, 50);
    records.forEach((record, i) => {
      const task = tasks[i]!;
      expect(record.task_id).toBe(task.id);
      expect(record.examples).toEqual(task.examples);
      expect(record.reference_solutions[0].plan).toMatch(/^1\. /);
      expect(record.reference_solutions[0].code).toMatch(/^function solve\(a\)/);
      expect(record.tests.length).toBeGreaterThan(record.examples.length);
      expect(task.steps.length).toBeLessThanOrEqual(2);
      expectSingledOut(task);
    });
  }, 60_000);
});

describe('the examples world’s training stream, by its family mix', () => {
  const shares = (mix: Readonly<Record<string, number>>) => {
    const total = Object.values(mix).reduce((a, b) => a + b, 0);
    return new Map(Object.entries(mix).map(([f, w]) => [f, w / total]));
  };

  it('the schedule keeps every prefix within one task of the mix, and resumes', () => {
    const mix = { a: 5, b: 3, c: 1, d: 7 };
    const share = shares(mix);
    const schedule = new FamilySchedule(mix);
    const seen = Array.from({ length: 400 }, () => schedule.next());
    const counts = new Map<string, number>();
    seen.forEach(({ family, index }, n) => {
      expect(index).toBe(counts.get(family) ?? 0);
      counts.set(family, index + 1);
      for (const [f, s] of share)
        expect(Math.abs((counts.get(f) ?? 0) - (n + 1) * s)).toBeLessThan(1);
    });
    const resumed = new FamilySchedule(mix, 137);
    expect(Array.from({ length: 20 }, () => resumed.next())).toEqual(seen.slice(137, 157));
    expect(() => new FamilySchedule({ a: 0.5 })).toThrow(/integer/);
  });

  it('the mix is the unrestricted generator’s own shares (a fresh sample of 400 tasks)', () => {
    const share = shares(TRAIN_FAMILY_MIX);
    const n = 400;
    const counts = new Map<string, number>();
    for (const task of generateExamplesTasks({ split: 'train', seed: 9 }, n)) {
      const family = task.family.replace(/^examples-/, '');
      counts.set(family, (counts.get(family) ?? 0) + 1);
    }
    for (const family of counts.keys()) expect(share.has(family)).toBe(true);
    for (const [family, s] of share) {
      const se = Math.sqrt((s * (1 - s)) / n);
      expect(Math.abs((counts.get(family) ?? 0) / n - s)).toBeLessThan(4 * se + 1 / n);
    }
  });

  it('each step holds the mix, each family from its own seeded stream, and a run resumes', () => {
    const config = defaultRunConfig({ taskSet: 'examples', grpo: { seed: 5 } });
    const perStep = config.grpo.tasksPerStep;
    const share = shares(TRAIN_FAMILY_MIX);
    const stream = new TaskStream(config);
    const steps = Array.from({ length: 12 }, () => stream.next(perStep));
    const drawn = steps.flat();
    const schedule = new FamilySchedule(TRAIN_FAMILY_MIX);
    for (const task of drawn) {
      const { family, index } = schedule.next();
      expect(task.family).toBe(`examples-${family}`);
      expect(task.id).toBe(generateExamplesTask({ split: 'train', seed: 5, family }, index).id);
    }
    for (const step of steps) {
      for (const [family, s] of share) {
        const inStep = step.filter((t) => t.family === `examples-${family}`).length;
        expect(Math.abs(inStep - s * perStep)).toBeLessThan(2);
      }
    }
    const resumed = new TaskStream(config, 3 * perStep + 2).next(perStep + 5);
    expect(resumed.map((t) => t.id)).toEqual(
      drawn.slice(3 * perStep + 2, 4 * perStep + 7).map((t) => t.id),
    );
    // A family filter keeps the mix's share among the families it names.
    const only = defaultRunConfig({
      taskSet: 'examples',
      taskFamilies: ['examples-reduce', 'examples-map-reduce'],
    });
    const filtered = new TaskStream(only).next(20);
    expect(new Set(filtered.map((t) => t.family))).toEqual(
      new Set(['examples-reduce', 'examples-map-reduce']),
    );
  });
});
