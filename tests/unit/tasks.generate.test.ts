// Generated tasks: every reference passes its tests in Node, families and tiers are as
// documented, generation is deterministic, held-out compositions never reach train.
import { execFileSync } from 'node:child_process';
import { mkdtempSync, readdirSync, readFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import {
  buildSuite,
  createTaskSampler,
  FAMILIES,
  generateTask,
  generateTasks,
  heldOutPairs,
  loadSuite,
  STEPS,
  SUITES,
  serializeSuite,
  splitOf,
  stepPairs,
  TIERS,
  toJsonl,
} from '../../src/tasks';
import { checkInNode } from '../../src/tasks/nodeCheck';

const NODE_TASKS_PER_TIER = 5000;
// The first held-out pairs and their count before L5 existed (suite-heldout.json's draw).
const PINNED_HELDOUT_HEAD = ['list.above+list.drop', 'list.above+list.min', 'list.above+list.odd'];
const PINNED_HELDOUT_SIZE = 42;

describe('families', () => {
  it('has at least 30 families, every tier covered, names unique', () => {
    expect(FAMILIES.length).toBeGreaterThanOrEqual(30);
    expect(new Set(FAMILIES.map((f) => f.name)).size).toBe(FAMILIES.length);
    for (const tier of TIERS)
      expect(FAMILIES.filter((f) => f.tier === tier).length).toBeGreaterThanOrEqual(8);
  });

  it('L5 holds only shapes no L1–L4 family has, and leaves the held-out pairs where they were', () => {
    const shape = (f: (typeof FAMILIES)[number]) => JSON.stringify(f.slots ?? []);
    const known = new Set(FAMILIES.filter((f) => f.tier !== 'L5').map(shape));
    const novel = FAMILIES.filter((f) => f.tier === 'L5');
    for (const family of novel) expect(known.has(shape(family)), family.name).toBe(false);
    // Every L5 step is one the warm start's tiers use, so L5 asks for new compositions only.
    const knownSteps = new Set(
      FAMILIES.filter((f) => f.tier !== 'L5').flatMap((f) => (f.slots ?? []).flat()),
    );
    for (const family of novel)
      for (const step of (family.slots ?? []).flat()) expect(knownSteps.has(step), step).toBe(true);
    // The held-out draw is the one the shipped warm start was trained around (pinned).
    expect([...heldOutPairs()].sort().slice(0, 3)).toEqual(PINNED_HELDOUT_HEAD);
    expect(heldOutPairs().size).toBe(PINNED_HELDOUT_SIZE);
  });

  it('chains step types: each slot takes what the previous slot gives', () => {
    const byKind = new Map(STEPS.map((s) => [s.kind, s]));
    for (const family of FAMILIES) {
      const slots = family.slots ?? [];
      for (let i = 1; i < slots.length; i++) {
        for (const before of slots[i - 1] ?? []) {
          for (const after of slots[i] ?? []) {
            expect(`${family.name}: ${byKind.get(before)?.to}`).toBe(
              `${family.name}: ${byKind.get(after)?.from}`,
            );
          }
        }
      }
    }
  });

  it('phrases each family several ways', () => {
    for (const family of FAMILIES) {
      const statements = new Set<string>();
      for (let seed = 0; statements.size < 2 && seed < 200; seed++) {
        const task = generateTask({ mix: { [family.tier]: 1 }, seed }, 0);
        if (task.family === family.name) statements.add(task.statement);
      }
      expect(statements.size, family.name).toBeGreaterThanOrEqual(2);
    }
  });
});

describe.each(TIERS)('tier %s', (tier) => {
  const tasks = generateTasks({ tiers: [tier], count: NODE_TASKS_PER_TIER, seed: 11 });

  it(`every reference strategy passes all tests in Node (${NODE_TASKS_PER_TIER} tasks)`, () => {
    const failures: string[] = [];
    for (const task of tasks) {
      for (const strategy of task.strategies) {
        const result = checkInNode(strategy.code, task.entryPoint, task.tests);
        if (!result.passed)
          failures.push(`${task.id} ${strategy.name}: ${result.failures[0]?.message}`);
      }
    }
    expect(failures.slice(0, 5)).toEqual([]);
  });

  it('draws from every family of the tier', () => {
    const families = new Set(tasks.map((t) => t.family));
    expect([...families].sort()).toEqual(
      FAMILIES.filter((f) => f.tier === tier)
        .map((f) => f.name)
        .sort(),
    );
  });

  it('keeps sequences short and plans as long as the tier says', () => {
    for (const task of tasks) {
      const words = task.statement.split(' ').length;
      expect(words, task.statement).toBeLessThanOrEqual(32);
      for (const s of task.strategies) {
        const steps = s.plan.split('\n').length;
        if (tier === 'L1') expect(steps).toBe(1);
        if (tier === 'L2') expect(steps).toBe(2);
        if (tier === 'L3') expect(steps === 3 || steps === 4).toBe(true);
        expect(steps).toBeLessThanOrEqual(4);
        expect(s.code.length).toBeLessThanOrEqual(200);
      }
    }
  });

  it('includes edge cases: an empty input and a one-element input where the input is a list', () => {
    for (const task of tasks.filter((t) => Array.isArray(t.tests[0]?.args[0]))) {
      const lengths = task.tests.map((t) => (t.args[0] as unknown[]).length);
      expect(lengths).toContain(0);
      expect(lengths).toContain(1);
    }
  });
});

describe('determinism', () => {
  it('same seed, same tasks; different seed, different tasks', () => {
    const a = toJsonl(generateTasks({ count: 300, seed: 5 }));
    expect(toJsonl(generateTasks({ count: 300, seed: 5 }))).toBe(a);
    expect(toJsonl(generateTasks({ count: 300, seed: 6 }))).not.toBe(a);
  });

  it('a sampler streams the same tasks as one big request', () => {
    const sampler = createTaskSampler({ mix: { L1: 1, L2: 2, L4: 1 }, seed: 9 });
    const streamed = [...sampler.next(7), ...sampler.next(13)];
    expect(sampler.position).toBe(20);
    expect(streamed).toEqual(generateTasks({ mix: { L1: 1, L2: 2, L4: 1 }, seed: 9, count: 20 }));
  });

  it('never calls Math.random in src/tasks', () => {
    const root = new URL('../../src/tasks/', import.meta.url);
    const files = readdirSync(root, { recursive: true })
      .map(String)
      .filter((f) => f.endsWith('.ts'));
    for (const file of files)
      expect(readFileSync(new URL(file, root), 'utf8'), file).not.toMatch(/Math\.random\(/);
  });

  it('the CLI export writes byte-identical files for the same seed and different ones otherwise', () => {
    const dir = mkdtempSync(join(tmpdir(), 'tasks-export-'));
    const run = (seed: number, name: string) => {
      const out = join(dir, name);
      const args = [
        '--tier',
        'L1,L2,L3,L4',
        '--split',
        'train',
        '--count',
        '40',
        '--seed',
        String(seed),
        '--out',
        out,
      ];
      execFileSync(process.execPath, ['scripts/cli.mjs', 'tasks', 'export', ...args], {
        stdio: 'pipe',
      });
      return readFileSync(out, 'utf8');
    };
    const first = run(3, 'a.jsonl');
    expect(run(3, 'b.jsonl')).toBe(first);
    expect(run(4, 'c.jsonl')).not.toBe(first);
    const lines = first.trim().split('\n');
    expect(lines).toHaveLength(40);
    const record = JSON.parse(lines[0] ?? '{}');
    expect(Object.keys(record)).toEqual(
      expect.arrayContaining([
        'task_id',
        'prompt',
        'entry_point',
        'tests',
        'reference_solutions',
        'tier',
        'family',
      ]),
    );
    expect(record.prompt[0].role).toBe('user');
  }, 60_000);
});

describe('splits', () => {
  const train = generateTasks({ tiers: ['L2', 'L3'], split: 'train', count: 6000, seed: 21 });
  const validation = generateTasks({
    tiers: ['L2', 'L3'],
    split: 'validation',
    count: 1000,
    seed: 22,
  });
  const heldout = generateTasks({ tiers: ['L2', 'L3'], split: 'heldout', count: 1000, seed: 23 });

  it('held-out tasks combine a pair of steps never seen together in train or validation', () => {
    const seenPairs = new Set([...train, ...validation].flatMap((t) => stepPairs(t.steps)));
    const seenSignatures = new Set(train.map((t) => t.steps.join('>')));
    for (const task of heldout) {
      expect(
        stepPairs(task.steps).some((pair) => !seenPairs.has(pair)),
        task.id,
      ).toBe(true);
      expect(seenSignatures.has(task.steps.join('>'))).toBe(false);
    }
    expect(heldOutPairs().size).toBeGreaterThan(20);
  });

  it('every task lands in the split it was drawn for; validation statements never occur in train', () => {
    for (const t of train) expect(splitOf(t)).toBe('train');
    for (const t of validation) expect(splitOf(t)).toBe('validation');
    for (const t of heldout) expect(splitOf(t)).toBe('heldout');
    const trainStatements = new Set(train.map((t) => t.statement));
    const composed = validation.filter((t) => t.steps.every((s) => s.includes('.')));
    expect(composed.filter((t) => trainStatements.has(t.statement))).toEqual([]);
  });

  it('refuses held-out requests for tiers without compositions', () => {
    expect(() => generateTasks({ tiers: ['L4'], split: 'heldout', count: 1, seed: 1 })).toThrow(
      /held-out/,
    );
  });
});

describe('suites', () => {
  it.each(SUITES.map((s) => [s.file, s] as const))(
    '%s regenerates byte-identical and loads',
    (file, spec) => {
      const committed = readFileSync(
        new URL(`../../public/tasks/${file}`, import.meta.url),
        'utf8',
      );
      expect(serializeSuite(buildSuite(spec))).toBe(committed);
      const suite = loadSuite(committed);
      expect(suite.tasks).toHaveLength(50);
      for (const task of suite.tasks) {
        expect(spec.tiers).toContain(task.tier);
        for (const s of task.strategies)
          expect(checkInNode(s.code, task.entryPoint, task.tests).passed).toBe(true);
      }
    },
  );
});
