// A Hub model id as plain data (no fetch, no files): the page's Model choice checks a typed id
// with it through engine/api.ts, and hub.ts resolves it.

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
