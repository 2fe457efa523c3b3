// The sandbox is built beside this module; it is looked up lazily so that src/tasks keeps
// working (and its Node checks keep running) in a tree where src/sandbox/index.ts is absent.
import type { RunLimits, Sandbox } from '../sandbox/types';

export type SandboxFactory = (options?: { size?: number; limits?: Partial<RunLimits> }) => Promise<Sandbox>;

const modules = import.meta.glob<{ createSandbox?: SandboxFactory }>('../sandbox/index.ts');

/** `createSandbox` from src/sandbox, or null when the sandbox is not in this tree. */
export async function loadSandboxFactory(): Promise<SandboxFactory | null> {
  const load = modules['../sandbox/index.ts'];
  if (!load) return null;
  const mod = await load();
  return mod.createSandbox ?? null;
}
