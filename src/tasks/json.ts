// JSON values as the sandbox sees them: the host compares a program's JSON result with the
// expected value, so anything JSON cannot carry unchanged is refused up front.
import type { JsonValue } from './types';

/** Why `value` is not a JSON value that round-trips unchanged, or null if it is. */
export function jsonProblem(value: unknown, depth = 0): string | null {
  if (depth > 64) return 'nested too deeply';
  if (value === null || typeof value === 'boolean' || typeof value === 'string') return null;
  if (typeof value === 'number') {
    if (!Number.isFinite(value)) return `${value} is not representable in JSON`;
    if (Object.is(value, -0)) return '-0 does not survive JSON (it reads back as 0)';
    return null;
  }
  if (Array.isArray(value)) {
    for (let i = 0; i < value.length; i++) {
      const problem = jsonProblem(value[i], depth + 1);
      if (problem) return `[${i}]: ${problem}`;
    }
    return null;
  }
  if (typeof value === 'object') {
    const proto = Object.getPrototypeOf(value);
    if (proto !== Object.prototype && proto !== null) return 'not a plain object';
    for (const [key, item] of Object.entries(value)) {
      const problem = jsonProblem(item, depth + 1);
      if (problem) return `.${key}: ${problem}`;
    }
    return null;
  }
  return `${typeof value} is not representable in JSON`;
}

export function isJsonValue(value: unknown): value is JsonValue {
  return jsonProblem(value) === null;
}

/** Structural equality of two JSON values (object key order ignored). */
export function jsonEqual(a: unknown, b: unknown): boolean {
  if (a === b) return true;
  if (typeof a !== typeof b || a === null || b === null || typeof a !== 'object') return false;
  if (Array.isArray(a) !== Array.isArray(b)) return false;
  if (Array.isArray(a) && Array.isArray(b)) {
    return a.length === b.length && a.every((item, i) => jsonEqual(item, b[i]));
  }
  const ak = Object.keys(a as object);
  const bo = b as Record<string, unknown>;
  return (
    ak.length === Object.keys(bo).length &&
    ak.every((k) => k in bo && jsonEqual((a as Record<string, unknown>)[k], bo[k]))
  );
}
