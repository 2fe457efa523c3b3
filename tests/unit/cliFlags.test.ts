// The CLIs' flag parser (src/cli/flags.ts, on util.parseArgs) and the run settings' flags made
// from the settings table: what is accepted, what is refused and how the refusal reads.
import { describe, expect, it } from 'vitest';
import { editDistance, type FlagSpecs, nearest, parseFlags, UsageError } from '../../src/cli/flags';
import { parseJsonText } from '../../src/cli/jsonFiles';
import { describeError } from '../../src/cli/runCli';
import { runConfigFromSettingFlags, settingFlags } from '../../src/cli/settingFlags';
import { defaultRunConfig } from '../../src/engine/session';
import { SETTINGS } from '../../src/engine/settings';
import { Rng } from '../../src/tasks/random';

const FLAGS = {
  steps: { kind: 'integer', help: 'steps' },
  'learning-rate': { kind: 'number', alias: 'lr', help: 'lr' },
  out: { kind: 'string', help: 'folder' },
  loss: { kind: 'choice', choices: ['grpo', 'dapo', 'dr_grpo'], help: 'aggregation' },
  'final-eval': { kind: 'boolean', help: 'evaluate at the end' },
} satisfies FlagSpecs;
const GRPO = { name: 'command', choices: ['grpo'] };

/** The UsageError's message for `argv`, or null when it parses. */
function refusal(argv: string[]): string | null {
  try {
    parseFlags(FLAGS, argv, GRPO);
    return null;
  } catch (error) {
    expect(error).toBeInstanceOf(UsageError);
    return (error as Error).message;
  }
}

