// Checkpoints from the Hugging Face Hub, for Node and for the page's Worker alike: fetch
// `{endpoint}/{org/name}/resolve/{revision}/{file}` (endpoint: HF_ENDPOINT or
// https://huggingface.co) and nothing else, with progress (bytes, ETA), through a cache (the
// browser's Cache Storage; a folder in Node, hubCacheNode.ts; files of another hub kept apart),
// every file checked before it is kept or used: the download as hubDownload.ts checks it, a
// .safetensors file against its own header, JSON parsed. A file the checkpoint lacks is
// remembered as absent; a checkpoint the loaders refuse is forgotten (forget). A missing (404),
// gated (401/403) or unreachable model is named in words.
import { type CheckpointSource, TransferError } from '../families/hfCheckpoint';
import { readSafetensorsHeader } from '../safetensors';
import type { HubCache } from './hubCacheStorage';
import { download } from './hubDownload';
import { type HubId, hubCacheKey, normalEndpoint } from './hubId';

export type { HubCache } from './hubCacheStorage';
export { cacheStorageHubCache } from './hubCacheStorage';
export { DEFAULT_ENDPOINT, type HubId, parseHubId } from './hubId';

export interface HubProgress {
  repo: string;
  file: string;
  received: number;
  /** From Content-Length; null when the server does not say. */
  total: number | null;
  /** Seconds left at the rate so far; null until it can be estimated. */
  etaSeconds: number | null;
  done: boolean;
}

export interface HubOptions {
  endpoint?: string;
  cache: HubCache;
  /** Sent as a bearer token (gated models). */
  token?: string;
  onProgress?: (p: HubProgress) => void;
  /** Tries per file when a body arrives short, breaks off or stalls (later tries resume). */
  attempts?: number;
  /** A download must bring `minBytesPerWindow` bytes every `stallSeconds` (default 30 s, 16 KB). */
  stallSeconds?: number;
  minBytesPerWindow?: number;
  /** Counts what the network served (tests check that a second load hits the cache). */
  onFetch?: (url: string, status: number) => void;
}

/** The most bytes a JSON file of a checkpoint may have (a real tokenizer.json is under 20 MB). */
export const MAX_JSON_FILE_BYTES = 64 * 1024 * 1024;

/** Refuses a file whose bytes are not whole: a safetensors header against the size, JSON parsed. */
function checkComplete(file: string, bytes: Uint8Array, label: string): void {
  if (file.endsWith('.safetensors')) readSafetensorsHeader(bytes, `${label}: ${file}`);
  else if (file.endsWith('.json')) {
    try {
      JSON.parse(new TextDecoder('utf-8', { fatal: true }).decode(bytes));
    } catch (err) {
      throw new Error(`${label}: ${file} is not valid JSON (${(err as Error).message})`);
    }
  }
}

/** A Hub checkpoint as a CheckpointSource: each file from the cache, else fetched, checked and kept. */
export function hubSource(id: HubId, options: HubOptions): CheckpointSource {
  const endpoint = normalEndpoint(options.endpoint);
  const label = `${id.repo}@${id.revision}`;
  const { cache } = options;
  const keyOf = (file: string) => hubCacheKey(endpoint, id, file);
  /** A file the checkpoint lacks (404) is remembered too, so a cached model loads offline. */
  const absentKey = (file: string) => `${keyOf(file)}.absent`;
  const touched = new Set<string>();

  return {
    label,
    async read(file, maxBytes) {
      const key = keyOf(file);
      touched.add(key).add(absentKey(file));
      const cached = await cache.get(key);
      if (cached) {
        try {
          checkComplete(file, cached, label);
          return cached;
        } catch {
          // A damaged cache entry: fetch it again below.
        }
      } else if (file !== 'config.json' && (await cache.get(absentKey(file)))) return null;
      const url = `${endpoint}/${id.repo}/resolve/${encodeURIComponent(id.revision)}/${file}`;
      let bytes: Uint8Array | null;
      try {
        bytes = await download(url, `${label}: ${file}`, {
          headers: options.token ? { authorization: `Bearer ${options.token}` } : {},
          attempts: options.attempts ?? 3,
          stallSeconds: options.stallSeconds ?? 30,
          minBytesPerWindow: options.minBytesPerWindow ?? 16 * 1024,
          maxBytes: maxBytes ?? (file.endsWith('.json') ? MAX_JSON_FILE_BYTES : 2 ** 52),
          onFetch: options.onFetch,
          onProgress: (received, total, etaSeconds, done) =>
            options.onProgress?.({ repo: id.repo, file, received, total, etaSeconds, done }),
        });
      } catch (err) {
        const message = (err as Error).message;
        if (message.startsWith('HTTP 40'))
          throw new TransferError(
            `${id.repo} is gated or private on ${endpoint} (${message.split(':')[0]}): accept its terms on the Hub and give a token (HF_TOKEN)`,
          );
        if (message.startsWith('unreachable: '))
          throw new TransferError(
            `cannot reach ${endpoint} for ${id.repo} (${message.slice('unreachable: '.length)})`,
          );
        throw err;
      }
      if (bytes === null) {
        if (file === 'config.json') {
          throw new Error(
            `${id.repo} (revision ${id.revision}) was not found on ${endpoint} (HTTP 404 for config.json): no such model, or not a transformers checkpoint`,
          );
        }
        await cache.put(absentKey(file), new Uint8Array(0));
        return null;
      }
      // The server's whole body (its length checked): a file that does not parse is bad, not short.
      checkComplete(file, bytes, label);
      await cache.put(key, bytes);
      return bytes;
    },
    async forget() {
      for (const key of touched) await cache.delete(key);
      touched.clear();
    },
  };
}
