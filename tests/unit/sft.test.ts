import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import * as tf from '@tensorflow/tfjs-core';
import { beforeAll, describe, expect, it } from 'vitest';
import { type RoleExample, roleExample } from '../../src/agents/format';
import { initBackend } from '../../src/gpu/backend';
import { createModel, makeConfig, readValues } from '../../src/model';
import { BucketedBatches, makeBatch, runSft, type SftProgress } from '../../src/sft';
import { CharTokenizer } from '../../src/tokenizer';

const tok = new CharTokenizer();
// A small corpus of our own: statement → plan → code for a few list transforms.
const corpus = [
  {
    statement: 'Keep the even numbers.',
    plan: '1. keep the even numbers',
    code: 'a.filter(x=>x%2===0)',
  },
  { statement: 'Square each number.', plan: '1. square each one', code: 'a.map(x=>x*x)' },
  { statement: 'Add them up.', plan: '1. add them up', code: 'a.reduce((s,x)=>s+x,0)' },
  { statement: 'Reverse the list.', plan: '1. reverse it', code: 'a.slice().reverse()' },
];

describe('supervised warm start', () => {
  beforeAll(async () => {
    await initBackend('wasm'); // ~10× faster than cpu for the training test
  });

  it('masks the loss to answer tokens only', () => {
    const e = roleExample(tok, 'coder', corpus[0]!);
    const batch = makeBatch([e, roleExample(tok, 'planner', corpus[1]!)], tok.padId);
    const mask = batch.mask.arraySync();
    const ids = batch.ids.arraySync();
    expect(mask[0]!.reduce((a, b) => a + b, 0)).toBe(e.answer.length);
    // The first target of the answer is the token after the prompt's last (<|code|>).
    expect(ids[0]![e.prompt.length - 1]).toBe(tok.special('<|code|>'));
    expect(mask[0]![e.prompt.length - 2]).toBe(0);
    expect(mask[0]![e.prompt.length - 1]).toBe(1);
    expect(ids[0]![e.prompt.length + e.answer.length - 1]).toBe(tok.eosId);
    expect(batch.targetTokens).toBe(
      e.answer.length + roleExample(tok, 'planner', corpus[1]!).answer.length,
    );
  });

  it('drives the loss down on a small corpus, with progress events', async () => {
    const tensorsBefore = tf.memory().numTensors;
    const model = createModel(
      makeConfig('tiny', tok.vocabSize, 'coder', { nEmbd: 32, nLayer: 1, nHead: 2, nCtx: 64 }),
      1,
    );
    let i = 0;
    const source = (n: number): RoleExample[] =>
      Array.from({ length: n }, () =>
        roleExample(tok, i % 2 ? 'planner' : 'coder', corpus[i++ % corpus.length]!),
      );
    const batches = new BucketedBatches(source, 8, 1, 4, 64);
    const events: SftProgress[] = [];
    const result = await runSft(
      model,
      () => batches.next(),
      { steps: 80, peakLr: 1e-2, minLr: 1e-3, warmupSteps: 5, logEvery: 10, padId: tok.padId },
      (p) => events.push(p),
    );
    expect(result.steps).toBe(80);
    expect(events).toHaveLength(8);
    for (const e of events) {
      expect(e.tokensPerSec).toBeGreaterThan(0);
      expect(e.etaSec).toBeGreaterThanOrEqual(0);
    }
    expect(events[0]!.loss).toBeGreaterThan(2.5);
    expect(events.at(-1)!.loss).toBeLessThan(0.6 * events[0]!.loss);
    // The model and Adam's moments stay; nothing grows per step (80 steps).
    expect(tf.memory().numTensors - tensorsBefore).toBeLessThan(200);
  });

  it('same seed and steps, same backend → bit-identical weights', async () => {
    const train = async () => {
      const model = createModel(
        makeConfig('tiny', tok.vocabSize, 'coder', { nEmbd: 16, nLayer: 1, nHead: 2, nCtx: 64 }),
        4,
      );
      let i = 0;
      const source = (n: number): RoleExample[] =>
        Array.from({ length: n }, () => roleExample(tok, 'coder', corpus[i++ % corpus.length]!));
      const batches = new BucketedBatches(source, 4, 9, 2, 64);
      await runSft(model, () => batches.next(), {
        steps: 5,
        peakLr: 1e-2,
        minLr: 1e-3,
        warmupSteps: 2,
        logEvery: 5,
        padId: tok.padId,
      });
      return readValues(model.params);
    };
    const [a, b] = [await train(), await train()];
    for (const [name, data] of a)
      expect(Buffer.from(b.get(name)!.buffer).equals(Buffer.from(data.buffer)), name).toBe(true);
  });

  it('engine code imports nothing from Node (it also runs in a Worker)', () => {
    for (const dir of ['src/sft', 'src/rollout', 'src/tokenizer']) {
      for (const file of readdirSync(dir)) {
        const text = readFileSync(join(dir, file), 'utf8');
        expect(text, `${dir}/${file}`).not.toMatch(/from 'node:|require\(/);
      }
    }
  });
});
