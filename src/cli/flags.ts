// Command-line flags for the lab's CLIs: `--name value` pairs, a bare `--name` is 'true'.
export function parseFlags(argv: readonly string[]): Map<string, string> {
  const out = new Map<string, string>();
  for (let i = 0; i < argv.length; i++) {
    const arg = argv[i] ?? '';
    if (!arg.startsWith('--') || arg === '--') continue;
    const next = argv[i + 1];
    if (next === undefined || next.startsWith('--')) out.set(arg.slice(2), 'true');
    else {
      out.set(arg.slice(2), next);
      i++;
    }
  }
  return out;
}
