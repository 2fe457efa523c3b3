// The MBXP task set: the literal reader against V8 on fresh random literals, a row's parse, the
// fixed split, statements cut to a context, and — over every shipped task — the canonical
// solution's per-test verdicts in the lab's harness equal to Node's on MBXP's own asserts,
// and the shipped files equal to what the generator makes from ../shared's JSONL.
import { existsSync, readFileSync } from 'node:fs';
import { dirname, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, describe, expect, it } from 'vitest';
import { fitStatement } from '../../src/agents/format';
import { buildMbxpTaskSet, canonicalVerdicts } from '../../src/cli/tasksMbxp';
import { defaultRunConfig } from '../../src/engine/session';
import { TaskStream } from '../../src/engine/taskStream';
import { createSandbox } from '../../src/sandbox/nodeSandbox';
import type { Sandbox } from '../../src/sandbox/types';
import { type JsonValue, Rng } from '../../src/tasks';
import { parseLiteral } from '../../src/tasks/mbxp/literal';
import { type MbxpCandidate, parseMbxpRow } from '../../src/tasks/mbxp/parse';
import {
  loadTaskSetSplit,
  mbxpFile,
  mbxpSplitOf,
  serializeTaskSet,
  TASK_SET_SPLITS,
  type TaskSetSplits,
} from '../../src/tasks/mbxp/taskSet';
import { checkInNode } from '../../src/tasks/nodeCheck';
import { CharTokenizer } from '../../src/tokenizer';
import { fromTokenizerJson } from '../../src/tokenizer/charTokenizer';

const repoRoot = resolve(dirname(fileURLToPath(import.meta.url)), '../..');
const dataPath = resolve(repoRoot, '../shared/data/mbxp-js/mbjsp_release_v1.2.jsonl');
const haveData = existsSync(dataPath);
if (!haveData) console.warn(`MBXP regeneration and Node parity skipped: ${dataPath} is absent`);

const shipped: TaskSetSplits = {
  train: loadTaskSetSplit(
    readFileSync(resolve(repoRoot, 'public', mbxpFile('train')), 'utf8'),
    'train',
  ),
  validation: loadTaskSetSplit(
    readFileSync(resolve(repoRoot, 'public', mbxpFile('validation')), 'utf8'),
    'validation',
  ),
};
const allShipped = [...shipped.train, ...shipped.validation];

let sandbox: Sandbox | undefined;
afterAll(() => sandbox?.close());

/** A random JSON value, and a JavaScript literal spelling it in one of many styles. */
function randomLiteral(rng: Rng, depth = 0): { value: JsonValue; text: string } {
  const kind = rng.below(depth > 3 ? 4 : 6);
  const space = () => [' ', '', '  ', '\n '][rng.below(4)] ?? '';
  if (kind === 0) {
    const value = rng.chance(0.5) ? rng.int(-1000, 1000) : Number((rng.normal() * 1e3).toFixed(4));
    if (Object.is(value, -0)) return { value: 0, text: '0' };
    const style = rng.below(3);
    if (style === 1 && Number.isInteger(value) && value >= 0) {
      return { value, text: `0x${value.toString(16)}` };
    }
    if (style === 2 && value !== 0) return { value, text: value.toExponential() };
    return { value, text: String(value) };
  }
  if (kind === 1) {
    const chars = 'ab"\'$\\\n\t\u00e9\u20ac\0 x<>{}[],:'.split('');
    const value = Array.from({ length: rng.below(8) }, () => chars[rng.below(chars.length)]).join(
      '',
    );
    const quote = rng.chance(0.5) ? "'" : '"';
    const text = [...value]
      .map((c) => {
        if (c === quote || c === '\\') return `\\${c}`;
        if (c === '\n') return '\\n';
        if (c === '\t') return rng.chance(0.5) ? '\\t' : '\\x09';
        if (c === '\0') return '\\x00';
        if (c === '$') return rng.chance(0.5) ? '\\$' : '$';
        if (c === 'a' && rng.chance(0.3)) return '\\u0061';
        if (c === '\u20ac' && rng.chance(0.5)) return '\\u{20ac}';
        return c;
      })
      .join('');
    return { value, text: `${quote}${text}${quote}` };
  }
  if (kind === 2) return { value: null, text: 'null' };
  if (kind === 3) {
    const value = rng.chance(0.5);
    return { value, text: String(value) };
  }
  if (kind === 4) {
    const items = Array.from({ length: rng.below(4) }, () => randomLiteral(rng, depth + 1));
    const trailing = items.length > 0 && rng.chance(0.3) ? ',' : '';
    return {
      value: items.map((i) => i.value),
      text: `[${space()}${items.map((i) => i.text).join(`,${space()}`)}${trailing}${space()}]`,
    };
  }
  const value: { [key: string]: JsonValue } = {};
  const parts: string[] = [];
  for (let k = rng.below(4); k > 0; k--) {
    const item = randomLiteral(rng, depth + 1);
    const keyStyle = rng.below(4);
    const key = ['name', '"R"', 'k_1', '12'][rng.below(4)] ?? 'x';
    const keyText =
      keyStyle === 0 && /^[a-z_]\w*$/.test(key)
        ? key
        : keyStyle === 1
          ? `'${key}'`
          : keyStyle === 2 && /^\d+$/.test(key)
            ? key
            : JSON.stringify(key);
    value[key] = item.value;
    parts.push(`${keyText}${space()}:${space()}${item.text}`);
  }
  return { value, text: `{${space()}${parts.join(`,${space()}`)}${space()}}` };
}

