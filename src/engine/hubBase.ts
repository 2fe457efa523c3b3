// The page's base model (URL base= and hub=): a Hub id fetched in the Worker through the
// browser's Cache Storage (a reload reads the weights from there, not the network), its size
// stated before the download and a base that cannot fit refused in words, then the download's
// progress (bytes, ETA) as the page's progress events.

import { kernelEngine } from '../gpu/engine/kernelEngine';
import { cacheStorageHubCache, type HubProgress, hubSource, parseHubId } from '../model/hub/hub';
import { baseSize, checkBaseFits, describeBaseSize, loadBaseModel } from './baseModel';
import type { BaseModel } from './baseRoles';
import { DEFAULT_HUB } from './baseSettings';
import type { EngineEvent } from './protocol';
import type { RunConfig } from './types';

const MB = 1024 * 1024;

/** The run's base from its hub (config.base must be a Hub id in the page). */
export async function loadHubBase(
  config: RunConfig,
  post: (event: EngineEvent) => void,
): Promise<BaseModel> {
  const name = config.base ?? '';
  const id = parseHubId(name);
  if (!id)
    throw new Error(
      `base "${name}" is not a Hub id: the page takes org/name or org/name@revision (a folder works in the CLI only)`,
    );
  const endpoint = config.hub ?? DEFAULT_HUB;
  // The size joins the task's name once config.json is read, so it stays up during the download.
  let task = `Loading ${name}`;
  const source = hubSource(id, {
    endpoint,
    cache: cacheStorageHubCache(),
    onProgress: (p: HubProgress) => post(progressEvent(task, p)),
  });
  const size = await baseSize(source, name, config);
  task = `Loading ${name} (${describeBaseSize(size, kernelEngine() !== null)})`;
  post({ type: 'progress', task, fraction: 0, message: 'checking the size', etaSec: null });
  checkBaseFits(size, name);
  return (await loadBaseModel(source, name, config)).base;
}

function progressEvent(task: string, p: HubProgress): EngineEvent {
  const total = p.total === null ? '' : ` of ${(p.total / MB).toFixed(1)} MB`;
  return {
    type: 'progress',
    task,
    fraction: p.total ? Math.min(1, p.received / p.total) : p.done ? 1 : 0,
    message: `downloading ${p.file}: ${(p.received / MB).toFixed(1)} MB${total}`,
    etaSec: p.done ? null : p.etaSeconds,
  };
}
