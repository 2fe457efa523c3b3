// Checkpoints from the Hugging Face Hub, for Node and for the page's Worker alike: fetch
// `{endpoint}/{org/name}/resolve/{revision}/{file}` (endpoint: HF_ENDPOINT or
// https://huggingface.co) and nothing else, with progress (bytes, ETA), through a cache (the
// browser's Cache Storage; a folder in Node, hubCacheNode.ts), every file checked before it is
// kept or used: the body's length against Content-Length, a .safetensors file against its own
// header, JSON parsed. A truncated file is fetched again; a missing (404), gated (401/403) or
// unreachable model is named in words.
import { importNodeOnly, isNodeHost } from '../../gpu/host';
import type { CheckpointSource } from '../families/hfCheckpoint';
import { readSafetensorsHeader } from '../safetensors';
import type { HubId } from './hubId';

export { type HubId, parseHubId } from './hubId';

export const DEFAULT_ENDPOINT = 'https://huggingface.co';

/** Where fetched files are kept, by key `{org/name}/{revision}/{file}`. */
export interface HubCache {
  get(key: string): Promise<Uint8Array | null>;
  put(key: string, bytes: Uint8Array): Promise<void>;
  /** Where it lives, for messages. */
  readonly where: string;
}

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
  /** Tries per file when a body arrives truncated. */
  attempts?: number;
  /** Counts what the network served (tests check that a second load hits the cache). */
  onFetch?: (url: string, status: number) => void;
}

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

/** A failure worth another try: a broken connection, a short body. */
class Retry extends Error {
  constructor(
    message: string,
    /** The server was never reached (refused, no route, DNS). */
    readonly unreachable = false,
  ) {
    super(message);
  }
}

/** A Hub checkpoint as a CheckpointSource: each file from the cache, else fetched and kept. */
export function hubSource(id: HubId, options: HubOptions): CheckpointSource {
  const endpoint = (options.endpoint ?? DEFAULT_ENDPOINT).replace(/\/+$/, '');
  const label = `${id.repo}@${id.revision}`;
  const attempts = options.attempts ?? 3;

  async function fetchOnce(file: string): Promise<Uint8Array | null> {
    const url = `${endpoint}/${id.repo}/resolve/${encodeURIComponent(id.revision)}/${file}`;
    let res: Response;
    try {
      res = await fetch(
        url,
        options.token ? { headers: { authorization: `Bearer ${options.token}` } } : {},
      );
    } catch (err) {
      const cause = (err as { cause?: { message?: string } }).cause?.message;
      throw new Retry(`${(err as Error).message}${cause ? `: ${cause}` : ''}`, true);
    }
    options.onFetch?.(url, res.status);
    if (res.status === 404) {
      await res.body?.cancel();
      return null;
    }
    if (res.status === 401 || res.status === 403) {
      await res.body?.cancel();
      throw new Error(
        `${id.repo} is gated or private on ${endpoint} (HTTP ${res.status}): accept its terms on the Hub and give a token (HF_TOKEN)`,
      );
    }
    if (!res.ok) {
      await res.body?.cancel();
      throw new Error(`${endpoint} answered HTTP ${res.status} for ${id.repo}'s ${file}`);
    }
    const encoded = res.headers.get('content-encoding');
    const lengthHeader = res.headers.get('content-length');
    const total = lengthHeader !== null && !encoded ? Number(lengthHeader) : null;
    const chunks: Uint8Array[] = [];
    let received = 0;
    const started = Date.now();
    let lastReport = 0;
    const report = (done: boolean) => {
      const seconds = (Date.now() - started) / 1000;
      const rate = seconds > 0 ? received / seconds : 0;
      const etaSeconds = total !== null && rate > 0 ? Math.max(0, (total - received) / rate) : null;
      options.onProgress?.({ repo: id.repo, file, received, total, etaSeconds, done });
    };
    try {
      const reader = res.body!.getReader();
      for (;;) {
        const { done, value } = await reader.read();
        if (done) break;
        chunks.push(value);
        received += value.length;
        if (Date.now() - lastReport > 500) {
          lastReport = Date.now();
          report(false);
        }
      }
    } catch {
      throw new Retry(`the connection broke after ${received} bytes`);
    }
    report(true);
    if (total !== null && received !== total)
      throw new Retry(`got ${received} of the ${total} bytes Content-Length announced`);
    const bytes = new Uint8Array(received);
    let at = 0;
    for (const c of chunks) {
      bytes.set(c, at);
      at += c.length;
    }
    try {
      checkComplete(file, bytes, label);
    } catch (err) {
      throw new Retry((err as Error).message);
    }
    return bytes;
  }

  return {
    label,
    async read(file) {
      const key = `${id.repo}/${id.revision}/${file}`;
      const cached = await options.cache.get(key);
      if (cached) {
        try {
          checkComplete(file, cached, label);
          return cached;
        } catch {
          // A damaged cache entry: fetch it again below.
        }
      }
      let why: Retry | null = null;
      for (let attempt = 0; attempt < attempts; attempt++) {
        try {
          const bytes = await fetchOnce(file);
          if (bytes === null) {
            if (file === 'config.json') {
              throw new Error(
                `${id.repo} (revision ${id.revision}) was not found on ${endpoint} (HTTP 404 for config.json): no such model, or not a transformers checkpoint`,
              );
            }
            return null;
          }
          await options.cache.put(key, bytes);
          return bytes;
        } catch (err) {
          if (!(err instanceof Retry)) throw err;
          why = err;
        }
      }
      if (why?.unreachable)
        throw new Error(`cannot reach ${endpoint} for ${id.repo} (${why.message})`);
      throw new Error(`${label}: ${file} arrived truncated ${attempts} times (${why?.message})`);
    },
  };
}

/** The browser's Cache Storage as a HubCache (the page and its Worker). */
export function cacheStorageHubCache(name = 'core-code-lab-hub'): HubCache {
  const url = (key: string) => `https://hub-cache.invalid/${key}`;
  return {
    where: `Cache Storage "${name}"`,
    async get(key) {
      const res = await (await caches.open(name)).match(url(key));
      return res ? new Uint8Array(await res.arrayBuffer()) : null;
    },
    async put(key, bytes) {
      await (await caches.open(name)).put(url(key), new Response(bytes as BufferSource));
    },
  };
}

/** The host's cache: a folder in Node (hubCacheNode.ts), Cache Storage in a browser. */
export async function defaultHubCache(): Promise<HubCache> {
  if (!isNodeHost) return cacheStorageHubCache();
  // Resolved from gpu/host.ts, where importNodeOnly lives.
  const node = await importNodeOnly<{ nodeHubCache(): HubCache }>('../model/hub/hubCacheNode');
  return node.nodeHubCache();
}
