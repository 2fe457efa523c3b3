// The shim library: plain JavaScript evaluated in a fresh context BEFORE user code. It captures
// pristine intrinsics in a closure and returns assert, lodash.isEqual and a JSON whose stringify
// ignores toJSON. Nothing here relies on prototype methods at call time, so a program that
// poisons Array.prototype, Object.prototype.toJSON, JSON.stringify or Object.is cannot change how
// the shims compare values. The same source runs in Node's `vm` for the parity reference.
// (console and require are host functions: see hostShims.ts. Compiling JS costs ~0.08 ms/KB.)

/** The message of a refused require(); the same in the sandbox and the Node reference. */
export function refusalMessage(name: string): string {
  return `Cannot find module '${name}': the sandbox provides only 'assert' and 'lodash'`;
}

/** Module names require() answers, and which library export each one gets. */
export const MODULES: Record<string, 'assert' | 'lodash'> = {
  assert: 'assert',
  'node:assert': 'assert',
  'assert/strict': 'assert',
  'node:assert/strict': 'assert',
  lodash: 'lodash',
};

// The library: evaluated before user code, only for jobs that can use the modules (script
// jobs, or programs that mention require), since compiling it costs ~0.5 ms per context.
// It returns { assert, lodash, JSON } for the host to hand out.
export const LIBRARY_SOURCE = `(function () {
  'use strict';
  var O = Object, A = Array, R = Reflect;
  var apply = R.apply, keys = O.keys, isArray = A.isArray, freeze = O.freeze;
  var defineProperty = O.defineProperty, getProto = O.getPrototypeOf, gOPD = O.getOwnPropertyDescriptor, is = O.is;
  var hasOwnM = O.prototype.hasOwnProperty, objToString = O.prototype.toString;
  var propIsEnum = O.prototype.propertyIsEnumerable;
  var jsonStringify = JSON.stringify, jsonParse = JSON.parse;
  var dateGetTime = Date.prototype.getTime;
  var numValueOf = Number.prototype.valueOf, strValueOf = String.prototype.valueOf;
  var boolValueOf = Boolean.prototype.valueOf;
  var mapForEach = Map.prototype.forEach, setForEach = Set.prototype.forEach;
  var mapSize = gOPD(Map.prototype, 'size').get, setSize = gOPD(Set.prototype, 'size').get;
  var reSource = gOPD(RegExp.prototype, 'source').get, reFlags = gOPD(RegExp.prototype, 'flags').get;
  var strSlice = String.prototype.slice, dateToISO = Date.prototype.toISOString;
  var ErrorC = Error, TypeErrorC = TypeError, RangeErrorC = RangeError, isFiniteF = isFinite;
  var TOO_LARGE = freeze({ tooLarge: true });
  function hasOwn(o, k) { return apply(hasOwnM, o, [k]); }
  function tag(v) { return apply(objToString, v, []); }
  function tryUnbox(fn, v) { try { return { v: apply(fn, v, []) }; } catch (e) { return null; } }
  function onStack(list, v) { for (; list; list = list.up) if (list.v === v) return true; return false; }

  // JSON text of v without consulting toJSON, prototypes or user replacers; undefined when v
  // has no JSON form. Throws TOO_LARGE past 'limit' characters.
  function serialize(v, limit) {
    var out = '';
    function emit(s) { out += s; if (out.length > limit) throw TOO_LARGE; }
    function write(v, parents, depth) {
      if (v === null) return emit('null'), true;
      var t = typeof v;
      if (t === 'boolean') return emit(v ? 'true' : 'false'), true;
      if (t === 'number') return emit(isFiniteF(v) ? '' + v : 'null'), true;
      if (t === 'string') { if (v.length > limit) throw TOO_LARGE; return emit(jsonStringify(v)), true; }
      if (t === 'bigint') throw new TypeErrorC('Do not know how to serialize a BigInt');
      if (t !== 'object') return false;
      if (depth > 1000) throw new RangeErrorC('result nested too deeply');
      if (onStack(parents, v)) throw new TypeErrorC('Converting circular structure to JSON');
      var boxed = tryUnbox(numValueOf, v) || tryUnbox(strValueOf, v) || tryUnbox(boolValueOf, v);
      if (boxed) return write(boxed.v, parents, depth);
      var time = tryUnbox(dateGetTime, v);
      if (time) return emit(isFiniteF(time.v) ? jsonStringify(apply(dateToISO, v, [])) : 'null'), true;
      var up = { v: v, up: parents };
      if (isArray(v)) {
        emit('[');
        for (var i = 0, n = v.length; i < n; i++) {
          if (i) emit(',');
          if (!write(v[i], up, depth + 1)) emit('null');
        }
        emit(']');
        return true;
      }
      emit('{');
      var ks = keys(v), first = true;
      for (var j = 0; j < ks.length; j++) {
        var k = ks[j], item = v[k], mark = out.length;
        emit((first ? '' : ',') + jsonStringify(k) + ':');
        if (write(item, up, depth + 1)) first = false; else out = apply(strSlice, out, [0, mark]);
      }
      emit('}');
      return true;
    }
    return write(v, null, 0) ? out : undefined;
  }


  // Deep equality in three modes: 'lodash' (_.isEqual), 'loose' (assert.deepEqual),
  // 'strict' (assert.deepStrictEqual). Reads only own properties of the two values.
  function deepEqual(a, b, mode, pairs) {
    if (mode === 'strict' ? is(a, b) : a === b) return true;
    if (mode === 'lodash' && a !== a && b !== b) return true;
    var ta = typeof a, tb = typeof b;
    if (a === null || b === null || ta !== 'object' || tb !== 'object') {
      if (mode === 'loose' && ta !== 'object' && tb !== 'object' && ta !== 'function' && tb !== 'function') {
        return a == b || (a !== a && b !== b);
      }
      return false;
    }
    for (var p = pairs; p; p = p.up) if (p.a === a && p.b === b) return true;
    var up = { a: a, b: b, up: pairs };
    var tagA = tag(a), tagB = tag(b);
    if (tagA !== tagB) return false;
    if (mode === 'strict' && getProto(a) !== getProto(b)) return false;
    var ua = tryUnbox(numValueOf, a) || tryUnbox(strValueOf, a) || tryUnbox(boolValueOf, a);
    if (ua) { var ub = tryUnbox(numValueOf, b) || tryUnbox(strValueOf, b) || tryUnbox(boolValueOf, b); return !!ub && deepEqual(ua.v, ub.v, mode, up); }
    var da = tryUnbox(dateGetTime, a);
    if (da) { var db = tryUnbox(dateGetTime, b); return !!db && is(da.v, db.v); }
    if (tagA === '[object RegExp]') return apply(reSource, a, []) === apply(reSource, b, []) && apply(reFlags, a, []) === apply(reFlags, b, []);
    if (tagA === '[object Map]' || tagA === '[object Set]') {
      var isMap = tagA === '[object Map]', size = isMap ? mapSize : setSize;
      if (apply(size, a, []) !== apply(size, b, [])) return false;
      var ea = [], eb = [];
      var collect = function (list) { return function (v, k) { defineProperty(list, list.length, { value: isMap ? [k, v] : v, enumerable: true }); }; };
      apply(isMap ? mapForEach : setForEach, a, [collect(ea)]);
      apply(isMap ? mapForEach : setForEach, b, [collect(eb)]);
      return deepEqual(ea, eb, mode, up);
    }
    if (isArray(a) || apply(strSlice, tagA, [-6]) === 'Array]') {
      if (a.length !== b.length) return false;
      for (var i = 0; i < a.length; i++) if (!deepEqual(a[i], b[i], mode, up)) return false;
      if (!isArray(a)) return true;
    }
    var ka = keys(a), kb = keys(b);
    if (ka.length !== kb.length) return false;
    for (var j = 0; j < ka.length; j++) {
      var k = ka[j];
      if (!hasOwn(b, k) || !apply(propIsEnum, b, [k])) return false;
      if (!deepEqual(a[k], b[k], mode, up)) return false;
    }
    if (mode === 'lodash' && !isArray(a)) {
      var ca = a.constructor, cb = b.constructor;
      if (ca != cb && 'constructor' in a && 'constructor' in b &&
          !(typeof ca == 'function' && ca instanceof ca && typeof cb == 'function' && cb instanceof cb)) return false;
    }
    return true;
  }

  function fail(message, fallback) {
    var e = new ErrorC(typeof message === 'string' ? message : fallback);
    defineProperty(e, 'name', { value: 'AssertionError', configurable: true, writable: true });
    throw e;
  }
  function ok(v, m) { if (!v) fail(m, 'The expression evaluated to a falsy value'); }
  var assert = function assert(v, m) { ok(v, m); };
  var assertMethods = {
    ok: ok,
    equal: function (a, b, m) { if (!(a == b || (a !== a && b !== b))) fail(m, 'values are not loosely equal'); },
    notEqual: function (a, b, m) { if (a == b || (a !== a && b !== b)) fail(m, 'values are loosely equal'); },
    strictEqual: function (a, b, m) { if (!is(a, b)) fail(m, 'values are not strictly equal'); },
    notStrictEqual: function (a, b, m) { if (is(a, b)) fail(m, 'values are strictly equal'); },
    deepEqual: function (a, b, m) { if (!deepEqual(a, b, 'loose', null)) fail(m, 'values are not loosely deep-equal'); },
    notDeepEqual: function (a, b, m) { if (deepEqual(a, b, 'loose', null)) fail(m, 'values are loosely deep-equal'); },
    deepStrictEqual: function (a, b, m) { if (!deepEqual(a, b, 'strict', null)) fail(m, 'values are not strictly deep-equal'); },
    notDeepStrictEqual: function (a, b, m) { if (deepEqual(a, b, 'strict', null)) fail(m, 'values are strictly deep-equal'); },
    throws: function (fn, _e, m) { try { fn(); } catch (e) { return; } fail(m, 'Missing expected exception.'); },
    fail: function (m) { fail(m, 'Failed'); },
  };
  var names = keys(assertMethods);
  for (var i = 0; i < names.length; i++) defineProperty(assert, names[i], { value: freeze(assertMethods[names[i]]), enumerable: true });
  defineProperty(assert, 'strict', { value: assert, enumerable: true });
  freeze(assert);
  var lodash = freeze({ isEqual: freeze(function isEqual(a, b) { return deepEqual(a, b, 'lodash', null); }) });

  // Tests get this JSON: stringify ignores toJSON a program may have planted on prototypes.
  var safeJSON = freeze({
    parse: jsonParse,
    stringify: function (v, replacer, space) {
      if (replacer != null || space != null) return jsonStringify(v, replacer, space);
      return serialize(v, 1 / 0);
    },
  });

  return freeze({ assert: assert, lodash: lodash, JSON: safeJSON });
})()`;

/** Parameters a test script sees; they shadow whatever the program did to the globals. */
export const TEST_SCRIPT_PARAMS = ['require', 'console', 'JSON', 'module', 'exports'] as const;

/** Wraps a (trusted) test script as a function, the way Node wraps a CommonJS module. */
export function wrapTestScript(testScript: string): string {
  return `(function (${TEST_SCRIPT_PARAMS.join(', ')}) {\n${testScript}\n})`;
}
