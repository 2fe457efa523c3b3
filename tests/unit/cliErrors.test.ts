// Every CLI as a user runs it, given bad input: an unknown flag, a missing value, a value of
// the wrong kind (exit 2, nothing written), and bad files (exit 1): each answered with one
// line naming the flag or file, no stack, and none of the wasm glue's minified source. The
// runs are spawned together (a few at a time) once, then checked one by one.
import { execFile } from 'node:child_process';
import { cpSync, existsSync, mkdirSync, mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { basename, join } from 'node:path';
import { beforeAll, describe, expect, it } from 'vitest';

const root = mkdtempSync(join(tmpdir(), 'cli-errors-'));
const at = (name: string) => join(root, name);

interface Run {
  status: number | null;
  stdout: string;
  stderr: string;
}

/**
 * SCRIPT with ARGS as the package scripts run it: src/cli/NAME.ts through scripts/cli.mjs,
 * the bench's scripts through vite-node.
 */
function cli(script: string, args: string[]): Promise<Run> {
  const command = script.startsWith('src/cli/')
    ? ['scripts/cli.mjs', basename(script, '.ts'), ...args]
    : [join('node_modules', 'vite-node', 'dist', 'cli.mjs'), script, '--', ...args];
  return new Promise((resolve) => {
    execFile(process.execPath, command, { timeout: 240_000 }, (error, stdout, stderr) => {
      const status = error ? ((error as { code?: number }).code ?? null) : 0;
      resolve({ status: typeof status === 'number' ? status : null, stdout, stderr });
    });
  });
}

/** The files the bad-file runs read, written before any run starts. */
function writeFixtures(): void {
  // A run folder whose config.json is cut off mid-object.
  mkdirSync(at('run-corrupt'));
  writeFileSync(at('run-corrupt/config.json'), '{\n  "steps": 2,\n  x');
  // A checkpoint whose weights file lost its second half.
  cpSync('public/checkpoints/tiny/coder', at('coder-truncated'), { recursive: true });
  const weights = readFileSync(at('coder-truncated/model.safetensors'));
  writeFileSync(at('coder-truncated/model.safetensors'), weights.subarray(0, weights.length / 2));
  // A suite with a broken task line (a suite file is one task per line).
  const suite = readFileSync('public/tasks/suite-L1.json', 'utf8').split('\n');
  suite[2] = '{"id": "broken", "tier": },';
  writeFileSync(at('suite-broken.json'), suite.join('\n'));
}

/** Each case: the command line and what its one line must say. */
const CASES = {
  trainMisspelled: {
    script: 'src/cli/train.ts',
    args: ['grpo', '--steps', '1', '--lerning-rate', '0.1', '--out', at('train-out')],
    status: 2,
    line: /^train: unknown flag --lerning-rate \(did you mean --learning-rate\?\)$/,
  },
  evalUnknown: {
    script: 'src/cli/eval.ts',
    args: ['--checkpoint', 'public/checkpoints/tiny', '--sutie', 'L1'],
    status: 2,
    line: /^eval: unknown flag --sutie \(did you mean --suite\?\)$/,
  },
  modelUnknown: {
    script: 'src/cli/model.ts',
    args: ['info', '--checkpoint', 'public/checkpoints/tiny/coder', '--bogus-flag', '3'],
    status: 2,
    line: /^model: unknown flag --bogus-flag /,
  },
  tasksUnknown: {
    script: 'src/cli/tasks.ts',
    args: ['export', '--tierz', 'L1', '--out', at('tasks.jsonl')],
    status: 2,
    line: /^tasks: unknown flag --tierz \(did you mean --tier\?\)$/,
  },
  sandboxUnknown: {
    script: 'src/cli/sandbox.ts',
    args: ['--suite', at('none.jsonl'), '--worker', '2'],
    status: 2,
    line: /^sandbox: unknown flag --worker \(did you mean --workers\?\)$/,
  },
  warmstartUnknown: {
    script: 'src/cli/warmstart.ts',
    args: ['--steps', '1', '--presett', 'tiny', '--out', at('warmstart-out')],
    status: 2,
    line: /^warmstart: unknown flag --presett \(did you mean --preset\?\)$/,
  },
  warmstartResumeMinutes: {
    script: 'src/cli/warmstart.ts',
    args: ['--minutes', '1', '--resume', '--out', at('warmstart-out')],
    status: 2,
    line: /^warmstart: --resume needs --steps: a --minutes run follows the clock and cannot$/,
  },
  warmstartNegativeCheckpoints: {
    script: 'src/cli/warmstart.ts',
    args: ['--steps', '2', '--checkpoint-every', '-5', '--out', at('warmstart-out')],
    status: 2,
    line: /^warmstart: --checkpoint-every must be 0 \(never\) or more, got -5$/,
  },
  warmstartAgentsUnknown: {
    script: 'src/cli/warmstartAgents.ts',
    args: ['--stepz', '1', '--out', at('agents-out')],
    status: 2,
    line: /^warmstart-agents: unknown flag --stepz \(did you mean --steps\?\)$/,
  },
  rewardServerUnknown: {
    script: 'src/cli/rewardServer.ts',
    args: ['--tasks', at('none.jsonl'), '--prot', '5000'],
    status: 2,
    line: /^reward-server: unknown flag --prot \(did you mean --port\?\)$/,
  },
  benchUnknown: {
    script: 'bench/main.ts',
    args: ['tasks', '--jsn'],
    status: 2,
    line: /^bench: unknown flag --jsn \(did you mean --json\?\)$/,
  },
  memoryStepUnknown: {
    script: 'bench/memoryStep.ts',
    args: ['--preset', 'tiny', '--budgt', '64'],
    status: 2,
    line: /^memory-step: unknown flag --budgt \(did you mean --budget\?\)$/,
  },
  missingValue: {
    script: 'src/cli/tasks.ts',
    args: ['export', '--out', at('tasks-missing.jsonl'), '--count'],
    status: 2,
    line: /^tasks: --count needs a value$/,
  },
  wrongKind: {
    script: 'src/cli/warmstart.ts',
    args: ['--steps', 'many', '--out', at('warmstart-kind')],
    status: 2,
    line: /^warmstart: --steps takes a whole number, got "many"$/,
  },
  resumeWithSetting: {
    // A resumed run keeps its snapshot's settings: a setting flag is refused, not ignored.
    script: 'src/cli/train.ts',
    args: ['grpo', '--resume', at('run-corrupt'), '--plans', '4'],
    status: 2,
    line: /^train: --plans cannot change a resumed run \(its settings are in .*\/snapshot\); with --resume: --steps/,
  },
  missingCheckpoint: {
    // The command: the wasm backend is up when the folder turns out missing.
    script: 'src/cli/eval.ts',
    args: ['--checkpoint', '/no/such/dir', '--suite', 'L1'],
    status: 1,
    line: /^eval: checkpoint \/no\/such\/dir\/coder: no such folder$/,
  },
  evalSelfPlanPair: {
    script: 'src/cli/eval.ts',
    args: ['--checkpoint', 'public/checkpoints/tiny', '--self-plan', '--suite', 'L1'],
    status: 2,
    line: /^eval: --self-plan: public\/checkpoints\/tiny holds planner\/, a pair, not one model$/,
  },
  corruptResume: {
    script: 'src/cli/train.ts',
    args: ['grpo', '--resume', at('run-corrupt')],
    status: 1,
    line: new RegExp(
      `^train: ${at('run-corrupt/config.json')}, line 3 column 3: not valid JSON \\(.+\\)$`,
    ),
  },
  warmstartNothingToResume: {
    script: 'src/cli/warmstart.ts',
    args: ['--steps', '2', '--resume', '--backend', 'wasm', '--out', at('warmstart-none')],
    status: 1,
    line: /^warmstart: --resume: no saved warm start in .*warmstart-none\/resume \(a run saves one every --checkpoint-every steps\)$/,
  },
  truncatedWeights: {
    script: 'src/cli/model.ts',
    args: ['info', '--checkpoint', at('coder-truncated'), '--backend', 'wasm'],
    status: 1,
    line: new RegExp(`^model: checkpoint ${at('coder-truncated')}: model.safetensors .*truncated`),
  },
  brokenSuite: {
    script: 'src/cli/eval.ts',
    args: ['--checkpoint', 'public/checkpoints/tiny', '--suite', at('suite-broken.json')],
    status: 1,
    line: new RegExp(`^eval: ${at('suite-broken.json')}, line 3 column 26: not valid JSON`),
  },
} satisfies Record<string, { script: string; args: string[]; status: number; line: RegExp }>;

const runs = new Map<string, Run>();

beforeAll(async () => {
  writeFixtures();
  const queue = Object.entries(CASES);
  // Three at a time: most runs end within their first second, reading flags or files.
  const worker = async () => {
    for (let next = queue.shift(); next; next = queue.shift()) {
      const [name, c] = next;
      runs.set(name, await cli(c.script, c.args));
    }
  };
  await Promise.all([worker(), worker(), worker()]);
}, 900_000);

describe('every CLI answers bad input with one line', () => {
  it.each(Object.keys(CASES))('%s', (name) => {
    const c = CASES[name as keyof typeof CASES];
    const run = runs.get(name)!;
    const said = run.stderr.trimEnd();
    expect(said.split('\n'), `${run.stderr}\n${run.stdout}`).toHaveLength(1);
    expect(said).toMatch(c.line);
    expect(run.status, said).toBe(c.status);
    const everything = `${run.stdout}\n${run.stderr}`;
    expect(everything).not.toContain('    at ');
    // The wasm glue's source is one line of tens of thousands of characters.
    expect(Math.max(...everything.split('\n').map((line) => line.length))).toBeLessThan(300);
  });

  it('writes nothing when a flag is refused', () => {
    for (const folder of ['train-out', 'tasks.jsonl', 'warmstart-out', 'agents-out']) {
      expect(existsSync(at(folder)), folder).toBe(false);
    }
    expect(existsSync(at('tasks-missing.jsonl'))).toBe(false);
    expect(existsSync(at('warmstart-kind'))).toBe(false);
    expect(existsSync(at('warmstart-none'))).toBe(false);
  });
});
