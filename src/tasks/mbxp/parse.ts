// One MBXP JavaScript row (task_id, prompt, entry_point, test, canonical_solution) as a lab Task:
// the doc comment and signature become the statement, the canonical solution the reference
// code, and each assert of the test script a test case (args + expected) that the host
// compares. MBXP's test scripts are regular: per assert, `var argKi = <literal>;` lines, then
// `var xK = entry(argK0, …);`, `var vK = <literal>;` and `if(!compare(xK, vK)){ throw … }`.
// A literal with no JSON form (`new Set(…)`) drops its assert, with the reason; a script of
// any other shape drops the whole task. Which tasks ship is decided later, by running the
// canonical solutions (cli/tasksMbxp.ts).
import type { Task, TaskTest } from '../types';
import { parseLiteral } from './literal';

export const MBXP_FAMILY = 'mbxp';

/** One assert of a row's test script. */
export interface MbxpAssert {
  /** Its source lines, as the script has them (Node runs these, see tasks/mbxpNode.ts). */
  source: string;
  /** The test case, when every literal of the assert has a JSON form. */
  test?: TaskTest;
  /** Why it has no test case. */
  dropped?: string;
}

export interface MbxpCandidate {
  task: Task;
  /** The canonical program as MBXP runs it: prompt + canonical_solution. */
  program: string;
  /** The test script's lines before the first assert (`require("lodash")`, `compare`). */
  header: string;
  asserts: MbxpAssert[];
}

export type MbxpParse = { ok: true; candidate: MbxpCandidate } | { ok: false; reason: string };

