// One sandbox pool for the page, started on first use; its Workers keep QuickJS off the main thread.
import { createBrowserSandbox } from '../sandbox/browser';
import type { Sandbox } from '../sandbox/types';

let pool: Promise<Sandbox> | null = null;

export function pageSandbox(): Promise<Sandbox> {
  pool ??= createBrowserSandbox({ size: 2 }).catch((error: unknown) => {
    pool = null; // let the next Run try again
    throw error;
  });
  return pool;
}
