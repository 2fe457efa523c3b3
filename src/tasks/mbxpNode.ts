// Node's own verdict on each assert of an MBXP task: the program and the test script run as
// ONE unit (as `node file.js` runs them, so a solution may use the script's helpers) in a
// fresh `vm` context with the sandbox's shims (require → assert / lodash.isEqual, a console
// whose assert throws), each assert wrapped so that a failing one does not stop the next.
// This is the reference the lab's harness (extracted function, host-compared JSON) must
// match on every shipped task. Trusted code only: the canonical solutions.
import vm from 'node:vm';
import { LIBRARY_SOURCE, MODULES, refusalMessage } from '../sandbox/prelude';
import type { MbxpCandidate } from './mbxp/parse';

const library = new vm.Script(LIBRARY_SOURCE);

/** A fresh context with the shims, and the `require` the unit gets. */
export function shimmedContext(): { context: vm.Context; require: (name: unknown) => unknown } {
  const context = vm.createContext({});
  const modules = library.runInContext(context) as Record<'assert' | 'lodash', unknown>;
  // The same behaviour as the sandbox's host shims (sandbox/hostShims.ts).
  const require = (name: unknown) => {
    const which = typeof name === 'string' ? MODULES[name] : undefined;
    if (which) return modules[which];
    throw new Error(refusalMessage(typeof name === 'string' ? name : '(non-string)'));
  };
  const noop = () => {};
  context.console = Object.freeze({
    log: noop,
    info: noop,
    warn: noop,
    error: noop,
    debug: noop,
    trace: noop,
    assert: (condition: unknown) => {
      if (!condition)
        throw Object.assign(new Error('console.assert failed'), { name: 'AssertionError' });
    },
  });
  return { context, require };
}

/**
 * Per assert (in the script's order): did it pass in Node? A program that does not load, or a
 * unit that runs past `timeoutMs`, fails every assert that had not passed by then.
 */
export function nodeAssertVerdicts(candidate: MbxpCandidate, timeoutMs = 5000): boolean[] {
  const verdicts = candidate.asserts.map(() => false);
  const { context, require } = shimmedContext();
  context.__verdict = (index: number) => {
    verdicts[index] = true;
  };
  const body = candidate.asserts
    .map((a, i) => `try {\n${a.source}\n__verdict(${i});\n} catch (__error) {}`)
    .join('\n');
  try {
    const unit = new vm.Script(
      `(function (require, module, exports) {\n${candidate.program}\n${candidate.header}\n${body}\n})`,
    );
    const fn = unit.runInContext(context, { timeout: timeoutMs }) as (...args: unknown[]) => void;
    const module = { exports: {} };
    context.__run = () => fn(require, module, module.exports);
    new vm.Script('__run()').runInContext(context, { timeout: timeoutMs });
  } catch {
    // Syntax error or timeout: what passed before stays passed.
  }
  return verdicts;
}
