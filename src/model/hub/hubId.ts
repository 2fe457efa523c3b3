// A Hub model id as plain data (no fetch, no files): the page's Model choice checks a typed id
// with it through engine/api.ts, and hub.ts resolves it. Where a hub's files are kept in a cache
// is said here too, so the page can ask whether a link's model is there without loading it.

/** The Hub's own address. */
export const DEFAULT_ENDPOINT = 'https://huggingface.co';

export interface HubId {
  repo: string;
  revision: string;
}

/** `org/name` or `org/name@revision`; null for anything else (a folder path, say). */
export function parseHubId(text: string): HubId | null {
  const match = /^([A-Za-z0-9][\w.-]*\/[\w.-]+)(?:@([\w./-]+))?$/.exec(text);
  if (!match || match[1]!.includes('..') || match[2]?.includes('..')) return null;
  return { repo: match[1]!, revision: match[2] ?? 'main' };
}

/** An endpoint as hub.ts uses it: no trailing slash, the Hub's own when none is given. */
export function normalEndpoint(endpoint: string | undefined): string {
  return (endpoint ?? DEFAULT_ENDPOINT).replace(/\/+$/, '');
}

/**
 * A file's key in a hub cache: `{org/name}/{revision}/{file}` for the Hub itself, behind the
 * other hub's address otherwise, so files of two hubs never mix.
 */
export function hubCacheKey(endpoint: string, id: HubId, file: string): string {
  const hub = normalEndpoint(endpoint);
  const prefix =
    hub === DEFAULT_ENDPOINT ? '' : `${encodeURIComponent(hub.replace(/^https?:\/\//, ''))}/`;
  return `${prefix}${id.repo}/${id.revision}/${file}`;
}