describe('parseFlags', () => {
  it('reads each kind as its value, an alias as its flag, and drops bare --', () => {
    const { flags, words } = parseFlags(
      FLAGS,
      ['--', 'grpo', '--steps', '3', '--lr', '1e-4', '--out=a b', '--loss', 'dapo', '--final-eval'],
      GRPO,
    );
    expect(words).toEqual(['grpo']);
    expect(flags).toEqual({
      steps: 3,
      'learning-rate': 1e-4,
      out: 'a b',
      loss: 'dapo',
      'final-eval': true,
    });
    // Typed by kind: a number flag reads as a number.
    const steps: number | undefined = flags.steps;
    expect(steps).toBe(3);
  });

  it('takes a negative number as a number flag’s value', () => {
    const { flags } = parseFlags(FLAGS, ['grpo', '--learning-rate', '-0.5', '--steps', '-2'], GRPO);
    expect(flags).toEqual({ 'learning-rate': -0.5, steps: -2 });
  });

  it('refuses an unknown flag, naming it and the nearest known one', () => {
    expect(refusal(['grpo', '--lerning-rate', '0.1'])).toBe(
      'unknown flag --lerning-rate (did you mean --learning-rate?)',
    );
    expect(refusal(['grpo', '--stpes', '1'])).toBe('unknown flag --stpes (did you mean --steps?)');
    // Far from every flag: still the nearest, and where the list is.
    expect(refusal(['grpo', '--bogus-flag', '3'])).toMatch(
      /^unknown flag --bogus-flag \(the nearest known is --[a-z-]+; --help lists them\)$/,
    );
    expect(refusal(['grpo', '-x'])).toMatch(/^unknown flag -x/);
  });

  it('refuses a missing value, at the end or before another flag', () => {
    expect(refusal(['grpo', '--out'])).toBe('--out needs a value');
    expect(refusal(['grpo', '--out', '--steps', '1'])).toMatch(
      /^--out needs a value \(got the flag --steps;/,
    );
    expect(refusal(['grpo', '--steps', '--out', 'x'])).toMatch(/^--steps needs a value/);
    expect(refusal(['grpo', '--out='])).toBe('--out needs a value');
  });

  it('refuses a value of the wrong kind, naming the flag and the value', () => {
    expect(refusal(['grpo', '--steps', 'abc'])).toBe('--steps takes a whole number, got "abc"');
    expect(refusal(['grpo', '--steps', '1.5'])).toBe('--steps takes a whole number, got "1.5"');
    expect(refusal(['grpo', '--lr', 'fast'])).toBe('--learning-rate takes a number, got "fast"');
    expect(refusal(['grpo', '--loss', 'dapoo'])).toBe(
      '--loss takes one of grpo | dapo | dr_grpo, got "dapoo" (did you mean dapo?)',
    );
    expect(refusal(['grpo', '--final-eval=yes'])).toBe('--final-eval takes no value (got "yes")');
  });

  it('checks the words: the command, a near miss, a stray argument', () => {
    expect(refusal(['--steps', '1'])).toBe('give a command: grpo');
    expect(refusal(['grpp'])).toBe('unknown command "grpp" (did you mean grpo?); one of grpo');
    expect(refusal(['grpo', 'grpo'])).toMatch(/^unexpected argument "grpo"/);
    expect(() => parseFlags(FLAGS, ['stray'])).toThrow(/^unexpected argument "stray"/);
    // Sections: any number of them, none needed.
    const sections = { name: 'section', choices: ['tasks', 'grpo'], min: 0, max: Infinity };
    expect(parseFlags({}, [], sections).words).toEqual([]);
    expect(parseFlags({}, ['grpo', 'tasks'], sections).words).toEqual(['grpo', 'tasks']);
  });

  it('takes --debug and --help on every command line', () => {
    expect(parseFlags(FLAGS, ['grpo', '--debug', '--help'], GRPO).flags).toEqual({
      debug: true,
      help: true,
    });
  });
});

describe('editDistance', () => {
  /** Levenshtein by plain recursion over prefixes, memoized. */
  function reference(a: string, b: string): number {
    const memo = new Map<string, number>();
    const d = (i: number, j: number): number => {
      if (i === 0) return j;
      if (j === 0) return i;
      const key = `${i},${j}`;
      const known = memo.get(key);
      if (known !== undefined) return known;
      const value = Math.min(
        d(i - 1, j) + 1,
        d(i, j - 1) + 1,
        d(i - 1, j - 1) + (a[i - 1] === b[j - 1] ? 0 : 1),
      );
      memo.set(key, value);
      return value;
    };
    return d(a.length, b.length);
  }

  it('matches the recursive definition on random strings', () => {
    // Fresh inputs each run; the seed is in the failure message.
    const seed = Date.now() >>> 0;
    const rng = new Rng(seed);
    const pick = (n: number) => Math.floor(rng.next() * n);
    const word = () => Array.from({ length: pick(9) }, () => 'abc-'[pick(4)]).join('');
    for (let i = 0; i < 300; i++) {
      const a = word();
      const b = word();
      expect(editDistance(a, b), `seed ${seed}: ${a} / ${b}`).toBe(reference(a, b));
    }
    expect(nearest('lerning-rate', ['lr', 'learning-rate', 'loss'])).toBe('learning-rate');
  });
});

describe('the run settings’ flags', () => {
  it('has one flag per setting, of its kind and with its choices', () => {
    const flags = settingFlags();
    expect(Object.keys(flags)).toHaveLength(SETTINGS.length);
    for (const s of SETTINGS) {
      const flag = flags[s.cliFlag]!;
      const kind = s.kind === 'tiers' || s.kind === 'list' || s.kind === 'text' ? 'string' : s.kind;
      expect(flag.kind, s.cliFlag).toBe(kind);
      expect(flag.choices).toEqual(s.choices?.map((c) => c.value));
    }
    expect(flags['learning-rate']?.alias).toBe('lr');
  });

  it('builds the run, and refuses a value that cannot run naming its flag', () => {
    const specs = settingFlags();
    const read = (argv: string[]) =>
      runConfigFromSettingFlags(parseFlags(specs, argv).flags, defaultRunConfig());
    const config = read(['--plans', '3', '--lr', '0.001', '--tiers', 'L1:1,L3:2']);
    expect(config.grpo.plansPerTask).toBe(3);
    expect(config.grpo.learningRate).toBe(0.001);
    expect(config.tierMix).toEqual({ L1: 1, L3: 2 });
    expect(() => read(['--tiers', 'L9'])).toThrow(
      new UsageError('--tiers takes tier weights like L1:1,L2:2, got "L9"'),
    );
    expect(() => read(['--plans', '1'])).toThrow(/^--plans 1: plansPerTask /);
    expect(() => read(['--plans', '1'])).toThrow(UsageError);
  });
});

describe('one-line errors', () => {
  it('names the file, line and column of bad JSON', () => {
    expect(() => parseJsonText('{\n  "a": 1,\n  x\n}', 'run/config.json')).toThrow(
      /^run\/config\.json, line 3 column 3: not valid JSON \(/,
    );
    expect(() => parseJsonText('{"a": [1, 2', 'f.json')).toThrow(
      /^f\.json, line 1 column 12: not valid JSON/,
    );
    expect(() => parseJsonText('{', 'm.jsonl', 7)).toThrow(/^m\.jsonl, line 7 /);
    // V8 words an unexpected token with an excerpt, not a position: still found.
    expect(() => parseJsonText('[\n{"id": "x", "tier": },\n{}]', 'suite.json')).toThrow(
      new Error("suite.json, line 2 column 21: not valid JSON (Unexpected token '}')"),
    );
    expect(() => parseJsonText('{"a": 1} x', 'f.json')).toThrow(
      new Error(
        'f.json, line 1 column 10: not valid JSON (Unexpected non-whitespace character after JSON)',
      ),
    );
  });

  it('is one line, the stack only with --debug', () => {
    const error = new Error('first\nsecond');
    expect(describeError('eval', error, false)).toBe('eval: first second');
    const debug = describeError('eval', error, true).split('\n');
    expect(debug[0]).toBe('eval: first second');
    expect(debug.some((line) => line.startsWith('    at '))).toBe(true);
    expect(describeError('eval', new TypeError('x is undefined'), false)).toBe(
      'eval: x is undefined (--debug shows where)',
    );
  });
});
