// The GGUF export against an independent engine: llama.cpp (@wllama/wllama's wasm, in headless
// Chromium, CPU) loads each exported file and continues a fixed prompt greedily; the lab's
// tfjs forward (cpu backend) does the same from the checkpoint. They must agree token for token
// for 32 tokens (where they part, only at a step whose top two log-probs are within 1e-3), and
// the first token's log-probs within 1e-3. Models: the three random Llama-family fixtures
// (Qwen2 BF16 with biases and a tied head; Llama F16, untied, GQA 4:1 — its q/k rows permuted;
// Qwen3 F32 with q/k norms and head_dim ≠ hidden/heads), the Llama one with a PEFT adapter
// merged in, and the lab's tiny GPT-2, plain and with a GPT-2 LoRA merged in. Files are written
// in f32 (llama.cpp's CPU matmul rounds activations to the weights' type when that is 16-bit).

import { mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import * as tf from '@tensorflow/tfjs-core'; // first: its ops must load before register_all_gradients (backend.ts)
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { exportGguf } from '../../src/cli/modelGguf';
import { initBackend } from '../../src/gpu/backend';
import { forward } from '../../src/model';
import { loadCheckpointDir } from '../../src/model/checkpointNode';
import { gptTransformerConfig } from '../../src/model/config';
import { folderSource } from '../../src/model/families/folderSourceNode';
import { disposeHubModel, hubLastLogits } from '../../src/model/families/hubModel';
import { loadHubModel } from '../../src/model/families/load';
import { loraFromValues, loraModules } from '../../src/model/lora';
import { adapterFiles } from '../../src/model/loraFiles';
import { KvCacheSampler } from '../../src/rollout';
import { Rng } from '../../src/tasks/random';
import { gpt2LastLogProbs } from './gguf-gpt2-reference';
import { readGguf } from './gguf-reader';
import { type FixtureName, fixtureSpec, writeHfCheckpoint, writeLoraAdapter } from './hf-fixtures';
import {
  type LlamaCpp,
  type LlamaCppRun,
  startLlamaCpp,
  writeRenderableLlamaGguf,
} from './llamaCpp-harness';

const TINY = join(__dirname, '../../public/checkpoints/tiny/coder');
const STEPS = 32;
const TOP = 10;
const TOLERANCE = 1e-3;
/** GPT-2 against llama.cpp: its half-precision GELU table alone moves log-probs by ~2–3e-3. */
const GPT2_GELU_TOLERANCE = 5e-3;
/** Byte-level BPE fixtures: words llama.cpp's GPT-2 pre-tokenizer splits as Hugging Face's does. */
const LLAMA_PROMPT = 'the fun of the sea is in the rest';
/**
 * The lab's tokenizer merges across spaces, llama.cpp splits words first: a prompt of special
 * tokens and words whose merges stay inside the word tokenizes the same in both (checked below
 * by the prompt's token count).
 */
const GPT2_PROMPT = '<|statement|>Sum<|plan|>';

let root: string;
let llamaCpp: LlamaCpp;

interface LabRun {
  promptIds: number[];
  tokens: number[];
  logProbs: number[];
  firstLogProbs: Float64Array;
}

function logSoftmax(logits: ArrayLike<number>): Float64Array {
  const values = Float64Array.from(logits);
  let max = Number.NEGATIVE_INFINITY;
  for (const x of values) max = Math.max(max, x);
  let sum = 0;
  for (const x of values) sum += Math.exp(x - max);
  const log = Math.log(sum) + max;
  return values.map((x) => x - log);
}

async function labLlama(name: string, adapter: string | null, eog: number[]): Promise<LabRun> {
  const loaded = await loadHubModel(
    folderSource(join(root, name)),
    adapter ? folderSource(join(root, adapter)) : undefined,
  );
  try {
    const promptIds = loaded.tokenizer.encode(LLAMA_PROMPT, false);
    const last = tf.tidy(() =>
      hubLastLogits(loaded.model, tf.tensor2d([promptIds], [1, promptIds.length], 'int32')),
    );
    const firstLogProbs = logSoftmax(await last.data());
    last.dispose();
    const out = await new KvCacheSampler(loaded.lm).sample([promptIds], {
      ...greedy(eog),
    });
    return { promptIds, tokens: out.tokens[0]!, logProbs: out.logProbs[0]!, firstLogProbs };
  } finally {
    disposeHubModel(loaded.model);
  }
}

/** The lab's greedy continuation: STEPS tokens at temperature 0, stopping at llama.cpp's end tokens. */
function greedy(eog: number[]) {
  return { maxNewTokens: STEPS, temperature: 0, topK: 0, seed: 1, stopId: -1, stopIds: eog };
}

async function labGpt2(adapter: string | null, eog: number[]): Promise<LabRun> {
  const { model, tokenizer } = await loadCheckpointDir(TINY, false);
  if (adapter) {
    const { readLora } = await import('../../src/model/loraFiles');
    model.lora = await readLora(
      folderSource(join(root, adapter)),
      gptTransformerConfig(model.config),
    );
  }
  const promptIds = tokenizer.encode(GPT2_PROMPT);
  const logits = forward(model, tf.tensor2d([promptIds], [1, promptIds.length], 'int32'));
  const all = await logits.data();
  logits.dispose();
  const V = model.config.vocabSize;
  const firstLogProbs = logSoftmax(all.slice((promptIds.length - 1) * V));
  const out = await new KvCacheSampler(model).sample([promptIds], {
    ...greedy(eog),
  });
  return { promptIds, tokens: out.tokens[0]!, logProbs: out.logProbs[0]!, firstLogProbs };
}

/** What the test asserts, as numbers: the steps agreed, where they parted, the worst log-prob gap. */
function compare(lab: LabRun, cpp: LlamaCppRun) {
  expect(cpp.promptTokens).toBe(lab.promptIds.length);
  let firstGap = 0;
  for (const t of cpp.tokens[0]!.top)
    firstGap = Math.max(firstGap, Math.abs(t.logprob - lab.firstLogProbs[t.id]!));
  let agreed = 0;
  let parted: number | null = null;
  let chosenGap = 0;
  const n = Math.min(lab.tokens.length, cpp.tokens.length);
  for (let k = 0; k < n; k++) {
    const step = cpp.tokens[k]!;
    if (lab.tokens[k] !== step.id) {
      parted = k;
      const [a, b] = step.top;
      expect(a!.logprob - b!.logprob, `parted at step ${k}`).toBeLessThan(TOLERANCE);
      break;
    }
    chosenGap = Math.max(chosenGap, Math.abs(lab.logProbs[k]! - step.logprob));
    agreed++;
  }
  if (parted === null) {
    // Same tokens as far as both went: each ran 32 tokens or stopped at an end-of-generation id.
    for (const ids of [lab.tokens, cpp.tokens.map((t) => t.id)])
      expect(ids.length === STEPS || cpp.eog.includes(ids[ids.length - 1]!)).toBe(true);
    if (lab.tokens.length !== cpp.tokens.length) {
      // llama.cpp may leave the end-of-generation id out of its list; the lab keeps it.
      expect(lab.tokens.length).toBe(cpp.tokens.length + 1);
      expect(cpp.eog).toContain(lab.tokens[lab.tokens.length - 1]);
    }
  }
  return { agreed, parted, firstGap, chosenGap };
}

beforeAll(async () => {
  await initBackend('cpu');
  root = mkdtempSync(join(tmpdir(), 'gguf-llamacpp-'));
  const names: FixtureName[] = ['qwen2', 'llama', 'qwen3'];
  names.forEach((name, i) => {
    const config = writeHfCheckpoint(join(root, name), fixtureSpec(name), 100 + i);
    if (name === 'llama')
      writeLoraAdapter(join(root, 'llama-lora'), config, { r: 4, alpha: 8 }, 200 + i);
  });
  // A GPT-2 adapter with B ≠ 0 on every target, in the files train --lora-rank writes.
  const { model } = await loadCheckpointDir(TINY, false);
  const settings = { rank: 4, alpha: 8, targets: ['c_attn', 'c_proj', 'c_fc'] };
  const rng = new Rng(7);
  const random = (n: number) => Float32Array.from({ length: n }, () => (rng.next() * 2 - 1) * 0.1);
  const values = new Map(
    loraModules(gptTransformerConfig(model.config), settings.targets).map(
      ({ module, inn, out }) => [module, { a: random(4 * inn), b: random(out * 4) }],
    ),
  );
  const files = await adapterFiles(
    loraFromValues(gptTransformerConfig(model.config), settings, values, 'test'),
    TINY,
    gptTransformerConfig(model.config),
  );
  mkdirSync(join(root, 'gpt2-lora'));
  for (const [file, bytes] of Object.entries(files))
    writeFileSync(join(root, 'gpt2-lora', file), bytes);
  llamaCpp = await startLlamaCpp(root);
}, 120_000);

afterAll(async () => {
  await llamaCpp?.close();
  rmSync(root, { recursive: true, force: true });
});

const CASES: { name: string; checkpoint: string | null; adapter: string | null }[] = [
  { name: 'qwen2', checkpoint: 'qwen2', adapter: null },
  { name: 'llama', checkpoint: 'llama', adapter: null },
  { name: 'qwen3', checkpoint: 'qwen3', adapter: null },
  { name: 'llama + LoRA', checkpoint: 'llama', adapter: 'llama-lora' },
  { name: 'tiny GPT-2', checkpoint: null, adapter: null },
  { name: 'tiny GPT-2 + LoRA', checkpoint: null, adapter: 'gpt2-lora' },
];

describe('llama.cpp continues an exported GGUF as the lab does', () => {
  for (const c of CASES) {
    it(c.name, async () => {
      const file = `${c.name.replace(/[^a-z0-9]+/gi, '-')}.gguf`;
      if (c.checkpoint)
        await writeRenderableLlamaGguf(
          join(root, c.checkpoint),
          c.adapter ? join(root, c.adapter) : null,
          join(root, file),
          'f32',
        );
      else
        await exportGguf({
          checkpoint: TINY,
          adapter: c.adapter ? join(root, c.adapter) : undefined,
          out: join(root, file),
          dtype: 'f32',
        });
      const prompt = c.checkpoint ? LLAMA_PROMPT : GPT2_PROMPT;
      const cpp = await llamaCpp.greedy(file, prompt, STEPS, TOP);
      const lab = c.checkpoint
        ? await labLlama(c.checkpoint, c.adapter, cpp.eog)
        : await labGpt2(c.adapter, cpp.eog);
      const result = compare(lab, cpp);
      expect(result.agreed).toBeGreaterThan(0);
      if (c.checkpoint) {
        console.log(`${c.name}: ${JSON.stringify(result)}`);
        expect(result.firstGap).toBeLessThan(TOLERANCE);
        return;
      }
      // GPT-2: llama.cpp's CPU GELU is a table of halves, ~1e-3 per activation. A float64
      // forward over the file's own tensors shows the file is the lab's model (exact GELU) and
      // that llama.cpp computes that model (its GELU), so the remaining gap is its GELU's.
      const gguf = readGguf(readFileSync(join(root, file)));
      const exact = gpt2LastLogProbs(gguf, lab.promptIds, 'exact');
      const ggml = gpt2LastLogProbs(gguf, lab.promptIds, 'ggml-f16');
      let fileGap = 0;
      for (let i = 0; i < exact.length; i++)
        fileGap = Math.max(fileGap, Math.abs(exact[i]! - lab.firstLogProbs[i]!));
      let ggmlGap = 0;
      for (const t of cpp.tokens[0]!.top)
        ggmlGap = Math.max(ggmlGap, Math.abs(ggml[t.id]! - t.logprob));
      console.log(`${c.name}: ${JSON.stringify({ ...result, fileGap, ggmlGap })}`);
      expect(fileGap).toBeLessThan(1e-4);
      expect(ggmlGap).toBeLessThan(TOLERANCE);
      expect(result.firstGap).toBeLessThan(GPT2_GELU_TOLERANCE);
    });
  }
});
