// Command-line flags for the lab's CLIs, declared as data and read by Node's own parser
// (util.parseArgs, strict). A CLI declares `const FLAGS = { … } satisfies FlagSpecs` and calls
// `commandLine(name, FLAGS)` (runCli.ts); this file is the pure part: parse, check each value
// against its kind, and word every refusal with the flag and the nearest known one.
import { parseArgs } from 'node:util';

export type FlagKind = 'string' | 'number' | 'integer' | 'boolean' | 'choice';

export interface FlagSpec {
  kind: FlagKind;
  /** One line for --help. */
  help: string;
  /** The values a `choice` flag takes. */
  choices?: readonly string[];
  /** Another name accepted for the same flag (an older spelling). */
  alias?: string;
}

export type FlagSpecs = Readonly<Record<string, FlagSpec>>;

/** Words besides flags: a subcommand (`train grpo`, `model logits`) or bench section names. */
export interface WordSpec {
  /** What a word is, in messages: `command`, `section`. */
  name: string;
  choices: readonly string[];
  /** How many words must / may be given (default 1 and 1). */
  min?: number;
  max?: number;
}

type ValueOfKind<K extends FlagKind> = [K] extends ['boolean']
  ? boolean
  : [K] extends ['number' | 'integer']
    ? number
    : [K] extends ['string' | 'choice']
      ? string
      : string | number | boolean;

/** The given flags, each as its kind's type (absent when not given). */
export type FlagValues<S extends FlagSpecs> = { [K in keyof S]?: ValueOfKind<S[K]['kind']> };

export interface CommandLine<S extends FlagSpecs> {
  flags: FlagValues<S>;
  words: string[];
}

/** Flags every CLI takes. */
export const COMMON_FLAGS = {
  debug: { kind: 'boolean', help: 'on an error, show its stack' },
  help: { kind: 'boolean', help: 'list the flags and exit' },
} as const satisfies FlagSpecs;

/** A mistake on the command line: the CLI exits with status 2 and this one line. */
export class UsageError extends Error {
  override name = 'UsageError';
}

/**
 * Reads `argv` (without node and the script) against `specs`. Bare `--` are dropped (npm and
 * vite-node pass one on some paths). Throws a UsageError naming the flag on an unknown flag,
 * a missing value, or a value not of the flag's kind.
 */
export function parseFlags<S extends FlagSpecs>(
  specs: S,
  argv: readonly string[],
  words?: WordSpec,
): CommandLine<S> {
  const all: FlagSpecs = { ...COMMON_FLAGS, ...specs };
  const options: Record<string, { type: 'string' | 'boolean' }> = {};
  const canonical = new Map<string, string>();
  for (const [name, spec] of Object.entries(all)) {
    const type = spec.kind === 'boolean' ? 'boolean' : 'string';
    options[name] = { type };
    canonical.set(name, name);
    if (spec.alias) {
      options[spec.alias] = { type };
      canonical.set(spec.alias, name);
    }
  }
  const args = joinNegativeNumbers(
    argv.filter((arg) => arg !== '--'),
    all,
    canonical,
  );
  let parsed: ReturnType<typeof parseArgs>;
  try {
    parsed = parseArgs({ args, options, strict: true, allowPositionals: true });
  } catch (error) {
    throw new UsageError(diagnose(args, options, canonical, error));
  }
  const flags: Record<string, string | number | boolean> = {};
  for (const [given, raw] of Object.entries(parsed.values)) {
    const name = canonical.get(given) ?? given;
    const spec = all[name]!;
    flags[name] = flagValue(name, spec, raw as string | boolean);
  }
  return { flags: flags as FlagValues<S>, words: checkWords(parsed.positionals, words) };
}

/** `--help`'s text: the usage line, then each flag with its kind and help. */
export function flagsHelp(usage: string, specs: FlagSpecs): string {
  const all: FlagSpecs = { ...specs, ...COMMON_FLAGS };
  const rows = Object.entries(all).map(([name, spec]) => {
    const value =
      spec.kind === 'boolean'
        ? ''
        : ` ${spec.kind === 'choice' ? (spec.choices ?? []).join('|') : spec.kind.toUpperCase()}`;
    const alias = spec.alias ? ` (or --${spec.alias})` : '';
    return { left: `  --${name}${value}${alias}`, help: spec.help };
  });
  const width = Math.min(40, Math.max(...rows.map((row) => row.left.length)) + 2);
  return [
    `usage: ${usage}`,
    ...rows.map((row) =>
      row.left.length < width
        ? `${row.left.padEnd(width)}${row.help}`
        : `${row.left}\n${' '.repeat(width)}${row.help}`,
    ),
  ].join('\n');
}

/** The known name closest to `given` by edit distance (ties: the first). */
export function nearest(given: string, known: Iterable<string>): string | undefined {
  let best: string | undefined;
  let bestDistance = Number.POSITIVE_INFINITY;
  for (const name of known) {
    const d = editDistance(given, name);
    if (d < bestDistance) {
      best = name;
      bestDistance = d;
    }
  }
  return best;
}

