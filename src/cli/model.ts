// `npm run --silent model -- logits --checkpoint DIR --text "..."` → JSON {ids, logits}
//   (logits of the last position, for comparing with other implementations).
// `npm run --silent model -- info --checkpoint DIR` → config, parameter count, lab fields.
// `npm run --silent model -- sample --checkpoint DIR --text "..." [--temperature T --seed S --max N]`
//   → JSON {ids, text, logProbs} of a continuation.
// Options: --backend auto|kernels|tfjs-webgpu|wasm|cpu (default cpu: exact and quick for one sequence);
// `logits --backend kernels` runs the kernels' one model (gpu/engine/deviceTransformer.ts) for GPT-2 and
// the Llama family alike.
// DIR may also be a Hugging Face checkpoint (GPT-2, Llama, Qwen2, Qwen3), in a folder
// or on the Hub (`org/name[@revision]`, HF_ENDPOINT), with `--adapter DIR` (PEFT LoRA) and
// `--chat` (the text as one user turn of the chat template): see modelHf.ts. Over the lab's own
// GPT-2 folders `--adapter DIR` is a PEFT LoRA adapter of GPT-2's layout (what train --lora-rank
// writes to RUN/adapters/<role>/), read by the same PEFT reader, applied in the forward.
// `npm run --silent model -- export-gguf --checkpoint DIR_OR_ID [--adapter RUN/adapters/<role>]
//   --out FILE.gguf [--dtype f16|bf16|f32]` → the base with the adapter merged in, as GGUF for
//   llama.cpp (modelGguf.ts); prints JSON {out, architecture, dtype, tensors, bytes, adapter}.
import * as tf from '@tensorflow/tfjs-core';
import { BACKEND_CHOICES, type BackendChoice } from '../engine/types';
import { initBackend } from '../gpu/backend';
import { gptForDevice, logitsOnDevice } from '../gpu/engine/deviceCalls';
import { forward, parameterCount } from '../model';
import { loadCheckpointDir } from '../model/checkpointNode';
import { gptTransformerConfig } from '../model/config';
import { GGUF_DTYPES, type GgufDtype } from '../model/gguf/ggufTensors';
import { readLora } from '../model/loraFiles';
import { KvCacheSampler } from '../rollout';
import type { FlagSpecs } from './flags';
import { exportGguf } from './modelGguf';
import { checkpointSource, isLabGpt2Folder, runHfCommand } from './modelHf';
import { commandLine, exitWhenWritten, exitWithError, UsageError } from './runCli';

const FLAGS = {
  checkpoint: {
    kind: 'string',
    help: 'the checkpoint: a folder, or org/name[@revision] (required)',
  },
  adapter: { kind: 'string', help: 'a PEFT LoRA adapter folder over the checkpoint' },
  text: { kind: 'string', help: 'the prompt (logits, sample)' },
  chat: { kind: 'boolean', help: 'the text as one user turn of the chat template' },
  backend: { kind: 'choice', choices: BACKEND_CHOICES, help: 'where it runs (default cpu)' },
  max: { kind: 'integer', help: 'sample: most new tokens (default 200)' },
  temperature: { kind: 'number', help: 'sample: temperature (default 0: greedy)' },
  'top-k': { kind: 'integer', help: 'sample: only the k likeliest tokens (default 0: all)' },
  seed: { kind: 'integer', help: 'sample: seed (default 1)' },
  out: { kind: 'string', help: 'export-gguf: the .gguf file to write (required)' },
  dtype: {
    kind: 'choice',
    choices: GGUF_DTYPES,
    help: "export-gguf: the matrices' type (default the base's own)",
  },
} satisfies FlagSpecs;
const COMMANDS = ['logits', 'info', 'sample', 'export-gguf'] as const;
const {
  flags: f,
  words: [command],
} = commandLine('model', FLAGS, {
  usage:
    'npm run --silent model -- logits|info|sample|export-gguf --checkpoint DIR [--text "..."] [--out FILE.gguf]',
  words: { name: 'command', choices: COMMANDS },
});
const dir = f.checkpoint;
if (!dir) exitWithError(new UsageError('--checkpoint DIR is required'));
try {
  if (command === 'export-gguf') {
    if (!f.out) throw new UsageError('export-gguf: --out FILE.gguf is required');
    const result = await exportGguf({
      checkpoint: dir,
      adapter: f.adapter,
      out: f.out,
      dtype: f.dtype as GgufDtype | undefined,
    });
    console.log(JSON.stringify(result));
    await exitWhenWritten(0);
  }
  await initBackend((f.backend ?? 'cpu') as BackendChoice);
  if (!(await isLabGpt2Folder(dir))) {
    const out = await runHfCommand({
      command: command as 'logits' | 'info' | 'sample',
      checkpoint: dir,
      adapter: f.adapter,
      text: f.text ?? '',
      chat: f.chat === true,
      maxNewTokens: f.max ?? 200,
      temperature: f.temperature ?? 0,
      topK: f['top-k'] ?? 0,
      seed: f.seed ?? 1,
      backend: f.backend,
    });
    console.log(JSON.stringify(out));
    await exitWhenWritten(0);
  }
  const { model, tokenizer, lab } = await loadCheckpointDir(dir, false);
  if (f.adapter)
    model.lora = await readLora(
      checkpointSource(f.adapter, '--adapter'),
      gptTransformerConfig(model.config),
    );
  const ids = tokenizer.encode(f.text ?? '');
  if (command === 'info') {
    console.log(
      JSON.stringify(
        { config: model.config, parameters: parameterCount(model.config), lab },
        null,
        2,
      ),
    );
  } else if (command === 'logits' && f.backend === 'kernels') {
    // The kernels' one model, as for a Llama-family checkpoint (an adapter merged in).
    if (ids.length === 0) throw new UsageError('--text must not be empty');
    const { config, weights } = await gptForDevice(model);
    const logits = await logitsOnDevice(config, weights, ids);
    console.log(JSON.stringify({ ids, logits: Array.from(logits) }));
  } else if (command === 'logits') {
    if (ids.length === 0) throw new UsageError('--text must not be empty');
    const logits = forward(model, tf.tensor2d([ids], [1, ids.length], 'int32'));
    const all = await logits.data();
    const V = model.config.vocabSize;
    console.log(JSON.stringify({ ids, logits: Array.from(all.slice((ids.length - 1) * V)) }));
  } else {
    const out = await new KvCacheSampler(model).sample([ids], {
      maxNewTokens: f.max ?? 200,
      temperature: f.temperature ?? 0,
      topK: f['top-k'] ?? 0,
      seed: f.seed ?? 1,
      stopId: tokenizer.eosId,
    });
    const tokens = out.tokens[0]!;
    console.log(
      JSON.stringify({ ids: tokens, text: tokenizer.decode(tokens), logProbs: out.logProbs[0] }),
    );
  }
  await exitWhenWritten(0);
} catch (err) {
  exitWithError(err);
}