describe('the literal reader', () => {
  it('reads what V8 evaluates, on fresh random literals', () => {
    const rng = new Rng(20261201);
    for (let i = 0; i < 2000; i++) {
      const { value, text } = randomLiteral(rng);
      const v8 = new Function(`return (${text});`)() as unknown;
      const parsed = parseLiteral(text);
      expect(parsed, text).toEqual({ ok: true, value: v8 });
      expect(v8).toEqual(value);
    }
  });

  it('refuses literals with no JSON form, saying why', () => {
    for (const text of [
      'new Set([1, 2])',
      'undefined',
      'NaN',
      'Infinity',
      '-0',
      '[1,,2]',
      'f(1)',
      'x',
      '10n',
      '{a}',
      '"open',
      '1 2',
      '{"__proto__": 1}',
    ]) {
      const parsed = parseLiteral(text);
      expect(parsed.ok, text).toBe(false);
      if (!parsed.ok) expect(parsed.reason, text).toMatch(/\S/);
    }
  });
});

const ROW = {
  task_id: 'T/1',
  prompt:
    '/**\n * * Write a function to add two numbers.\n *\n * > add(1, 2)\n * 3\n */\nfunction add(a, b) {\n',
  entry_point: 'add',
  canonical_solution: '  return a + b;\n}',
  test: [
    '',
    'const _ = require("lodash")',
    '',
    'function compare(object1, object2){',
    '    return _.isEqual(object1, object2)',
    '}',
    '',
    'var arg00 = 1;',
    'var arg01 = 2;',
    'var x0 = add(arg00, arg01);',
    'var v0 = 3;',
    'if(!compare(x0, v0)){',
    "    throw 'Error at 1th assert statement. Value = ' + JSON.stringify(x)  ",
    '}',
    '',
    'var arg10 = [1];',
    'var arg11 = new Set([2]);',
    'var x1 = add(arg10, arg11);',
    'var v1 = "12";',
    'if(!compare(x1, v1)){',
    "    throw 'Error at 2th assert statement. Value = ' + JSON.stringify(x)  ",
    '}',
    '',
  ].join('\n'),
};

describe('a row as a task', () => {
  it('makes the statement, the tests and the reference; drops an assert with a Set', () => {
    const parsed = parseMbxpRow(ROW);
    expect(parsed.ok).toBe(true);
    if (!parsed.ok) return;
    const { task, asserts } = parsed.candidate;
    expect(task.statement).toBe(
      'Write a function to add two numbers.\nfunction add(a, b)\n> add(1, 2)\n3',
    );
    expect(task).toMatchObject({ id: 'T/1', entryPoint: 'add', arity: 2, family: 'mbxp' });
    expect(task.tests).toEqual([{ args: [1, 2], expected: 3 }]);
    expect(asserts[1]?.dropped).toMatch(/"new" has no JSON form/);
    expect(task.strategies[0]?.code).toBe('function add(a, b) {\n  return a + b;\n}');
  });

  it('drops a task whose script has another shape, or no solution', () => {
    const other = parseMbxpRow({
      ...ROW,
      test: ROW.test.replace('var x0 = add(arg00, arg01);', 'var x0 = add(arg01, arg00);'),
    });
    expect(other).toMatchObject({
      ok: false,
      reason: expect.stringMatching(/unrecognised test line/),
    });
    const { canonical_solution: _, ...noSolution } = ROW;
    expect(parseMbxpRow(noSolution)).toEqual({ ok: false, reason: 'no canonical solution' });
  });
});

describe('the split', () => {
  it('is fixed by the id alone, about one in five to validation', () => {
    for (const split of TASK_SET_SPLITS) {
      for (const task of shipped[split]) expect(mbxpSplitOf(task.id), task.id).toBe(split);
    }
    const ids = allShipped.map((t) => t.id);
    expect(new Set(ids).size).toBe(ids.length);
    expect(shipped.train.length).toBe(644);
    expect(shipped.validation.length).toBe(147);
    const share = shipped.validation.length / allShipped.length;
    expect(share).toBeGreaterThan(0.15);
    expect(share).toBeLessThan(0.25);
  });
});

