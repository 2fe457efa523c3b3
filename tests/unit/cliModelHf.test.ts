// `npm run --silent model` on a Llama-family checkpoint, as a user runs it: `logits --adapter`
// prints {ids, logits} equal to the numpy reference's, `sample --chat` a continuation of the
// rendered chat template, and an unknown family one line naming the file, exit status 1.
import { spawnSync } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { fixtureSpec, writeHfCheckpoint, writeLoraAdapter } from './hf-fixtures';
import { referenceLogits } from './hf-reference';

let root: string;
const model = (...args: string[]) =>
  spawnSync('npm', ['run', '--silent', 'model', '--', ...args], {
    encoding: 'utf8',
    timeout: 120_000,
  });

beforeAll(() => {
  root = mkdtempSync(join(tmpdir(), 'cli-hf-'));
  const config = writeHfCheckpoint(join(root, 'llama'), fixtureSpec('llama'), 41);
  writeLoraAdapter(join(root, 'lora'), config, { r: 2, alpha: 4 }, 42);
});
afterAll(() => rmSync(root, { recursive: true, force: true }));

describe('npm run model on a Llama-family checkpoint', () => {
  it('logits --adapter prints the reference logits (cpu and kernels); sample --chat continues the chat template', () => {
    // The same adapter on the tfjs path and on the lab's kernels (SwiftShader here).
    for (const backend of ['cpu', 'kernels']) {
      const run = model(
        'logits',
        '--checkpoint',
        join(root, 'llama'),
        '--adapter',
        join(root, 'lora'),
        '--backend',
        backend,
        '--text',
        'the rest is fun',
      );
      expect(run.status, run.stderr).toBe(0);
      const out = JSON.parse(run.stdout) as { ids: number[]; logits: number[] };
      const ref = referenceLogits(join(root, 'llama'), out.ids, join(root, 'lora'));
      const scale = Math.max(...ref.map(Math.abs));
      const error = Math.max(...out.logits.map((v, i) => Math.abs(v - ref[i]!))) / scale;
      expect(error, backend).toBeLessThan(2e-3);
    }

    const sample = model(
      'sample',
      '--checkpoint',
      join(root, 'llama'),
      '--chat',
      '--text',
      'hi',
      '--max',
      '4',
      '--temperature',
      '1',
      '--seed',
      '3',
    );
    expect(sample.status, sample.stderr).toBe(0);
    const s = JSON.parse(sample.stdout) as { prompt: string; ids: number[] };
    expect(s.prompt).toBe(
      '<|im_start|>system\nYou are a helpful assistant.<|im_end|>\n<|im_start|>user\nhi<|im_end|>\n<|im_start|>assistant\n',
    );
    expect(s.ids.length).toBeGreaterThan(0);
  }, 360_000);

  it('an unknown family is one line naming config.json, exit status 1', () => {
    const dir = join(root, 'mamba');
    writeHfCheckpoint(dir, fixtureSpec('llama'), 43);
    writeFileSync(join(dir, 'config.json'), JSON.stringify({ model_type: 'mamba' }));
    const run = model('logits', '--checkpoint', dir, '--text', 'x');
    expect(run.status).toBe(1);
    expect(run.stderr.trim()).toMatch(
      /^model: .*mamba: config\.json: model_type "mamba" is not a family the lab runs \(known: gpt2, llama, qwen2, qwen3\)$/,
    );
  }, 120_000);
});
