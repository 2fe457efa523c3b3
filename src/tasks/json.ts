// JSON values as the sandbox sees them: the host compares a program's JSON result with the
// expected value, so anything JSON cannot carry unchanged is refused up front.

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
