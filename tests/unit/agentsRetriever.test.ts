// The Retriever: BM25 against hand-computed scores, the library's leak test (train split
// only: no validation, evaluation-suite or held-out task), its credit against hand-computed
// group rewards, and a bandit-sized check with a real tiny transformer, real sampling and
// the real GRPO trainer: a Retriever learns to pick the candidate whose downstream reward
// is known.
import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import * as tf from '@tensorflow/tfjs-core';
import { beforeAll, describe, expect, it } from 'vitest';
import {
  buildLibrary,
  ExampleLibrary,
  type LibraryEntry,
  libraryEntry,
  parseChoice,
  retrieve,
  retrieverCredit,
  retrieverExample,
  retrieverSequences,
} from '../../src/agents/retriever';
import { BM25_B, BM25_K1, Bm25Index } from '../../src/agents/retriever/bm25';
import { sharedSteps } from '../../src/agents/warmStartAgents';
import { initBackend } from '../../src/gpu/backend';
import { createModel, makeConfig } from '../../src/model';
import { ADVANTAGE_STD_EPSILON } from '../../src/rl/advantages';
import { grpoLossOptions, resolveGrpoConfig } from '../../src/rl/config';
import type { RewardParts } from '../../src/rl/rewards';
import { RoleTrainer } from '../../src/rl/trainer';
import { KvCacheSampler } from '../../src/rollout/kvSampler';
import { BucketedBatches } from '../../src/sft/batches';
import { DEFAULT_SFT, runSft } from '../../src/sft/trainer';
import { generateTasks, heldOutPairs, loadSuite, splitOf, stepPairs } from '../../src/tasks';
import { CharTokenizer } from '../../src/tokenizer';

beforeAll(async () => {
  await initBackend('wasm');
});

describe('BM25', () => {
  it('scores as the formula says (hand-computed)', () => {
    const index = new Bm25Index(['a b', 'a c c', 'd']);
    // "c": df 1 of N 3 → idf = ln(1 + 2.5 / 1.5); doc 1 has f = 2, length 3, mean length 2.
    const idf = Math.log(1 + 2.5 / 1.5);
    const norm = BM25_K1 * (1 - BM25_B + (BM25_B * 3) / 2);
    expect(index.score('c', 1)).toBeCloseTo((idf * 2 * (BM25_K1 + 1)) / (2 + norm), 12);
    expect(index.score('c', 0)).toBe(0);
    // "a c": doc 1 has both words, doc 0 only "a".
    expect(index.search('a c', 3)).toEqual([1, 0, 2]);
    expect(index.search('a c', 3, (doc) => doc === 1)).toEqual([0, 2]);
  });
});

describe('the example library', () => {
  const library = buildLibrary();
  it('holds train-split tasks only: no validation, evaluation-suite or held-out task', () => {
    expect(library.entries.length).toBeGreaterThan(300);
    const held = heldOutPairs();
    const ids = new Set<string>();
    for (const entry of library.entries) {
      expect(entry.id).toMatch(/:train:/);
      expect(stepPairs(entry.steps).some((pair) => held.has(pair))).toBe(false);
      ids.add(entry.id);
    }
    // Every fixed suite file (the evaluation sets) shares no statement with the library.
    const statements = new Set(library.entries.map((e) => e.statement));
    const suites = readdirSync('public/tasks').filter((f) => f.startsWith('suite-'));
    expect(suites.length).toBeGreaterThanOrEqual(5);
    for (const file of suites) {
      for (const task of loadSuite(readFileSync(join('public/tasks', file), 'utf8')).tasks) {
        expect(statements.has(task.statement), `${file}: ${task.id}`).toBe(false);
      }
    }
    // The split function itself agrees on every entry (hand-written families hash inputs too,
    // so regenerate the tasks and check them whole).
    const again = generateTasks({
      tiers: ['L1', 'L2', 'L3', 'L4'],
      split: 'train',
      count: 50,
      seed: 20261214,
    });
    for (const task of again) expect(splitOf(task)).toBe('train');
  });

  it('refuses a task of another split, and never proposes a task’s own statement', () => {
    const [validation] = generateTasks({ tiers: ['L2'], split: 'validation', count: 1, seed: 3 });
    const [heldout] = generateTasks({ tiers: ['L2'], split: 'heldout', count: 1, seed: 3 });
    expect(() => libraryEntry(validation!)).toThrow(/train-split tasks only: .* is validation/);
    expect(() => libraryEntry(heldout!)).toThrow(/is heldout/);
    // A hand-written family's statements recur in validation: never in the library.
    const [factorial] = generateTasks({ tiers: ['L1'], split: 'train', count: 40, seed: 3 }).filter(
      (t) => t.family === 'number-factorial',
    );
    expect(() => libraryEntry(factorial!)).toThrow(/compositions of steps only/);
    const own = library.entries[7]!;
    const candidates = library.candidates(own.statement, 4);
    expect(candidates).toHaveLength(4);
    expect(candidates.map((c) => c.statement)).not.toContain(own.statement);
  });

  it('warm-start answers: the candidate sharing most steps', () => {
    expect(sharedSteps(['filter', 'map', 'sum'], ['map', 'sum'])).toBe(2);
    expect(sharedSteps(['map', 'map'], ['map'])).toBe(1);
    expect(parseChoice('3', 4)).toBe(2);
    expect(parseChoice(' 1', 4)).toBe(0);
    expect(parseChoice('5', 4)).toBeNull();
    expect(parseChoice('x', 4)).toBeNull();
    expect(parseChoice('', 4)).toBeNull();
  });
});

