// The run settings' flags (`train grpo --plans 4 …`), made from the one settings table
// (engine/settings.ts) so the CLI cannot drift from the page's controls and links.
import { withKindDefaults } from '../engine/loraDefaults';
import { runConfigProblems } from '../engine/runConfig';
import { fieldOf, parseTierMix, runConfigFromFlags, SETTINGS } from '../engine/settings';
import type { RunConfig } from '../engine/types';
import { type FlagSpec, UsageError } from './flags';

/** One flag per setting: its kind, its choices, its help. */
export function settingFlags(): Record<string, FlagSpec> {
  const out: Record<string, FlagSpec> = {};
  for (const s of SETTINGS) {
    const help = s.help ?? s.label;
    const alias = s.cliAlias;
    if (s.kind === 'choice') {
      out[s.cliFlag] = { kind: 'choice', choices: (s.choices ?? []).map((c) => c.value), help };
    } else if (s.kind === 'integer' || s.kind === 'number') out[s.cliFlag] = { kind: s.kind, help };
    else if (s.kind === 'text') out[s.cliFlag] = { kind: 'string', help };
    else
      out[s.cliFlag] = {
        kind: 'string',
        help: `${s.kind === 'tiers' ? 'L1:1,L2:2 — ' : 'a,b — '}${help}`,
      };
    if (alias) out[s.cliFlag] = { ...out[s.cliFlag]!, alias };
  }
  return out;
}

/**
 * The run the setting flags describe, over `base`; a value that cannot run is a usage error
 * naming its flag (nothing has started yet). Flags that are not settings are ignored.
 */
export function runConfigFromSettingFlags(
  flags: Readonly<Record<string, unknown>>,
  base: RunConfig,
): RunConfig {
  const given = new Map<string, string>();
  for (const s of SETTINGS) {
    const value = flags[s.cliFlag];
    if (value === undefined) continue;
    if (s.kind === 'tiers' && parseTierMix(String(value)) === null) {
      throw new UsageError(`--${s.cliFlag} takes tier weights like L1:1,L2:2, got "${value}"`);
    }
    given.set(s.cliFlag, String(value));
  }
  // What the flags leave out and depends on the run's kind: --base alone means rank 8, a LoRA
  // run without --learning-rate gets LoRA's rate (engine/loraDefaults.ts).
  const config = withKindDefaults(runConfigFromFlags(given, base), (path) =>
    SETTINGS.some((s) => s.path === path && given.has(s.cliFlag)),
  );
  const problems = runConfigProblems(config);
  if (problems.length > 0) {
    const words = problems.map((problem) => {
      const flag = SETTINGS.find((s) => fieldOf(s) === problem.field && given.has(s.cliFlag));
      return flag
        ? `--${flag.cliFlag} ${given.get(flag.cliFlag)}: ${problem.message}`
        : problem.message;
    });
    throw new UsageError(words.join('; '));
  }
  return config;
}
