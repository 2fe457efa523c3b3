// Reads a value out of QuickJS as JSON text by walking handles from the host. No JavaScript
// inside the VM decides the text: JSON.stringify, toJSON and prototypes a program redefined are
// never consulted (getters and proxies still run, inside the VM's limits, as a read would).
import type { QuickJSContext, QuickJSHandle } from 'quickjs-emscripten';

export class OutputTooLarge extends Error {}
export class NotSerializable extends Error {}
/** A getter, proxy trap or Array.isArray threw inside the VM while the result was read. */
export class ReadFailed extends Error {
  constructor(readonly error: QuickJSHandle) {
    super('reading the result threw');
  }
}

const MAX_DEPTH = 1000;

export interface MarshalOptions {
  /** Largest JSON text allowed, in characters. */
  limit: number;
  /** The context's own Array.isArray and Reflect.get, captured before user code ran. */
  isArray: QuickJSHandle;
  get: QuickJSHandle;
  /** Host time (Date.now) past which reading stops. */
  deadline: number;
}

/** JSON text of the value, or undefined when it has none (undefined, a function, a symbol). */
export function toJsonText(
  context: QuickJSContext,
  value: QuickJSHandle,
  options: MarshalOptions,
): string | undefined {
  const parts: string[] = [];
  let size = 0;
  let visited = 0;
  const emit = (text: string) => {
    size += text.length;
    if (size > options.limit) throw new OutputTooLarge(`result over ${options.limit} bytes`);
    parts.push(text);
  };

  // context.getProp cannot report an exception (it hands back a handle of type 'unknown'), so a
  // failed read is repeated through the pristine Reflect.get, which does report it.
  const read = (handle: QuickJSHandle, key: string | number): QuickJSHandle => {
    const item = context.getProp(handle, key);
    if (context.typeof(item) !== 'unknown') return item;
    item.dispose();
    const keyHandle = typeof key === 'number' ? context.newNumber(key) : context.newString(key);
    const retried = context.callFunction(options.get, context.undefined, handle, keyHandle);
    keyHandle.dispose();
    if (retried.error) throw new ReadFailed(retried.error);
    return retried.value;
  };

  /**
   * getString goes through a C string, which ends at the first NUL: a string holding "\0"
   * would read back cut short. Its length and its characters are the string's own (a program
   * cannot redefine them), so a string longer than what came back is read one character at
   * a time, each NUL restored.
   */
  const readString = (handle: QuickJSHandle): string => {
    const s = context.getString(handle);
    const length = context.getProp(handle, 'length').consume((h) => context.getNumber(h));
    if (length > options.limit) throw new OutputTooLarge(`result over ${options.limit} bytes`);
    if (length === s.length) return s;
    let whole = '';
    for (let i = 0; i < length; i++) {
      whole += context.getProp(handle, i).consume((h) => context.getString(h)) || '\0';
    }
    return whole;
  };

  const write = (handle: QuickJSHandle, depth: number): boolean => {
    if (++visited % 1024 === 0 && Date.now() > options.deadline)
      throw new NotSerializable('timeout');
    switch (context.typeof(handle)) {
      case 'number': {
        const n = context.getNumber(handle);
        emit(Number.isFinite(n) ? String(n) : 'null');
        return true;
      }
      case 'string': {
        const s = readString(handle);
        if (s.length > options.limit)
          throw new OutputTooLarge(`result over ${options.limit} bytes`);
        emit(JSON.stringify(s));
        return true;
      }
      case 'boolean':
        emit(context.sameValue(handle, context.true) ? 'true' : 'false');
        return true;
      case 'bigint':
        throw new NotSerializable('a BigInt has no JSON form');
      case 'object':
        if (context.sameValue(handle, context.null)) {
          emit('null');
          return true;
        }
        if (depth >= MAX_DEPTH) throw new NotSerializable('result nested too deeply (or circular)');
        writeObject(handle, depth);
        return true;
      default:
        return false;
    }
  };

  const writeObject = (handle: QuickJSHandle, depth: number) => {
    const isArray = context.callFunction(options.isArray, context.undefined, handle);
    if (isArray.error) throw new ReadFailed(isArray.error);
    const array = context.sameValue(isArray.value, context.true);
    isArray.value.dispose();
    if (array) {
      const lengthHandle = read(handle, 'length');
      const length =
        context.typeof(lengthHandle) === 'number' ? context.getNumber(lengthHandle) : 0;
      lengthHandle.dispose();
      emit('[');
      for (let i = 0; i < length; i++) {
        if (i > 0) emit(',');
        const item = read(handle, i);
        try {
          if (!write(item, depth + 1)) emit('null');
        } finally {
          item.dispose();
        }
      }
      emit(']');
      return;
    }
    const listed = context.getOwnPropertyNames(handle, {
      strings: true,
      numbersAsStrings: true,
      onlyEnumerable: true,
    });
    if (listed.error) throw new ReadFailed(listed.error);
    const names = listed.value;
    try {
      emit('{');
      let first = true;
      for (const name of names) {
        const key = context.getString(name);
        const item = read(handle, key);
        try {
          const mark = parts.length;
          emit(`${first ? '' : ','}${JSON.stringify(key)}:`);
          if (write(item, depth + 1)) first = false;
          else size -= parts.splice(mark).join('').length;
        } finally {
          item.dispose();
        }
      }
      emit('}');
    } finally {
      names.dispose();
    }
  };

  return write(value, 0) ? parts.join('') : undefined;
}
