// Reads one JavaScript literal (what MBXP's tests assign: `var v0 = [4, 5];`) as a JSON value,
// without evaluating anything. Accepted: numbers (sign, decimals, exponents, hex), strings in
// single or double quotes with JavaScript's escapes, arrays, objects with quoted, identifier or
// numeric keys, true, false, null. Anything else (`new Set(...)`, `undefined`, NaN, Infinity,
// -0, a call, a variable) has no JSON form the host could compare: the caller drops that
// assert, and says why.
import type { JsonValue } from '../types';

export type LiteralResult = { ok: true; value: JsonValue } | { ok: false; reason: string };

class NotJson extends Error {}

export function parseLiteral(source: string): LiteralResult {
  const reader = new Reader(source);
  try {
    reader.space();
    const value = reader.value(0);
    reader.space();
    if (!reader.done()) reader.fail(`unexpected ${JSON.stringify(reader.rest(12))}`);
    return { ok: true, value };
  } catch (error) {
    if (error instanceof NotJson) return { ok: false, reason: error.message };
    throw error;
  }
}

const MAX_DEPTH = 200;
const IDENTIFIER = /[A-Za-z_$][\w$]*/y;
const NUMBER = /(?:0[xX][0-9a-fA-F]+|0[oO][0-7]+|0[bB][01]+|(?:\d+\.?\d*|\.\d+)(?:[eE][+-]?\d+)?)/y;
const SIMPLE_ESCAPES: Record<string, string> = {
  n: '\n',
  t: '\t',
  r: '\r',
  b: '\b',
  f: '\f',
  v: '\v',
  '0': '\0',
};

class Reader {
  private at = 0;

  constructor(private readonly text: string) {}

  done(): boolean {
    return this.at >= this.text.length;
  }

  rest(length: number): string {
    return this.text.slice(this.at, this.at + length);
  }

  fail(message: string): never {
    throw new NotJson(`${message} at character ${this.at}`);
  }

  space(): void {
    while (this.at < this.text.length && /\s/.test(this.text[this.at] ?? '')) this.at++;
  }

  private eat(char: string): boolean {
    this.space();
    if (this.text[this.at] !== char) return false;
    this.at++;
    return true;
  }

  value(depth: number): JsonValue {
    if (depth > MAX_DEPTH) this.fail('nested too deeply');
    this.space();
    const ch = this.text[this.at];
    if (ch === '[') return this.array(depth);
    if (ch === '{') return this.object(depth);
    if (ch === '"' || ch === "'") return this.string();
    if (ch === '-' || ch === '+' || (ch !== undefined && /[\d.]/.test(ch))) return this.number();
    const word = this.identifier();
    if (word === 'true') return true;
    if (word === 'false') return false;
    if (word === 'null') return null;
    return this.fail(word ? `"${word}" has no JSON form` : 'expected a value');
  }

  private identifier(): string {
    IDENTIFIER.lastIndex = this.at;
    const match = IDENTIFIER.exec(this.text);
    if (!match) return '';
    this.at += match[0].length;
    return match[0];
  }

  private number(): number {
    let sign = 1;
    if (this.text[this.at] === '-' || this.text[this.at] === '+') {
      if (this.text[this.at] === '-') sign = -1;
      this.at++;
      this.space();
    }
    NUMBER.lastIndex = this.at;
    const match = NUMBER.exec(this.text);
    if (!match) {
      const word = this.identifier();
      return this.fail(word ? `"${word}" has no JSON form` : 'expected a number');
    }
    this.at += match[0].length;
    // A number glued to letters (`12abc`, `10n`) is not a literal we read.
    if (/[\w$]/.test(this.text[this.at] ?? '')) this.fail('a malformed number');
    const value = sign * Number(match[0]);
    if (!Number.isFinite(value)) this.fail(`${match[0]} is not finite`);
    // JSON cannot tell -0 from 0, JavaScript's isEqual can.
    if (Object.is(value, -0)) this.fail('-0 has no JSON form');
    return value;
  }

  private string(): string {
    const quote = this.text[this.at];
    this.at++;
    let out = '';
    for (;;) {
      const ch = this.text[this.at];
      if (ch === undefined || ch === '\n' || ch === '\r')
        return this.fail('an unterminated string');
      this.at++;
      if (ch === quote) return out;
      if (ch !== '\\') {
        out += ch;
        continue;
      }
      const next = this.text[this.at];
      if (next === undefined) return this.fail('an unterminated string');
      this.at++;
      if (next === 'x') out += String.fromCharCode(this.hex(2));
      else if (next === 'u') out += this.unicodeEscape();
      else if (next === '\n') {
        // A line continuation adds nothing.
      } else if (next === '0' && /\d/.test(this.text[this.at] ?? '')) {
        this.fail('an octal escape');
      } else if (/[1-9]/.test(next)) this.fail('an octal escape');
      else out += SIMPLE_ESCAPES[next] ?? next;
    }
  }

  private hex(digits: number): number {
    const text = this.text.slice(this.at, this.at + digits);
    if (!new RegExp(`^[0-9a-fA-F]{${digits}}$`).test(text)) this.fail('a malformed escape');
    this.at += digits;
    return Number.parseInt(text, 16);
  }

  private unicodeEscape(): string {
    if (this.text[this.at] !== '{') return String.fromCharCode(this.hex(4));
    const close = this.text.indexOf('}', this.at);
    const digits = close < 0 ? '' : this.text.slice(this.at + 1, close);
    if (!/^[0-9a-fA-F]{1,6}$/.test(digits) || Number.parseInt(digits, 16) > 0x10ffff) {
      this.fail('a malformed escape');
    }
    this.at = close + 1;
    return String.fromCodePoint(Number.parseInt(digits, 16));
  }

  private array(depth: number): JsonValue[] {
    this.at++;
    const items: JsonValue[] = [];
    for (;;) {
      if (this.eat(']')) return items;
      if (this.eat(',')) this.fail('an array hole has no JSON form');
      items.push(this.value(depth + 1));
      if (this.eat(']')) return items;
      if (!this.eat(',')) this.fail('expected , or ]');
    }
  }

  private object(depth: number): { [key: string]: JsonValue } {
    this.at++;
    const entries: [string, JsonValue][] = [];
    for (;;) {
      if (this.eat('}')) break;
      entries.push([this.key(), this.afterColon(depth)]);
      if (this.eat('}')) break;
      if (!this.eat(',')) this.fail('expected , or }');
    }
    // JavaScript keeps the last of repeated keys; integer-like keys come first in key order,
    // which only matters for printing (the host's comparison ignores key order).
    const result: { [key: string]: JsonValue } = {};
    for (const [key, value] of entries) {
      if (key === '__proto__') this.fail('a __proto__ key');
      result[key] = value;
    }
    return result;
  }

  private key(): string {
    this.space();
    const ch = this.text[this.at];
    if (ch === '"' || ch === "'") return this.string();
    if (ch === '[') this.fail('a computed key');
    if (ch !== undefined && /[\d.]/.test(ch)) return String(this.number());
    const word = this.identifier();
    if (!word) this.fail('expected a key');
    return word;
  }

  private afterColon(depth: number): JsonValue {
    if (!this.eat(':')) this.fail('expected :');
    return this.value(depth + 1);
  }
}