describe('the Retriever credit (hand-computed)', () => {
  it('is the mean Coder reward of the plan each choice fed, minus the format penalty', () => {
    const plan = (total: number): RewardParts => ({
      passFraction: total,
      efficiency: 0,
      formatPenalty: 0,
      total,
    });
    // Two tasks, N = R = 2 choices each. Plan rewards (means over each plan's M programs):
    // 1, 0.5 | 0, 1.25; the second choice of task 0 named no candidate (penalty 0.5).
    const credit = retrieverCredit(
      [plan(1), plan(0.5), plan(0), plan(1.25)],
      [0, null, 2, 1],
      2,
      0.5,
      'group',
    );
    expect(credit.rewards.map((r) => r.total)).toEqual([1, 0, 0, 1.25]);
    expect(credit.rewards[1]!.formatPenalty).toBe(0.5);
    const a = 0.5 / (1 / Math.SQRT2 + ADVANTAGE_STD_EPSILON);
    const b = 0.625 / (1.25 / Math.SQRT2 + ADVANTAGE_STD_EPSILON);
    const [a0, a1, a2, a3] = credit.advantages.advantages;
    expect(a0).toBeCloseTo(a, 10);
    expect(a1).toBeCloseTo(-a, 10);
    expect(a2).toBeCloseTo(-b, 10);
    expect(a3).toBeCloseTo(b, 10);
    expect(credit.advantages.rewardMean).toBeCloseTo(2.25 / 4, 12);
    expect(() => retrieverCredit([plan(1)], [0, 1], 2, 0.5, 'group')).toThrow(
      /2 choices for 1 plans/,
    );
  });
});

describe('a Retriever learns the candidate with the known downstream reward', () => {
  it('GRPO on a real tiny transformer moves its choices to the rewarded candidate', async () => {
    const tok = new CharTokenizer();
    const entry = (id: string, statement: string): LibraryEntry => ({
      id,
      statement,
      plan: '1. x',
      steps: [id],
    });
    const library = new ExampleLibrary([
      entry('a', 'keep the even numbers'),
      entry('b', 'sort the numbers'),
      entry('c', 'double the numbers'),
      entry('d', 'add up the numbers'),
    ]);
    const task = { statement: 'triple the numbers' } as never;
    const model = createModel(
      makeConfig('tiny', tok.vocabSize, 'planner', { nEmbd: 32, nLayer: 1, nHead: 2, nCtx: 160 }),
      5,
    );
    const candidates = library.candidates('triple the numbers', 4);
    const target = candidates.findIndex((c) => c.id === 'c');
    // The warm start teaches the answer format only: every candidate equally often.
    const examples = [0, 1, 2, 3].map((i) =>
      retrieverExample(tok, 'triple the numbers', candidates, i),
    );
    const batches = new BucketedBatches(
      (n) => Array.from({ length: n }, (_, i) => examples[i % 4]!),
      16,
      1,
      2,
    );
    await runSft(
      model,
      () => batches.next(),
      { ...DEFAULT_SFT, steps: 60, padId: tok.padId, logEvery: 60 },
      () => {},
    );

    const N = 8;
    const share = async (seed: number) => {
      const step = await retrieve(
        [task, task],
        library,
        { sampler: new KvCacheSampler(model), tokenizer: tok },
        {
          plansPerTask: N,
          candidates: 4,
          policy: 'learned',
          temperature: 1,
          topK: 0,
          seed,
        },
      );
      return { step, share: step.choices.filter((c) => c === target).length / step.choices.length };
    };
    const before = (await share(1000)).share;
    expect(before).toBeGreaterThan(0.05);
    expect(before).toBeLessThan(0.6);
    const config = resolveGrpoConfig({
      beta: 0,
      learningRate: 3e-3,
      agents: 'retriever,planner,coder',
    });
    const trainer = new RoleTrainer(model, {
      learningRate: config.learningRate,
      temperature: 1,
      numIterations: 1,
      maxGradNorm: 1,
      loss: grpoLossOptions(config, 'retriever'),
      padId: tok.padId,
    });
    const started = performance.now();
    for (let s = 0; s < 30; s++) {
      const { step } = await share(s);
      // The downstream reward each choice leads to: 1 for the rewarded candidate, else 0.
      const planRewards = step.examples.map((e): RewardParts => {
        const total = (e as LibraryEntry | null)?.id === 'c' ? 1 : 0;
        return { passFraction: total, efficiency: 0, formatPenalty: 0, total };
      });
      const credit = retrieverCredit(planRewards, step.choices, N, 0.5, 'group');
      await trainer.update(retrieverSequences(step, credit));
    }
    const after = (await share(2000)).share;
    console.log(
      `retriever bandit: target share ${before} → ${after} in 30 steps, ${((performance.now() - started) / 1000).toFixed(1)} s`,
    );
    expect(after).toBeGreaterThan(0.8);
    expect(after).toBeGreaterThan(before + 0.3);
    trainer.dispose();
    tf.disposeVariables();
  }, 240_000);
});
