// No silent download from a link (issue 34): a link that names a base (base=, maybe hub=) makes
// the page fetch and run whatever that hub serves, so unless the model is already in the page's
// Cache Storage the page first says what it would fetch (the hub's host, the model id) and waits
// for a click. Plain data and Cache Storage only: the page's main thread reads it through api.ts
// before anything is sent to the Worker, so no request reaches the hub before the click.
import { cacheStorageHas, cacheStorageHubCache } from '../model/hub/hubCacheStorage';
import { hubCacheKey, normalEndpoint, parseHubId } from '../model/hub/hubId';
import type { RunConfig } from './types';

export interface LinkDownload {
  /** The model id as the link names it. */
  model: string;
  /** The hub's address and its host (what the user is asked about). */
  hub: string;
  host: string;
}

const INDEX_FILE = 'model.safetensors.index.json';

/**
 * What a run's base would download, or null when there is nothing to ask: no base, a base that is
 * not a Hub id (the start refuses it in words), or one whose files are all in Cache Storage.
 */
export async function downloadToConfirm(config: RunConfig): Promise<LinkDownload | null> {
  if (config.base === undefined) return null;
  const id = parseHubId(config.base);
  if (!id) return null;
  const hub = normalEndpoint(config.hub);
  let host: string;
  try {
    host = new URL(hub).host;
  } catch {
    return null; // baseProblems names a bad hub address
  }
  const key = (file: string) => hubCacheKey(hub, id, file);
  const has = (file: string) => cacheStorageHas(key(file));
  let cached = false;
  try {
    const weights = await cachedWeightFiles(key, has);
    cached =
      weights !== null &&
      (await Promise.all(['config.json', 'tokenizer.json', ...weights].map(has))).every(Boolean);
  } catch {
    // No Cache Storage here (an insecure origin): nothing is known to be cached, so ask.
  }
  return cached ? null : { model: config.base, hub, host };
}

/** The weight files the cache says the model has (model.safetensors, or its index's shards); null when unknown. */
async function cachedWeightFiles(
  key: (file: string) => string,
  has: (file: string) => Promise<boolean>,
): Promise<string[] | null> {
  if (await has('model.safetensors')) return ['model.safetensors'];
  const index = await cacheStorageHubCache().get(key(INDEX_FILE));
  if (!index) return null;
  try {
    const map = (JSON.parse(new TextDecoder().decode(index)) as { weight_map?: unknown })
      .weight_map;
    const files = Object.values(map as Record<string, unknown>);
    return files.every((f) => typeof f === 'string') ? [...new Set(files as string[])] : null;
  } catch {
    return null;
  }
}
