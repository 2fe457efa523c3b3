// The page's "Export as GGUF": a run over a Hub base, one role's adapter (the snapshot's
// adapters/<role>/, PEFT's files) merged into the base, as GGUF for llama.cpp (model/gguf/). The
// base is read through the same Cache Storage the run loaded it from, so nothing is downloaded
// again; the matrices keep the base's own type.
import { type CheckpointSource, readHfCheckpoint } from '../model/families/hfCheckpoint';
import { hubTransformerConfig } from '../model/families/hubConfig';
import { checkpointGguf } from '../model/gguf/checkpointGguf';
import { ggufParts } from '../model/gguf/ggufFile';
import type { GgufDtype } from '../model/gguf/ggufTensors';
import { cacheStorageHubCache, hubSource, parseHubId } from '../model/hub/hub';
import { memorySource } from '../model/loraFiles';
import { readLoraAdapter } from '../model/peft';
import { DEFAULT_HUB } from './baseSettings';
import type { RunSnapshot } from './types';

export interface RoleGguf {
  /** A file name: the base's, the role's and .gguf. */
  name: string;
  parts: Uint8Array[];
}

/** The run's base as the page loaded it: its Hub id through Cache Storage. */
function cachedHubBase(base: string, hub: string | undefined): CheckpointSource {
  const id = parseHubId(base);
  if (!id) throw new Error(`base "${base}" is not a Hub id (org/name)`);
  return hubSource(id, { endpoint: hub ?? DEFAULT_HUB, cache: cacheStorageHubCache() });
}

export async function roleGguf(
  snapshot: RunSnapshot,
  role: string,
  /** Where the base's files are read (default: the page's Hub cache). */
  source?: CheckpointSource,
): Promise<RoleGguf> {
  const { base, hub } = snapshot.config;
  if (!base) throw new Error('Export as GGUF needs a run over a base model (base=org/name)');
  if (!snapshot.files[`adapters/${role}/adapter_config.json`])
    throw new Error(
      `the run has no adapter for the ${role} (adapters/${role}/ is not in its snapshot)`,
    );
  const checkpoint = await readHfCheckpoint(source ?? cachedHubBase(base, hub));
  const adapter = await readLoraAdapter(memorySource(snapshot.files, `adapters/${role}`), {
    conv1d: hubTransformerConfig(checkpoint.config).weightLayout === 'in-out',
  });
  const first = checkpoint.weights.values().next().value;
  const dtype = (first?.dtype.toLowerCase() ?? 'f16') as GgufDtype;
  const label = `${base}+${role}`;
  const parts = ggufParts(checkpointGguf({ checkpoint, adapter, dtype, name: label }));
  return { name: `${label.replace(/[^\w.-]+/g, '_')}.gguf`, parts };
}
