// Node only: checkpoint folders on disk.
import { existsSync } from 'node:fs';
import { mkdir, readFile, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import type { CharTokenizer } from '../tokenizer';
import {
  type CheckpointFiles,
  type LoadedCheckpoint,
  loadCheckpoint,
  saveCheckpoint,
} from './checkpoint';
import type { GPT } from './gpt';

export async function writeCheckpointDir(dir: string, files: CheckpointFiles): Promise<void> {
  await mkdir(dir, { recursive: true });
  await writeFile(join(dir, 'model.safetensors'), files['model.safetensors']);
  await writeFile(join(dir, 'config.json'), files['config.json']);
  await writeFile(join(dir, 'tokenizer.json'), files['tokenizer.json']);
}

export async function saveCheckpointDir(
  dir: string,
  model: GPT,
  tokenizer: CharTokenizer,
  lab?: Record<string, unknown>,
): Promise<void> {
  await writeCheckpointDir(dir, await saveCheckpoint(model, tokenizer, lab));
}

export async function readCheckpointDir(dir: string): Promise<CheckpointFiles> {
  const read = async (name: string) => {
    try {
      return await readFile(join(dir, name));
    } catch (error) {
      if (!existsSync(dir)) throw new Error(`checkpoint ${dir}: no such folder`);
      const code = (error as NodeJS.ErrnoException).code;
      const why = code === 'ENOENT' ? 'no such file' : (error as Error).message;
      throw new Error(`checkpoint ${dir}: cannot read ${name} (${why})`);
    }
  };
  const [weights, config, tokenizer] = await Promise.all(
    ['model.safetensors', 'config.json', 'tokenizer.json'].map(read),
  );
  return {
    'model.safetensors': new Uint8Array(weights!.buffer, weights!.byteOffset, weights!.byteLength),
    'config.json': config!.toString('utf8'),
    'tokenizer.json': tokenizer!.toString('utf8'),
  };
}

/** A checkpoint folder's model; any refusal names the folder (the message names the file). */
export async function loadCheckpointDir(dir: string, trainable = true): Promise<LoadedCheckpoint> {
  const files = await readCheckpointDir(dir);
  try {
    return loadCheckpoint(files, trainable);
  } catch (error) {
    throw new Error(`checkpoint ${dir}: ${(error as Error).message}`);
  }
}
