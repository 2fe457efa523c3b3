// console, require, module and exports for a fresh context, made of host functions rather than
// compiled JavaScript (creating them costs a few FFI calls; compiling a JS prelude cost ~0.1 ms
// per context). They hold no state a program could reach: the refused module name lives here.
import type { QuickJSContext, QuickJSHandle } from 'quickjs-emscripten';
import { MODULES, refusalMessage } from './prelude';

export interface HostShims {
  require: QuickJSHandle;
  console: QuickJSHandle;
  module: QuickJSHandle;
  exports: QuickJSHandle;
  /** The last module name require() refused, if any. */
  refused(): string | null;
  /** Hands assert/lodash (from the library prelude) to require(). */
  setModules(modules: { assert: QuickJSHandle; lodash: QuickJSHandle }): void;
  /** Every handle created here, for the owner to dispose. */
  handles: QuickJSHandle[];
}

const CONSOLE_METHODS = ['log', 'info', 'warn', 'error', 'debug', 'trace'];

/** Installs the shims as globals (a program may overwrite them; tests get the originals). */
export function installHostShims(context: QuickJSContext, freeze: QuickJSHandle): HostShims {
  let refused: string | null = null;
  let modules: { assert: QuickJSHandle; lodash: QuickJSHandle } | null = null;
  const handles: QuickJSHandle[] = [];
  const own = (handle: QuickJSHandle) => {
    handles.push(handle);
    return handle;
  };

  const require = own(
    context.newFunction('require', (nameHandle) => {
      const name =
        nameHandle && context.typeof(nameHandle) === 'string'
          ? context.getString(nameHandle)
          : null;
      const which = name === null ? undefined : MODULES[name];
      if (which && modules) return modules[which].dup();
      refused = name ?? '(non-string)';
      return { error: context.newError({ name: 'Error', message: refusalMessage(refused) }) };
    }),
  );

  const console = own(context.newObject());
  const noop = own(context.newFunction('log', () => undefined));
  for (const method of CONSOLE_METHODS) context.setProp(console, method, noop);
  // Throws (Node's only prints) so that HumanEval-X style tests can fail.
  const assert = own(
    context.newFunction('assert', (condition) => {
      if (condition && isTruthy(context, condition)) return undefined;
      return {
        error: context.newError({ name: 'AssertionError', message: 'console.assert failed' }),
      };
    }),
  );
  context.setProp(console, 'assert', assert);
  context.callFunction(freeze, context.undefined, console).unwrap().dispose();

  const module = own(context.newObject());
  const exports = own(context.newObject());
  context.setProp(module, 'exports', exports);
  for (const [name, value] of [
    ['require', require],
    ['console', console],
    ['module', module],
    ['exports', exports],
  ] as const) {
    context.setProp(context.global, name, value);
  }

  return {
    require,
    console,
    module,
    exports,
    handles,
    refused: () => refused,
    setModules: (given) => {
      modules ??= given;
    },
  };
}

/** JavaScript truthiness of a value, decided on the host (no user code can run). */
function isTruthy(context: QuickJSContext, value: QuickJSHandle): boolean {
  switch (context.typeof(value)) {
    case 'undefined':
      return false;
    case 'boolean':
      return context.sameValue(value, context.true);
    case 'number': {
      const n = context.getNumber(value);
      return n !== 0 && !Number.isNaN(n);
    }
    case 'string':
      return context.getString(value).length > 0;
    case 'bigint':
      return context.getBigInt(value) !== 0n;
    case 'object':
      return !context.sameValue(value, context.null);
    default:
      return true;
  }
}
