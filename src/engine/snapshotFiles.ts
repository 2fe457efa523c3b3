// How a run's parts become named bytes in a RunSnapshot: each role's checkpoint as its three
// usual files under `<role>/`, a trainer's Adam moments and frozen reference as one
// safetensors file, and the run's counters as run.json.
import type { CheckpointFiles } from '../model';
import { decodeSafetensors, encodeSafetensors, type NamedTensor } from '../model';
import type { RoleTrainerState } from '../rl/trainer';
import type { FileMap } from './types';

const encoder = new TextEncoder();
const decoder = new TextDecoder();

export function putCheckpoint(files: FileMap, prefix: string, checkpoint: CheckpointFiles): void {
  files[`${prefix}/model.safetensors`] = checkpoint['model.safetensors'];
  files[`${prefix}/config.json`] = encoder.encode(checkpoint['config.json']);
  files[`${prefix}/tokenizer.json`] = encoder.encode(checkpoint['tokenizer.json']);
}

export function getCheckpoint(files: FileMap, prefix: string): CheckpointFiles {
  const need = (name: string) => {
    const bytes = files[`${prefix}/${name}`];
    if (!bytes) throw new Error(`snapshot has no ${prefix}/${name}`);
    return bytes;
  };
  return {
    'model.safetensors': need('model.safetensors'),
    'config.json': decoder.decode(need('config.json')),
    'tokenizer.json': decoder.decode(need('tokenizer.json')),
  };
}

export function putJson(files: FileMap, name: string, value: unknown): void {
  files[name] = encoder.encode(`${JSON.stringify(value, null, 2)}\n`);
}

export function getJson<T>(files: FileMap, name: string): T {
  const bytes = files[name];
  if (!bytes) throw new Error(`snapshot has no ${name}`);
  return JSON.parse(decoder.decode(bytes)) as T;
}

/** Moments keep their order (Adam matches them to variables by position). */
export function encodeTrainerState(state: RoleTrainerState): Uint8Array {
  const tensors = new Map<string, NamedTensor>();
  state.moments.forEach((moment, index) => {
    tensors.set(`moment.${index}`, { shape: moment.shape, data: moment.data });
  });
  for (const [name, data] of state.reference ?? []) {
    tensors.set(`reference.${name}`, { shape: [data.length], data });
  }
  return encodeSafetensors(tensors, {
    iterations: String(state.iterations),
    momentNames: JSON.stringify(state.moments.map((m) => m.name)),
    hasReference: String(state.reference !== null),
  });
}

export function decodeTrainerState(bytes: Uint8Array): RoleTrainerState {
  const { tensors, metadata } = decodeSafetensors(bytes);
  const names = JSON.parse(metadata.momentNames ?? '[]') as string[];
  const moments = names.map((name, index) => {
    const tensor = tensors.get(`moment.${index}`);
    if (!tensor) throw new Error(`trainer state: moment ${index} missing`);
    return { name, shape: tensor.shape, data: tensor.data };
  });
  let reference: Map<string, Float32Array> | null = null;
  if (metadata.hasReference === 'true') {
    reference = new Map();
    for (const [name, tensor] of tensors) {
      if (name.startsWith('reference.'))
        reference.set(name.slice('reference.'.length), tensor.data);
    }
  }
  return { iterations: Number(metadata.iterations ?? 0), moments, reference };
}
