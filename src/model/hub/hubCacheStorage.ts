// The hub cache's interface, and the browser's Cache Storage as one (the page and its Worker
// share it, so the page can see what a link's model has there before anything downloads).

/** Where fetched files are kept, by key (hubId.ts' hubCacheKey). */
export interface HubCache {
  get(key: string): Promise<Uint8Array | null>;
  put(key: string, bytes: Uint8Array): Promise<void>;
  delete(key: string): Promise<void>;
  /** Where it lives, for messages. */
  readonly where: string;
}

export const HUB_CACHE_NAME = 'core-code-lab-hub';

const url = (key: string) => `https://hub-cache.invalid/${key}`;

/** Whether Cache Storage holds the key, without reading its bytes (a model's weights are large). */
export async function cacheStorageHas(key: string, name = HUB_CACHE_NAME): Promise<boolean> {
  return (await (await caches.open(name)).match(url(key))) !== undefined;
}

/** The browser's Cache Storage as a HubCache (the page and its Worker). */
export function cacheStorageHubCache(name = HUB_CACHE_NAME): HubCache {
  return {
    where: `Cache Storage "${name}"`,
    async get(key) {
      const res = await (await caches.open(name)).match(url(key));
      return res ? new Uint8Array(await res.arrayBuffer()) : null;
    },
    async put(key, bytes) {
      await (await caches.open(name)).put(url(key), new Response(bytes as BufferSource));
    },
    async delete(key) {
      await (await caches.open(name)).delete(url(key));
    },
  };
}