/** Levenshtein distance: insertions, deletions and substitutions, each 1. */
export function editDistance(a: string, b: string): number {
  let previous = Array.from({ length: b.length + 1 }, (_, j) => j);
  for (let i = 1; i <= a.length; i++) {
    const row = [i];
    for (let j = 1; j <= b.length; j++) {
      const substitute = previous[j - 1]! + (a[i - 1] === b[j - 1] ? 0 : 1);
      row.push(Math.min(substitute, previous[j]! + 1, row[j - 1]! + 1));
    }
    previous = row;
  }
  return previous[b.length]!;
}

/** ` (did you mean X?)` when X is close to `given`, else the nearest with a pointer to --help. */
function suggestion(given: string, known: readonly string[], prefix: string): string {
  const best = nearest(given, known);
  if (best === undefined) return '';
  const close = editDistance(given, best) <= Math.max(2, Math.floor(given.length / 3));
  return close
    ? ` (did you mean ${prefix}${best}?)`
    : ` (the nearest known is ${prefix}${best}; --help lists them)`;
}

/** A number flag's negative value (`--pass-weight -1`) as `--pass-weight=-1`, which parseArgs reads. */
function joinNegativeNumbers(
  args: string[],
  specs: FlagSpecs,
  canonical: ReadonlyMap<string, string>,
): string[] {
  const out: string[] = [];
  for (let i = 0; i < args.length; i++) {
    const arg = args[i]!;
    const name = arg.startsWith('--') ? canonical.get(arg.slice(2)) : undefined;
    const kind = name ? specs[name]?.kind : undefined;
    const next = args[i + 1];
    if ((kind === 'number' || kind === 'integer') && next !== undefined && /^-\.?\d/.test(next)) {
      out.push(`${arg}=${next}`);
      i++;
    } else out.push(arg);
  }
  return out;
}

/** Words the CLI reads, checked against `spec` (none allowed without one). */
function checkWords(given: string[], spec: WordSpec | undefined): string[] {
  if (!spec) {
    if (given.length > 0) {
      throw new UsageError(`unexpected argument "${given[0]}" (flags are written --name VALUE)`);
    }
    return given;
  }
  const min = spec.min ?? 1;
  const max = spec.max ?? 1;
  for (const word of given) {
    if (!spec.choices.includes(word)) {
      throw new UsageError(
        `unknown ${spec.name} "${word}"${suggestion(word, spec.choices, '')}; one of ${spec.choices.join(', ')}`,
      );
    }
  }
  if (given.length < min) throw new UsageError(`give a ${spec.name}: ${spec.choices.join(', ')}`);
  if (given.length > max) {
    throw new UsageError(`unexpected argument "${given[max]}" (one ${spec.name} at most)`);
  }
  return given;
}

/** A parsed flag's text as its kind's value; throws naming the flag. */
function flagValue(name: string, spec: FlagSpec, raw: string | boolean): string | number | boolean {
  if (spec.kind === 'boolean') return raw;
  const text = String(raw);
  if (text.trim() === '') throw new UsageError(`--${name} needs a value`);
  switch (spec.kind) {
    case 'integer': {
      const value = Number(text);
      if (!Number.isInteger(value)) {
        throw new UsageError(`--${name} takes a whole number, got "${text}"`);
      }
      return value;
    }
    case 'number': {
      const value = Number(text);
      if (!Number.isFinite(value)) throw new UsageError(`--${name} takes a number, got "${text}"`);
      return value;
    }
    case 'choice': {
      const choices = spec.choices ?? [];
      if (!choices.includes(text)) {
        throw new UsageError(
          `--${name} takes one of ${choices.join(' | ')}, got "${text}"${suggestion(text, choices, '')}`,
        );
      }
      return text;
    }
    default:
      return text;
  }
}

/**
 * parseArgs refused `args`: find the flag it stumbled on (from its own tokens, read leniently)
 * and say what is wrong with it in words.
 */
function diagnose(
  args: string[],
  options: Record<string, { type: 'string' | 'boolean' }>,
  canonical: ReadonlyMap<string, string>,
  error: unknown,
): string {
  const { tokens } = parseArgs({
    args,
    options,
    strict: false,
    allowPositionals: true,
    tokens: true,
  });
  const known = [...canonical.keys()];
  for (const token of tokens) {
    if (token.kind !== 'option') continue;
    const flag = token.rawName;
    const type = options[token.name]?.type;
    if (type === undefined || !flag.startsWith('--')) {
      return `unknown flag ${flag}${suggestion(token.name, known, '--')}`;
    }
    if (type === 'boolean' && token.inlineValue) {
      return `${flag} takes no value (got "${token.value}")`;
    }
    if (type === 'string' && token.value === undefined) return `${flag} needs a value`;
    if (type === 'string' && !token.inlineValue && token.value?.startsWith('-')) {
      return `${flag} needs a value (got the flag ${token.value}; a value starting with - is written ${flag}=VALUE)`;
    }
  }
  return error instanceof Error ? error.message.split('\n')[0]! : String(error);
}
