// `npm run --silent model -- export-gguf --checkpoint DIR_OR_ID [--adapter RUN/adapters/<role>]
// --out FILE.gguf [--dtype f16|bf16|f32]`: the base with the role's LoRA merged in, as GGUF v3
// for llama.cpp (model/gguf/): any checkpoint the one Hugging Face loader reads — GPT-2 (the
// lab's own or the Hub's) or the Llama family — from a folder or the Hub. Everything is read and
// checked before a byte is written, and the file is written beside its destination and renamed
// into place, so a refusal leaves nothing behind.
import { createWriteStream, existsSync, renameSync, rmSync, statSync } from 'node:fs';
import { basename, dirname, resolve } from 'node:path';
import { folderSource } from '../model/families/folderSourceNode';
import { readHfCheckpoint } from '../model/families/hfCheckpoint';
import { hubTransformerConfig } from '../model/families/hubConfig';
import { checkpointGguf } from '../model/gguf/checkpointGguf';
import { type GgufContents, ggufParts } from '../model/gguf/ggufFile';
import type { GgufDtype } from '../model/gguf/ggufTensors';
import { readLoraAdapter } from '../model/peft';
import { checkpointSource } from './modelHf';

export interface ExportGgufRequest {
  checkpoint: string;
  adapter?: string;
  out: string;
  /** Default: the base's own (F32, F16 or BF16; the lab's GPT-2 is F32). */
  dtype?: GgufDtype;
}

export interface ExportGgufResult {
  out: string;
  architecture: string;
  dtype: GgufDtype;
  tensors: number;
  bytes: number;
  adapter: string | null;
}

/** An adapter is a folder (train writes RUN/adapters/<role>/), never a Hub download. */
function adapterFolder(path: string) {
  if (!existsSync(path) || !statSync(path).isDirectory())
    throw new Error(`--adapter ${path}: no such folder`);
  return folderSource(path);
}

async function contents(r: ExportGgufRequest): Promise<{ gguf: GgufContents; dtype: GgufDtype }> {
  const name =
    basename(resolve(r.checkpoint)) + (r.adapter ? `+${basename(resolve(r.adapter))}` : '');
  const checkpoint = await readHfCheckpoint(checkpointSource(r.checkpoint));
  const conv1d = hubTransformerConfig(checkpoint.config).weightLayout === 'in-out';
  const adapter = r.adapter ? await readLoraAdapter(adapterFolder(r.adapter), { conv1d }) : null;
  const first = checkpoint.weights.values().next().value;
  const dtype = r.dtype ?? ((first?.dtype.toLowerCase() ?? 'f16') as GgufDtype);
  return { gguf: checkpointGguf({ checkpoint, adapter, dtype, name }), dtype };
}

export async function exportGguf(r: ExportGgufRequest): Promise<ExportGgufResult> {
  const folder = dirname(resolve(r.out));
  if (!existsSync(folder) || !statSync(folder).isDirectory())
    throw new Error(`--out ${r.out}: the folder ${folder} does not exist`);
  if (existsSync(r.out) && statSync(r.out).isDirectory())
    throw new Error(`--out ${r.out} is a folder, not a file`);
  const { gguf, dtype } = await contents(r);
  const parts = ggufParts(gguf);
  const partial = `${r.out}.partial-${process.pid}`;
  try {
    const stream = createWriteStream(partial);
    for (const part of parts) {
      if (!stream.write(part))
        await new Promise<void>((done) => stream.once('drain', () => done()));
    }
    await new Promise<void>((done, fail) => {
      stream.once('error', fail);
      stream.end(done);
    });
    renameSync(partial, r.out);
  } catch (err) {
    rmSync(partial, { force: true });
    throw new Error(`--out ${r.out}: ${(err as Error).message}`);
  }
  return {
    out: r.out,
    architecture: String(
      gguf.metadata.find(([k]) => k === 'general.architecture')?.[1].value ?? '',
    ),
    dtype,
    tensors: gguf.tensors.length,
    bytes: parts.reduce((n, p) => n + p.length, 0),
    adapter: r.adapter ?? null,
  };
}
