// A base's size before its weights are read (engine/baseModel.ts): parameters from config.json,
// bytes from the shard index when there is one, and what tfjs cannot hold refused in words.
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  baseSize,
  checkBaseFits,
  describeBaseSize,
  MAX_BASE_FLOAT32_BYTES,
} from '../../src/engine/baseModel';
import { defaultRunConfig } from '../../src/engine/session';
import { CODER_PROMPT_TOKENS, PLANNER_PROMPT_TOKENS } from '../../src/engine/suggestedModels';
import { folderSource } from '../../src/model/families/folderSourceNode';
import type { CheckpointSource } from '../../src/model/families/hfCheckpoint';
import { llamaTransformerConfig } from '../../src/model/families/llamaConfig';
import { trainingBytes } from '../../src/model/memory';
import { fixtureSpec, writeHfCheckpoint } from './hf-fixtures';

let root: string;
beforeAll(() => {
  root = mkdtempSync(join(tmpdir(), 'base-model-'));
});
afterAll(() => rmSync(root, { recursive: true, force: true }));

/** A source that records what was read, so a test can say no weight file was. */
function recorded(dir: string): { source: CheckpointSource; reads: string[] } {
  const inner = folderSource(dir);
  const reads: string[] = [];
  return {
    reads,
    source: {
      label: inner.label,
      read: (file) => {
        reads.push(file);
        return inner.read(file);
      },
    },
  };
}

describe('a base model’s size', () => {
  it('counts the parameters from config.json and the bytes from the shard index, reading no weights', async () => {
    const dir = join(root, 'qwen3');
    const spec = fixtureSpec('qwen3');
    const config = writeHfCheckpoint(dir, spec, 3);
    const { source, reads } = recorded(dir);
    const size = await baseSize(source, 'qwen3');
    const index = JSON.parse(readFileSync(join(dir, 'model.safetensors.index.json'), 'utf8'));
    // The plain count: every weight config.json implies, element by element.
    const h = config.hiddenSize;
    const q = config.numHeads * config.headDim;
    const kv = config.numKvHeads * config.headDim;
    const perLayer =
      h * q + 2 * h * kv + q * h + 3 * h * config.intermediateSize + 2 * h + 2 * config.headDim;
    const head = config.tieWordEmbeddings ? 0 : config.vocabSize * h;
    expect(size.parameters).toBe(config.vocabSize * h + config.numLayers * perLayer + h + head);
    expect(size.fileBytes).toBe(index.metadata.total_size);
    expect(size.float32Bytes).toBe(size.parameters * 4);
    expect(reads.some((file) => file.endsWith('.safetensors'))).toBe(false);
    checkBaseFits(size, 'qwen3');
    expect(size.adapterBytes).toBe(0);

    // A run's two role adapters of rank 4 on every projection: each float32, with its gradient
    // and Adam's two moments.
    const run = defaultRunConfig({ loraRank: 4, base: 'qwen3' });
    const f = config.intermediateSize;
    const perLayer4 = 4 * (h + q + 2 * (h + kv) + q + h + 2 * (h + f) + f + h);
    expect((await baseSize(source, 'qwen3', run)).adapterBytes).toBe(
      2 * config.numLayers * perLayer4 * 4 * 4,
    );
    // What a step needs, stated with the size: sampling's KV cache for the larger of the two
    // stages (default run: the Coder's 8 × 4 × 2 programs), one training sequence's activations.
    const withRun = await baseSize(source, 'qwen3', run);
    const g = run.grpo;
    const kvPerToken = config.numLayers * 2 * config.numKvHeads * config.headDim * 4;
    expect(withRun.kvCacheBytes).toBe(
      kvPerToken *
        Math.max(
          g.tasksPerStep * g.plansPerTask * (PLANNER_PROMPT_TOKENS + g.maxPlanTokens),
          g.tasksPerStep *
            g.plansPerTask *
            g.programsPerPlan *
            (CODER_PROMPT_TOKENS + g.maxProgramTokens),
        ),
    );
    // The one training estimate (model/memory.ts), the head over the program's tokens.
    expect(withRun.trainingSequenceBytes).toBe(
      trainingBytes(
        llamaTransformerConfig(config),
        1,
        CODER_PROMPT_TOKENS + g.maxProgramTokens,
        g.maxProgramTokens,
      ),
    );
    expect(describeBaseSize(withRun)).toMatch(
      /a step needs about [\d.]+ MB of KV cache to sample and [\d.]+ MB of activations per training sequence on tfjs/,
    );
    expect(describeBaseSize(withRun)).toMatch(/ MB as float32 in tfjs/);
    // With the kernels on, the base lives on the device only (llamaWeights.ts).
    expect(describeBaseSize(withRun, true)).toMatch(
      /held on the GPU as stored \(tfjs makes its [\d.]+ MB of float32 only if it runs the model\)/,
    );
    expect(describeBaseSize(withRun, true)).toMatch(
      /and activations micro-batched to the memory budget on the device$/,
    );
    expect(size.kvCacheBytes).toBe(0); // no run, no step to size
    const single = defaultRunConfig({ loraRank: 4, base: 'qwen3', grpo: { mode: 'single' } });
    expect((await baseSize(source, 'qwen3', single)).adapterBytes).toBe(
      config.numLayers * perLayer4 * 4 * 4,
    );
  });

  it('refuses in words a base whose float32 weights tfjs cannot hold; sizes a Hub GPT-2 as any other', async () => {
    const dir = join(root, 'huge');
    writeHfCheckpoint(dir, fixtureSpec('qwen2'), 4);
    const json = JSON.parse(readFileSync(join(dir, 'config.json'), 'utf8'));
    writeFileSync(
      join(dir, 'config.json'),
      JSON.stringify({
        ...json,
        hidden_size: 4096,
        intermediate_size: 14336,
        num_hidden_layers: 32,
        num_attention_heads: 32,
        num_key_value_heads: 8,
        vocab_size: 128256,
      }),
    );
    const size = await baseSize(folderSource(dir), 'org/huge');
    expect(size.float32Bytes).toBeGreaterThan(MAX_BASE_FLOAT32_BYTES);
    expect(() => checkBaseFits(size, 'org/huge')).toThrow(
      /^base org\/huge cannot fit: qwen2 · [\d.]+B parameters · .* MB as float32 in tfjs, but tfjs holds at most 2048 MB/,
    );
    // The lab's own GPT-2 folder trains as itself, not as a base.
    writeFileSync(
      join(dir, 'config.json'),
      JSON.stringify({
        model_type: 'gpt2',
        n_embd: 8,
        n_layer: 1,
        n_head: 2,
        vocab_size: 300,
        preset: 'tiny',
      }),
    );
    await expect(baseSize(folderSource(dir), 'lab')).rejects.toThrow(
      /^base lab: a folder of the lab's own GPT-2; it trains as itself with --checkpoint DIR/,
    );
    writeFileSync(
      join(dir, 'config.json'),
      JSON.stringify({ model_type: 'gpt2', n_embd: 8, n_layer: 1, n_head: 2, vocab_size: 300 }),
    );
    // A Hub GPT-2 is a base like any other (issue 31): sized from its config.json.
    const gpt2 = await baseSize(folderSource(dir), 'org/gpt');
    expect(gpt2.modelType).toBe('gpt2');
    expect(gpt2.parameters).toBe(
      300 * 8 + 1024 * 8 + (4 * 8 + 8 * 24 + 24 + 8 * 8 + 8 + 8 * 32 + 32 + 32 * 8 + 8) + 2 * 8,
    );
  });
});