describe('statements cut to a context', () => {
  it('keeps the longest prefix within the budget, and short statements whole', () => {
    const tokenizer = fromTokenizerJson(
      JSON.parse(
        readFileSync(resolve(repoRoot, 'public/checkpoints/tiny/coder/tokenizer.json'), 'utf8'),
      ),
    );
    const rng = new Rng(7);
    for (const task of rng.shuffle(allShipped).slice(0, 40)) {
      const budget = rng.int(0, 200);
      const cut = fitStatement(tokenizer, task.statement, budget);
      expect(task.statement.startsWith(cut)).toBe(true);
      expect(tokenizer.encode(cut).length).toBeLessThanOrEqual(budget);
      if (cut !== task.statement) {
        expect(tokenizer.encode(task.statement.slice(0, cut.length + 1)).length).toBeGreaterThan(
          budget,
        );
      }
    }
    const chars = new CharTokenizer();
    expect(fitStatement(chars, 'short', 100)).toBe('short');
  });
});

describe('the training stream over the train split', () => {
  it('is seeded, covers the list once per epoch, and resumes where it stopped', () => {
    const list = shipped.train.slice(0, 10);
    const config = defaultRunConfig({ taskSet: 'mbxp' });
    const stream = new TaskStream(config, 0, list);
    const first = stream.next(10).map((t) => t.id);
    expect([...first].sort()).toEqual(list.map((t) => t.id).sort());
    const next = stream.next(7).map((t) => t.id);
    const resumed = new TaskStream(config, 10, list).next(7).map((t) => t.id);
    expect(resumed).toEqual(next);
    expect(new TaskStream(config, 0, list).next(10).map((t) => t.id)).toEqual(first);
    const other = new TaskStream(defaultRunConfig({ taskSet: 'mbxp', grpo: { seed: 2 } }), 0, list);
    expect(other.next(10).map((t) => t.id)).not.toEqual(first);
  });
});

describe('canonical solutions on every shipped task', () => {
  it('pass every test in the harness and in V8 (host comparison)', async () => {
    sandbox ??= await createSandbox({ size: 2 });
    const { judgePrograms } = await import('../../src/agents/judge');
    const judged = await judgePrograms(
      sandbox,
      allShipped.map((task) => ({ task, completion: task.strategies[0]?.code ?? '' })),
    );
    const failing = judged.flatMap((j, i) => (j.run?.passed ? [] : [allShipped[i]?.id]));
    expect(failing).toEqual([]);
    for (const task of allShipped) {
      const code = task.strategies[0]?.code ?? '';
      expect(checkInNode(code, task.entryPoint, task.tests).failures, task.id).toEqual([]);
    }
  }, 120_000);

  it.skipIf(!haveData)(
    'give Node’s per-assert verdicts on MBXP’s own asserts, and regenerate the files byte for byte',
    async () => {
      sandbox ??= await createSandbox({ size: 2 });
      const text = readFileSync(dataPath, 'utf8');
      const rows = text
        .split('\n')
        .filter((line) => line.trim() !== '')
        .map((line) => JSON.parse(line) as Record<string, unknown>);
      const byId = new Map(allShipped.map((t) => [t.id, t]));
      const candidates: MbxpCandidate[] = [];
      for (const row of rows) {
        const parsed = parseMbxpRow(row);
        if (parsed.ok && byId.has(parsed.candidate.task.id)) candidates.push(parsed.candidate);
      }
      expect(candidates.length).toBe(allShipped.length);
      const verdicts = await canonicalVerdicts(candidates, sandbox);
      candidates.forEach((candidate, i) => {
        const id = candidate.task.id;
        expect(candidate.task.tests, id).toEqual(byId.get(id)?.tests);
        const { node, harness } = verdicts[i]!;
        expect(node.length, id).toBe(candidate.task.tests.length);
        expect(harness, id).toEqual(node);
        expect(node.every(Boolean), id).toBe(true);
      });

      const build = await buildMbxpTaskSet(text, sandbox);
      for (const split of TASK_SET_SPLITS) {
        const file = readFileSync(resolve(repoRoot, 'public', mbxpFile(split)), 'utf8');
        expect(serializeTaskSet(split, build.splits[split]) === file, split).toBe(true);
      }
      const kinds = new Map<string, number>();
      for (const drop of build.dropped) kinds.set(drop.kind, (kinds.get(drop.kind) ?? 0) + 1);
      expect(build.rows).toBe(966);
      expect(Object.fromEntries(kinds)).toEqual({
        'no canonical solution': 28,
        'no assert with a JSON form': 4,
        'nondeterministic canonical solution': 1,
        'canonical fails in Node': 139,
        'harness differs from Node': 3,
      });
    },
    180_000,
  );
});