const SIGNATURE = /\nfunction ([A-Za-z_$][\w$]*)\(([^)]*)\) \{\n$/;
const ARG_LINE = /^var arg(\d+) = (.*);$/;
const CALL_LINE = /^var x(\d+) = ([A-Za-z_$][\w$]*)\((.*)\);$/;
const EXPECTED_LINE = /^var v(\d+) = (.*);$/;
const CHECK_LINE = /^if\s*\(\s*!compare\(x(\d+), v(\d+)\)\)\s*\{$/;

export function parseMbxpRow(row: Record<string, unknown>): MbxpParse {
  const id = row.task_id;
  const prompt = row.prompt;
  const testScript = row.test;
  const solution = row.canonical_solution;
  if (typeof id !== 'string' || typeof prompt !== 'string' || typeof testScript !== 'string') {
    return { ok: false, reason: 'task_id, prompt or test missing' };
  }
  if (typeof solution !== 'string') return { ok: false, reason: 'no canonical solution' };
  const signature = SIGNATURE.exec(prompt);
  const entryPoint = signature?.[1];
  if (!signature || !entryPoint || entryPoint !== row.entry_point) {
    return { ok: false, reason: 'the prompt does not end with the entry point’s header' };
  }
  const params = signature[2] ?? '';
  const script = parseTestScript(testScript, entryPoint);
  if (!script.ok) return script;
  const arities = new Set(script.asserts.map((a) => a.arity));
  if (arities.size !== 1) return { ok: false, reason: 'asserts call with different arities' };
  const asserts: MbxpAssert[] = script.asserts.map(({ source, args, expected }) => {
    const values = [...args, expected].map(parseLiteral);
    const bad = values.find((v) => !v.ok);
    if (bad && !bad.ok) return { source, dropped: bad.reason };
    const json = values.map((v) => (v.ok ? v.value : null));
    return { source, test: { args: json.slice(0, -1), expected: json.at(-1) ?? null } };
  });
  const header = `function ${entryPoint}(${params})`;
  const task: Task = {
    id,
    family: MBXP_FAMILY,
    // Tiers grade the procedural world; an external task is beyond what the warm start learned,
    // which is what L5 means to the lab (its family, mbxp, says where it comes from).
    tier: 'L5',
    statement: statementOf(prompt.slice(0, signature.index), header),
    entryPoint,
    arity: [...arities][0] ?? 0,
    tests: asserts.flatMap((a) => (a.test ? [a.test] : [])),
    strategies: [{ name: 'direct', plan: '', code: `${header} {\n${solution}` }],
    efficiencyTests: [],
    steps: [MBXP_FAMILY],
  };
  return {
    ok: true,
    candidate: { task, program: prompt + solution, header: script.header, asserts },
  };
}

/**
 * The doc comment as plain lines: the description first, then the signature (so a statement
 * cut to a small model's context keeps the name it must define), then the examples.
 */
function statementOf(comment: string, signature: string): string {
  const lines = comment
    .replace(/^\s*\/\*\*/, '')
    .replace(/\*\/\s*$/, '')
    .split('\n')
    .map((line, i) => {
      const text = line.replace(/^\s*\* ?/, '').trimEnd();
      // MBXP's description line starts with a second `* `.
      return i <= 1 ? text.replace(/^\* /, '') : text;
    });
  const firstExample = lines.findIndex((line) => line.startsWith('> '));
  const cut = firstExample < 0 ? lines.length : firstExample;
  const description = lines.slice(0, cut).join('\n').trim();
  const examples = lines.slice(cut).join('\n').trim();
  return [description, signature, examples].filter((part) => part !== '').join('\n');
}

interface RawAssert {
  source: string;
  args: string[];
  expected: string;
  arity: number;
}

type ScriptParse =
  | { ok: true; header: string; asserts: RawAssert[] }
  | { ok: false; reason: string };

/** The script's header and asserts, or why its shape is not the one MBXP generates. */
function parseTestScript(script: string, entryPoint: string): ScriptParse {
  const lines = script.split('\n');
  const first = lines.findIndex((line) => /^var (arg|x)\d+ = /.test(line.trim()));
  if (first < 0) return { ok: false, reason: 'the test script has no assert' };
  const asserts: RawAssert[] = [];
  let block: string[] = [];
  let args: string[] = [];
  let argNames: string[] = [];
  let call: { index: string; arity: number } | null = null;
  let expected: string | null = null;
  let inThrow = false;
  const wrong = (line: string): ScriptParse => ({
    ok: false,
    reason: `unrecognised test line ${JSON.stringify(line.trim().slice(0, 60))}`,
  });
  for (const line of lines.slice(first)) {
    const text = line.trim();
    if (text === '') continue;
    block.push(line);
    if (inThrow) {
      if (text.startsWith('throw ')) continue;
      if (text !== '}' || call === null || expected === null) return wrong(line);
      asserts.push({ source: block.join('\n'), args, expected, arity: call.arity });
      block = [];
      args = [];
      argNames = [];
      call = null;
      expected = null;
      inThrow = false;
      continue;
    }
    const arg = ARG_LINE.exec(text);
    if (arg && call === null) {
      argNames.push(`arg${arg[1]}`);
      args.push(arg[2] ?? '');
      continue;
    }
    const callMatch = CALL_LINE.exec(text);
    if (callMatch && call === null) {
      const index = callMatch[1] ?? '';
      const names = (callMatch[3] ?? '').split(',').map((name) => name.trim());
      const given = names.length === 1 && names[0] === '' ? [] : names;
      // The call must pass exactly this assert's argK0, argK1, … in order.
      const expectedNames = args.map((_, i) => `arg${index}${i}`);
      if (
        callMatch[2] !== entryPoint ||
        given.join() !== expectedNames.join() ||
        argNames.join() !== expectedNames.join()
      ) {
        return wrong(line);
      }
      call = { index, arity: given.length };
      continue;
    }
    const value = EXPECTED_LINE.exec(text);
    if (value && call !== null && value[1] === call.index && expected === null) {
      expected = value[2] ?? '';
      continue;
    }
    const check = CHECK_LINE.exec(text);
    if (check && call !== null && check[1] === call.index && check[2] === call.index) {
      inThrow = true;
      continue;
    }
    return wrong(line);
  }
  if (block.length > 0) return { ok: false, reason: 'the test script ends inside an assert' };
  return { ok: true, header: lines.slice(0, first).join('\n'), asserts };
}
