// `npm run model` for Hugging Face checkpoints (GPT-2, Llama, Qwen2, Qwen3), from a folder or the
// Hub (`org/name[@revision]`, HF_ENDPOINT), with an optional PEFT adapter. The lab's own GPT-2
// folders keep model.ts' path; this file handles everything else.

import { existsSync, statSync } from 'node:fs';
import * as tf from '@tensorflow/tfjs-core';
import { logitsOnDevice } from '../gpu/engine/deviceCalls';
import { checkpointTensors } from '../gpu/engine/deviceCheckpoint';
import { folderSource } from '../model/families/folderSourceNode';
import type { CheckpointSource } from '../model/families/hfCheckpoint';
import { readHfCheckpoint } from '../model/families/hfCheckpoint';
import { hubParameterCount, hubTransformerConfig } from '../model/families/hubConfig';
import { disposeHubModel, hubLastLogits } from '../model/families/hubModel';
import { loadHubModel } from '../model/families/load';
import { type HubProgress, hubSource, parseHubId } from '../model/hub/hub';
import { nodeHubCache } from '../model/hub/hubCacheNode';
import { checkLoraTargets, readLoraAdapter } from '../model/peft';
import { KvCacheSampler } from '../rollout';
import type { HfTokenizer } from '../tokenizer/hfTokenizer';

/** A folder if one exists at `arg`, else a Hub id; anything else is refused by name. */
export function checkpointSource(
  arg: string,
  flag = '--checkpoint',
  /** The Hub endpoint (a run's `hub` setting); default HF_ENDPOINT, else the Hub's own. */
  endpoint?: string,
): CheckpointSource {
  if (existsSync(arg)) {
    if (!statSync(arg).isDirectory()) throw new Error(`${flag} ${arg} is a file, not a folder`);
    return folderSource(arg);
  }
  const id = parseHubId(arg);
  if (!id) throw new Error(`${flag} ${arg} is neither a folder nor a Hub id (org/name[@revision])`);
  return hubSource(id, {
    endpoint: endpoint || process.env.HF_ENDPOINT || undefined,
    token: process.env.HF_TOKEN || undefined,
    cache: nodeHubCache(),
    onProgress: printProgress,
  });
}

const MB = 1024 * 1024;

/** Download progress on stderr: bytes, total and ETA, at most twice a second per file. */
function printProgress(p: HubProgress): void {
  const total = p.total === null ? '' : ` of ${(p.total / MB).toFixed(1)} MB`;
  const eta = p.done ? 'done' : p.etaSeconds === null ? '' : `ETA ${Math.ceil(p.etaSeconds)} s`;
  process.stderr.write(
    `hub: ${p.repo} ${p.file} ${(p.received / MB).toFixed(1)} MB${total} ${eta}\n`,
  );
}

/**
 * Whether the folder holds one of the lab's own GPT-2s (model.ts' path: a preset and a role in
 * its config.json, the lab's tokenizer) rather than a Hugging Face checkpoint of any family.
 */
export async function isLabGpt2Folder(arg: string): Promise<boolean> {
  if (!existsSync(arg)) return false;
  const bytes = await folderSource(arg).read('config.json');
  if (!bytes) return false;
  try {
    const json = JSON.parse(new TextDecoder().decode(bytes));
    return json?.model_type === 'gpt2' && typeof json.preset === 'string';
  } catch {
    return false; // the Hugging Face path says what is wrong with it
  }
}

export interface HfCommand {
  command: 'logits' | 'info' | 'sample';
  checkpoint: string;
  adapter?: string;
  text: string;
  /** Render the chat template around the text (one user turn, then the assistant's turn). */
  chat: boolean;
  maxNewTokens: number;
  temperature: number;
  topK: number;
  seed: number;
  /** `kernels`: logits on the lab's WGSL kernels (weights 16-bit on the device). */
  backend?: string;
}

/** Runs one command and returns the JSON it prints. */
export async function runHfCommand(c: HfCommand): Promise<unknown> {
  const source = checkpointSource(c.checkpoint);
  if (c.backend === 'kernels' && c.command === 'logits') return kernelLogits(source, c);
  const adapter = c.adapter ? checkpointSource(c.adapter, '--adapter') : undefined;
  const loaded = await loadHubModel(source, adapter);
  try {
    const { config } = loaded.checkpoint;
    if (c.command === 'info') {
      return {
        config,
        parameters: hubParameterCount(config),
        dtypes: loaded.dtypes,
        stopIds: loaded.tokenizer.stopIds,
        chatTemplate: loaded.tokenizer.hasChatTemplate,
        adapter: loaded.adapter
          ? { scale: loaded.adapter.scale, modules: loaded.adapter.modules.size }
          : null,
      };
    }
    const { prompt, ids } = promptIds(loaded.tokenizer, c);
    if (ids.length === 0) throw new Error('--text must not be empty');
    if (c.command === 'logits') {
      const last = tf.tidy(() =>
        hubLastLogits(loaded.model, tf.tensor2d([ids], [1, ids.length], 'int32')),
      );
      const values = Array.from(await last.data());
      last.dispose();
      return { ids, logits: values };
    }
    const stopIds = loaded.tokenizer.stopIds;
    const out = await new KvCacheSampler(loaded.lm).sample([ids], {
      maxNewTokens: c.maxNewTokens,
      temperature: c.temperature,
      topK: c.topK,
      seed: c.seed,
      stopId: stopIds[0] ?? -1,
      stopIds,
    });
    const tokens = out.tokens[0]!;
    return {
      prompt: c.chat ? prompt : undefined,
      ids: tokens,
      text: loaded.tokenizer.decode(tokens),
      logProbs: out.logProbs[0],
      finished: out.finished[0],
    };
  } finally {
    disposeHubModel(loaded.model);
  }
}

/** `logits --backend kernels`: the checkpoint's weights as stored, onto the device, no tfjs copy. */
async function kernelLogits(source: CheckpointSource, c: HfCommand) {
  const checkpoint = await readHfCheckpoint(source);
  const config = hubTransformerConfig(checkpoint.config);
  const adapter = c.adapter
    ? await readLoraAdapter(checkpointSource(c.adapter, '--adapter'), {
        conv1d: config.weightLayout === 'in-out',
      })
    : undefined;
  if (adapter)
    checkLoraTargets(
      new Map([...checkpoint.weights].map(([n, t]) => [n, t.shape])),
      adapter,
      config.weightLayout,
    );
  const { ids } = promptIds(checkpoint.tokenizer, c);
  if (ids.length === 0) throw new Error('--text must not be empty');
  const weights = checkpointTensors(checkpoint.weights);
  const logits = await logitsOnDevice(config, weights, ids, adapter);
  return { ids, logits: Array.from(logits) };
}

/**
 * The text's ids; with --chat, the text as one user turn of the chat template, encoded without
 * the tokenizer's added specials (the template holds them, as apply_chat_template does).
 */
function promptIds(tokenizer: HfTokenizer, c: HfCommand): { prompt: string; ids: number[] } {
  const prompt = c.chat ? tokenizer.applyChatTemplate([{ role: 'user', content: c.text }]) : c.text;
  return { prompt, ids: tokenizer.encode(prompt, !c.chat) };
}
