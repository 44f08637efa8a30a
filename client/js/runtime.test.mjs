// Tests of the page's Runtime realm (runtime.mjs): the answers to
// runtime.command frames, the per-session handle tables, provisional
// handles and their release. The realm runs in this Node process (its
// global is Node's), with a recording `send`.

import test from 'node:test';
import assert from 'node:assert/strict';
import { Realm, SIDE_EFFECT_TEXT, MAX_PROPERTIES, anyNeedsHandles } from './runtime.mjs';
import { measureJSON, MAX_FRAME_OBJECTS, DEFAULT_LIMITS, consoleItemJSON } from './core.mjs';

const settle = async (n = 6) => { for (let i = 0; i < n; i++) await new Promise((r) => setImmediate(r)); };

/** @param {Partial<import('./runtime.mjs').RealmOptions>} [o] */
function setup(o = {}) {
  /** @type {any[]} */
  const results = [];
  const r = new Realm({
    send: (type, json) => {
      assert.equal(type, 'runtime.result');
      const m = measureJSON(json);
      assert.ok(m.bytes <= DEFAULT_LIMITS.maxFrameBytes && m.objects < MAX_FRAME_OBJECTS && m.maxString <= DEFAULT_LIMITS.maxStringBytes, 'within the frame limits');
      results.push(JSON.parse(json));
      return true;
    },
    ...o,
  });
  let next = 0;
  /**
   * Sends one command, waits for its answer; returns the method's member
   * (or {error}) and the id.
   * @param {string} method @param {any} params @param {string} [session]
   */
  const call = async (method, params, session = 's1') => {
    const id = ++next;
    r.handle('runtime.command', { session, id, method, [method]: params });
    await settle();
    // Answers that wait on a timer: poll, bounded (a hang detector, not a speed check).
    for (let t = 0; t < 200 && !results.some((x) => x.id === id && x.session === session); t++) await new Promise((res) => setTimeout(res, 10));
    const a = results.find((x) => x.id === id && x.session === session);
    assert.ok(a, method + ' answered');
    assert.equal(a.method, method);
    const keys = Object.keys(a).filter((k) => !['session', 'id', 'method'].includes(k));
    assert.equal(keys.length, 1, 'exactly one member: ' + keys.join(','));
    return { id, ...(a.error ? { error: a.error } : a[method]) };
  };
  /** @param {string} expression @param {any} [more] @param {string} [session] */
  const evaluate = (expression, more = {}, session) => call('evaluate', { expression, ...more }, session);
  const ack = (/** @type {number} */ id, /** @type {boolean} */ accepted, session = 's1') => r.handle('runtime.ack', { session, id, method: 'evaluate', accepted });
  return { r, results, call, evaluate, ack };
}

test('RemoteObject fidelity: every kind of value, as V8 describes it', async () => {
  const { evaluate, r } = setup();
  /** @type {any} */ (globalThis).Node = class Node {};
  class HTMLDivElement extends /** @type {any} */ (globalThis).Node {
    constructor() { super(); this.nodeType = 1; this.nodeName = 'DIV'; this.id = 'app'; this.className = 'card wide'; }
  }
  /** @type {any} */ (globalThis).__div = new HTMLDivElement();
  try {
    /** @type {Array<[string, any]>} */
    const table = [
      ['"hi"', { type: 'string', value: 'hi' }],
      ['1.5', { type: 'number', value: 1.5, description: '1.5' }],
      ['-0', { type: 'number', unserializableValue: '-0', description: '-0' }],
      ['NaN', { type: 'number', unserializableValue: 'NaN', description: 'NaN' }],
      ['Infinity', { type: 'number', unserializableValue: 'Infinity', description: 'Infinity' }],
      ['-Infinity', { type: 'number', unserializableValue: '-Infinity', description: '-Infinity' }],
      ['12n ** 20n', { type: 'bigint', unserializableValue: '3833759992447475122176n', description: '3833759992447475122176n' }],
      ['true', { type: 'boolean', value: true }],
      ['undefined', { type: 'undefined' }],
      ['null', { type: 'object', subtype: 'null' }],
      ['Symbol("s")', { type: 'symbol', description: 'Symbol(s)', handle: 'H' }],
      ['(function add(a, b) { return a + b; })', { type: 'function', className: 'Function', description: 'function add(a, b) { return a + b; }', handle: 'H' }],
      ['[1, "a"]', { type: 'object', subtype: 'array', className: 'Array', description: 'Array(2)', handle: 'H' }],
      ['new Float64Array(3)', { type: 'object', subtype: 'typedarray', className: 'Float64Array', description: 'Float64Array(3)', handle: 'H' }],
      ['new Map([[1, 2]])', { type: 'object', subtype: 'map', className: 'Map', description: 'Map(1)', handle: 'H' }],
      ['new Set([1, 2, 3])', { type: 'object', subtype: 'set', className: 'Set', description: 'Set(3)', handle: 'H' }],
      ['new Date(0)', { type: 'object', subtype: 'date', className: 'Date', description: new Date(0).toString(), handle: 'H' }],
      ['/a+b/gi', { type: 'object', subtype: 'regexp', className: 'RegExp', description: '/a+b/gi', handle: 'H' }],
      ['Promise.resolve(1)', { type: 'object', subtype: 'promise', className: 'Promise', description: 'Promise', handle: 'H' }],
      ['new (class Point { constructor() { this.x = 1; } })()', { type: 'object', className: 'Point', description: 'Point', handle: 'H' }],
      ['({ a: 1 })', { type: 'object', className: 'Object', description: 'Object', handle: 'H' }],
      ['__div', { type: 'object', subtype: 'node', className: 'HTMLDivElement', description: 'div#app.card.wide', handle: 'H' }],
    ];
    for (const [expr, want] of table) {
      const a = await evaluate(expr);
      assert.equal(a.exceptionDetails, undefined, expr);
      const got = { ...a.result };
      if (got.handle) { assert.match(got.handle, /^h:\d+$/); got.handle = 'H'; }
      assert.deepEqual(got, want, expr);
    }
    // An Error's description is its stack, as in V8.
    const e = await evaluate('new TypeError("bad")');
    assert.equal(e.result.subtype, 'error');
    assert.equal(e.result.className, 'TypeError');
    assert.match(e.result.description, /^TypeError: bad\n {4}at /);
    // Previews only on request.
    const p = await evaluate('({ id: 7, name: "x" })', { generatePreview: true });
    assert.deepEqual(p.result.preview, { type: 'object', description: 'Object', overflow: false,
      properties: [{ name: 'id', type: 'number', value: '7' }, { name: 'name', type: 'string', value: 'x' }] });
    // Primitives never hold a handle.
    assert.ok(r.stats().handles >= 12);
  } finally {
    delete /** @type {any} */ (globalThis).Node;
    delete /** @type {any} */ (globalThis).__div;
  }
});

test('evaluate: exceptions are answers with exceptionDetails; awaitPromise; returnByValue; throwOnSideEffect refused', async () => {
  const { evaluate } = setup();
  const x = await evaluate('1;\n  nope.x');
  assert.equal(x.result.subtype, 'error');
  assert.equal(x.result.className, 'ReferenceError');
  assert.equal(x.exceptionDetails.text, 'Uncaught');
  assert.equal(x.exceptionDetails.lineNumber, 1);
  assert.equal(x.exceptionDetails.columnNumber, 2);
  assert.equal(x.exceptionDetails.exception.className, 'ReferenceError');
  assert.match(x.exceptionDetails.exception.description, /^ReferenceError: nope is not defined/);
  assert.ok(x.exceptionDetails.exceptionId >= 1);

  const thrown = await evaluate('throw 42');
  assert.deepEqual(thrown.result, { type: 'number', value: 42, description: '42' });
  assert.equal(thrown.exceptionDetails.text, 'Uncaught');

  const syntax = await evaluate('}{');
  assert.equal(syntax.exceptionDetails.exception.className, 'SyntaxError');

  const ok = await evaluate('new Promise((r) => setTimeout(() => r("later"), 5))', { awaitPromise: true });
  assert.deepEqual(ok.result, { type: 'string', value: 'later' });
  const no = await evaluate('Promise.reject(new RangeError("r"))', { awaitPromise: true });
  assert.equal(no.exceptionDetails.text, 'Uncaught (in promise)');
  assert.equal(no.result.className, 'RangeError');
  // Without awaitPromise the promise itself is the result.
  const pr = await evaluate('Promise.resolve(3)');
  assert.equal(pr.result.subtype, 'promise');

  // The Console's top-level await.
  const tla = await evaluate('await Promise.resolve(5)', { replMode: true });
  assert.deepEqual(tla.result, { type: 'number', value: 5, description: '5' });

  const bv = await evaluate('({ a: [1, { b: "c" }], d: null })', { returnByValue: true });
  assert.deepEqual(bv.result, { type: 'object', value: { a: [1, { b: 'c' }], d: null } });
  const cyc = await evaluate('(() => { const o = {}; o.o = o; return o; })()', { returnByValue: true });
  assert.equal(cyc.error.code, 'invalid-argument');
  assert.match(cyc.error.message, /returned by value/);

  // Eager evaluation (throwOnSideEffect) runs nothing and says what V8 says.
  /** @type {any} */ (globalThis).__ran = 0;
  const se = await evaluate('__ran++', { throwOnSideEffect: true, timeout: 500 });
  assert.equal(/** @type {any} */ (globalThis).__ran, 0);
  assert.deepEqual(se.result, { type: 'object', subtype: 'error', className: 'EvalError', description: SIDE_EFFECT_TEXT });
  assert.equal(se.exceptionDetails.text, 'Uncaught');
  assert.deepEqual(se.exceptionDetails.exception, se.result);
  delete /** @type {any} */ (globalThis).__ran;
});

test('evaluate throwOnSideEffect: a property path is read (completions, eager preview); a user getter or a call refuses', async () => {
  const { evaluate } = setup();
  const g = /** @type {any} */ (globalThis);
  g.__iwPathProbe = { inner: { n: 7 } };
  let ran = 0;
  Object.defineProperty(g.__iwPathProbe, 'lazy', { get() { ran++; return 1; }, configurable: true });
  try {
    // What the frontend sends for global completions: an object with a handle.
    const gl = await evaluate('globalThis', { throwOnSideEffect: true, objectGroup: 'completion', replMode: true });
    assert.equal(gl.result.type, 'object');
    assert.ok(gl.result.handle, 'the global object has a handle');
    assert.equal(gl.exceptionDetails, undefined);
    const n = await evaluate('__iwPathProbe.inner["n"]', { throwOnSideEffect: true });
    assert.deepEqual(n.result, { type: 'number', value: 7, description: '7' });
    const s = await evaluate("'abc'.length", { throwOnSideEffect: true });
    assert.equal(s.result.value, 3);
    const lazy = await evaluate('__iwPathProbe.lazy', { throwOnSideEffect: true });
    assert.equal(lazy.result.description, SIDE_EFFECT_TEXT);
    assert.equal(ran, 0, 'a user getter never runs');
    const call = await evaluate('__iwPathProbe.toString()', { throwOnSideEffect: true });
    assert.equal(call.result.description, SIDE_EFFECT_TEXT);
    const undef = await evaluate('__iwPathProbe.none.x', { throwOnSideEffect: true });
    assert.match(undef.exceptionDetails.exception.description, /^TypeError: Cannot read properties of undefined \(reading 'x'\)/);
    const missing = await evaluate('__iwNoSuchName', { throwOnSideEffect: true });
    assert.match(missing.exceptionDetails.exception.description, /^ReferenceError: __iwNoSuchName is not defined/);
  } finally {
    delete g.__iwPathProbe;
  }
});

test('evaluate: includeCommandLineAPI installs $_ and keys for the call only; var declarations persist', async () => {
  const { evaluate } = setup();
  await evaluate('({ k1: 1, k2: 2 })', { includeCommandLineAPI: true });
  const k = await evaluate('keys($_)', { includeCommandLineAPI: true, returnByValue: true });
  assert.deepEqual(k.result.value, ['k1', 'k2']);
  assert.equal(typeof (/** @type {any} */ (globalThis).keys), 'undefined', 'removed afterwards');
  const without = await evaluate('typeof keys');
  assert.equal(without.result.value, 'undefined');
  await evaluate('var __persist = 9');
  const again = await evaluate('__persist');
  assert.equal(again.result.value, 9);
  delete /** @type {any} */ (globalThis).__persist;
});

test('evaluate: a page whose CSP forbids eval is a transport error that says so', async () => {
  const { evaluate } = setup({ evaluate: () => { throw new EvalError("Refused to evaluate a string as JavaScript because 'unsafe-eval' is not an allowed source"); } });
  const a = await evaluate('1 + 1');
  assert.equal(a.error.code, 'unsupported');
  assert.match(a.error.message, /Content-Security-Policy forbids eval/);
  // A page's own EvalError (eval works) is an exception, not a transport error.
  const b = await setup().evaluate('throw new EvalError("mine")');
  assert.equal(b.exceptionDetails.exception.className, 'EvalError');
});

test('getProperties: own, accessors, symbols, inherited, non-indexed; internal [[Prototype]], [[Entries]], [[PromiseState]]', async () => {
  const { evaluate, call } = setup();
  const o = await evaluate('(() => { class Base { get inherited() { return 1; } } class Child extends Base {} const c = new Child(); c.a = 1; Object.defineProperty(c, "g", { get() { return 2; }, enumerable: false, configurable: true }); c[Symbol("s")] = "sym"; return c; })()');
  const own = await call('getProperties', { handle: o.result.handle, ownProperties: true, generatePreview: true });
  assert.deepEqual(own.result.map((/** @type {any} */ d) => [d.name, d.isOwn, d.enumerable, 'value' in d ? d.value.type : 'accessor']),
    [['a', true, true, 'number'], ['g', true, false, 'accessor'], ['Symbol(s)', true, true, 'string']]);
  const g = own.result[1];
  assert.equal(g.get.type, 'function');
  assert.match(g.get.handle, /^h:/);
  assert.deepEqual(g.set, { type: 'undefined' });
  assert.equal(own.result[2].symbol.type, 'symbol');
  // V8 names a prototype object after its own prototype's constructor (Child.prototype shows as "Base").
  assert.deepEqual(own.internalProperties.map((/** @type {any} */ d) => [d.name, d.value.className]), [['[[Prototype]]', 'Base']]);
  // The prototype chain's accessors, as DevTools asks for them.
  const acc = await call('getProperties', { handle: o.result.handle, accessorPropertiesOnly: true });
  assert.ok(acc.result.some((/** @type {any} */ d) => d.name === 'inherited' && d.isOwn === false && d.get));
  assert.ok(acc.result.every((/** @type {any} */ d) => d.get || d.set));
  assert.equal(acc.internalProperties, undefined);

  const arr = await evaluate('Object.assign([1, 2, 3], { extra: true })');
  const ni = await call('getProperties', { handle: arr.result.handle, ownProperties: true, nonIndexedPropertiesOnly: true });
  assert.deepEqual(ni.result.map((/** @type {any} */ d) => d.name), ['length', 'extra']);

  const map = await evaluate('new Map([["k", { v: 1 }], [2, "two"]])');
  const mp = await call('getProperties', { handle: map.result.handle, ownProperties: true });
  const entries = mp.internalProperties.find((/** @type {any} */ d) => d.name === '[[Entries]]');
  assert.equal(entries.value.description, 'Array(2)');
  const ep = await call('getProperties', { handle: entries.value.handle, ownProperties: true, nonIndexedPropertiesOnly: false, generatePreview: true });
  assert.deepEqual(ep.result[0].value.preview.properties, [{ name: 'key', type: 'string', value: 'k' }, { name: 'value', type: 'object', value: 'Object' }]);
  const set = await evaluate('new Set(["x"])');
  const sp = await call('getProperties', { handle: set.result.handle, ownProperties: true });
  assert.equal(sp.internalProperties[0].name, '[[Entries]]');
  assert.equal(sp.internalProperties[0].value.description, 'Array(1)');

  for (const [expr, state, res] of [['Promise.resolve(7)', 'fulfilled', 7], ['new Promise(() => {})', 'pending', undefined], ['(() => { const p = Promise.reject(8); p.catch(() => {}); return p; })()', 'rejected', 8]]) {
    const p = await evaluate(/** @type {string} */ (expr));
    const pp = await call('getProperties', { handle: p.result.handle, ownProperties: true });
    const names = pp.internalProperties.map((/** @type {any} */ d) => d.name);
    assert.deepEqual(pp.internalProperties.find((/** @type {any} */ d) => d.name === '[[PromiseState]]').value, { type: 'string', value: state }, String(expr));
    if (res === undefined) assert.ok(!names.includes('[[PromiseResult]]'));
    else assert.equal(pp.internalProperties.find((/** @type {any} */ d) => d.name === '[[PromiseResult]]').value.value, res);
    assert.ok(names.includes('[[Prototype]]'));
  }

  const wrapped = await evaluate('new Number(3)');
  const wp = await call('getProperties', { handle: wrapped.result.handle, ownProperties: true });
  assert.deepEqual(wp.internalProperties[0], { name: '[[PrimitiveValue]]', value: { type: 'number', value: 3, description: '3' } });
});

test('getProperties: at most MaxProperties, and an answer too big for a frame sheds previews, then descriptors', async () => {
  const { evaluate, call } = setup();
  const big = await evaluate('(() => { const o = {}; for (let i = 0; i < 10000; i++) o["p" + i] = { i, s: "x".repeat(20), n: { m: 1 } }; return o; })()');
  const a = await call('getProperties', { handle: big.result.handle, ownProperties: true, generatePreview: true });
  assert.ok(a.result.length + (a.internalProperties || []).length <= MAX_PROPERTIES);
  assert.ok(a.result.length >= 2048, 'kept ' + a.result.length);
  assert.ok(a.result.every((/** @type {any} */ d) => !d.value.preview), 'previews shed first');
});

test('callFunctionOn: receiver handle, arguments by value, unserializable and handle; a foreign session handle is refused', async () => {
  const { evaluate, call } = setup();
  const recv = await evaluate('({ base: 10 })');
  const other = await evaluate('({ w: 5 })');
  const a = await call('callFunctionOn', {
    functionDeclaration: 'function (n, u, big, o, nul, none) { return [this.base + n, Object.is(u, -0), typeof big, big.toString(), o.w, nul, none]; }',
    handle: recv.result.handle,
    arguments: [{ value: 1 }, { unserializableValue: '-0' }, { unserializableValue: '12n' }, { handle: other.result.handle }, { value: null }, {}],
    returnByValue: true,
  });
  assert.deepEqual(a.result.value, [11, true, 'bigint', '12', 5, null, null]);
  const nan = await call('callFunctionOn', { functionDeclaration: '(x) => x', arguments: [{ unserializableValue: 'NaN' }] });
  assert.deepEqual(nan.result, { type: 'number', unserializableValue: 'NaN', description: 'NaN' });
  // In the realm (no handle): `this` is the global object.
  const g = await call('callFunctionOn', { functionDeclaration: 'function () { return this === globalThis; }' });
  assert.equal(g.result.value, true);
  // An exception in the function is an answer.
  const t = await call('callFunctionOn', { functionDeclaration: 'function () { throw new Error("in fn"); }', handle: recv.result.handle });
  assert.equal(t.exceptionDetails.exception.className, 'Error');
  // awaitPromise.
  const w = await call('callFunctionOn', { functionDeclaration: 'async function () { return this.base * 2; }', handle: recv.result.handle, awaitPromise: true });
  assert.equal(w.result.value, 20);
  // Session s2 cannot use s1's handles, as receiver or argument.
  const f1 = await call('callFunctionOn', { functionDeclaration: 'function () { return 1; }', handle: recv.result.handle }, 's2');
  assert.equal(f1.error.code, 'no-such-handle');
  assert.match(f1.error.message, /another DevTools session/);
  const f2 = await call('callFunctionOn', { functionDeclaration: '(x) => x', arguments: [{ handle: recv.result.handle }] }, 's2');
  assert.equal(f2.error.code, 'no-such-handle');
  const gone = await call('getProperties', { handle: 'h:999999', ownProperties: true });
  assert.equal(gone.error.code, 'no-such-handle');
  const bad = await call('callFunctionOn', { functionDeclaration: '42' });
  assert.equal(bad.error.code, 'invalid-argument');
  const badU = await call('callFunctionOn', { functionDeclaration: '(x) => x', arguments: [{ unserializableValue: 'Infinityy' }] });
  assert.equal(badU.error.code, 'invalid-argument');
});

test('awaitPromise on a handle; globalLexicalScopeNames; unknown methods', async () => {
  const { evaluate, call } = setup();
  const p = await evaluate('new Promise((r) => setTimeout(() => r({ done: true }), 5))');
  const a = await call('awaitPromise', { handle: p.result.handle, returnByValue: true });
  await settle(10);
  assert.deepEqual(a.result, { type: 'object', value: { done: true } });
  const n = await call('globalLexicalScopeNames', {});
  assert.deepEqual(n, { id: n.id, names: [] });
});

test('provisional handles: freed on ack{accepted:false}, kept on ack{accepted:true} until released', async () => {
  const { evaluate, ack, call, r } = setup();
  const a = await evaluate('({ x: 1 })');
  assert.equal(r.stats().provisional, 1);
  ack(a.id, false);
  assert.deepEqual([r.stats().handles, r.stats().provisional, r.stats().awaitingAck], [0, 0, 0]);
  const gone = await call('getProperties', { handle: a.result.handle, ownProperties: true });
  assert.equal(gone.error.code, 'no-such-handle');

  const b = await evaluate('({ y: 2 })', { objectGroup: 'g1' });
  ack(b.id, true);
  assert.deepEqual([r.stats().handles, r.stats().provisional], [1, 0]);
  const rel = await call('releaseObjectGroup', { objectGroup: 'g1' });
  assert.deepEqual(rel, { id: rel.id });
  assert.equal(r.stats().handles, 0);
});

test('runtime.cancel: a running command is answered "cancelled" once, and what it makes later is freed', async () => {
  const { r, results } = setup();
  /** @type {any} */ (globalThis).__release = null;
  r.handle('runtime.command', { session: 's1', id: 1, method: 'evaluate', evaluate: { expression: 'new Promise((res) => { __release = res; })', awaitPromise: true } });
  await settle();
  assert.equal(results.length, 0);
  r.handle('runtime.cancel', { session: 's1', id: 1, method: 'evaluate' });
  assert.deepEqual(results.map((x) => x.error), [{ code: 'cancelled', message: 'cancelled by the worker' }]);
  /** @type {any} */ (globalThis).__release({ late: true });
  await settle();
  assert.equal(results.length, 1, 'answered exactly once');
  assert.deepEqual([r.stats().handles, r.stats().running, r.stats().awaitingAck], [0, 0, 0]);
  // A cancel after the answer (the worker's deadline passed while the
  // page was busy) frees the answer's handles; so does the ack that follows.
  r.handle('runtime.command', { session: 's1', id: 2, method: 'evaluate', evaluate: { expression: '(() => { const t = Date.now(); while (Date.now() - t < 30); return { busy: true }; })()' } });
  r.handle('runtime.cancel', { session: 's1', id: 2, method: 'evaluate' });
  r.handle('runtime.ack', { session: 's1', id: 2, method: 'evaluate', accepted: false });
  assert.equal(results.length, 2);
  assert.equal(results[1].evaluate.result.className, 'Object');
  assert.equal(r.stats().handles, 0);
  delete /** @type {any} */ (globalThis).__release;
});

test('an infinite loop cannot be aborted by the page: the worker answers DevTools; the late result is nacked and freed', async () => {
  // The page is single-threaded: a runtime.cancel for a command stuck in
  // `while (true)` cannot run until the loop ends. What the realm
  // guarantees is the aftermath, shown here with a loop that ends: the
  // late answer's handles go away with the nack.
  const { r, results } = setup();
  r.handle('runtime.command', { session: 's1', id: 9, method: 'evaluate', evaluate: { expression: '(() => { let i = 0; while (i < 3e6) i++; return [i]; })()' } });
  assert.equal(results.length, 1);
  assert.equal(r.stats().provisional, 1);
  r.handle('runtime.ack', { session: 's1', id: 9, method: 'evaluate', accepted: false });
  assert.equal(r.stats().handles, 0);
});

test('10,000 evaluate + ack + releaseObject cycles and 10,000 grouped ones leave no handle', async () => {
  const { r, results } = setup();
  for (let i = 1; i <= 10000; i++) {
    r.handle('runtime.command', { session: 's1', id: i, method: 'evaluate', evaluate: { expression: '({ i: ' + i + ' })', objectGroup: 'g' + (i % 7) } });
    const h = results[results.length - 1].evaluate.result.handle;
    r.handle('runtime.ack', { session: 's1', id: i, method: 'evaluate', accepted: true });
    if (i % 2) r.handle('runtime.command', { session: 's1', id: 100000 + i, method: 'releaseObject', releaseObject: { handle: h } });
  }
  assert.equal(r.stats().handles, 5000);
  for (let g = 0; g < 7; g++) r.handle('runtime.command', { session: 's1', id: 200000 + g, method: 'releaseObjectGroup', releaseObjectGroup: { objectGroup: 'g' + g } });
  assert.deepEqual([r.stats().handles, r.stats().provisional, r.stats().awaitingAck, r.stats().running], [0, 0, 0, 0]);
  assert.equal(r.sessions.size, 0);
});

test('an answer waiting for its ack is never freed by the page, however many wait: 10,000 answers, acked late, all stay usable', async () => {
  // The worker may have mapped an answer's handles for a window before its
  // ack reaches the page; freeing the oldest unacked answers (the page did,
  // past 4,096) killed objects the window held. The worker's window of
  // commands in flight bounds how many wait; the page frees none.
  const { r, results } = setup();
  const n = 10000;
  for (let i = 1; i <= n; i++) r.handle('runtime.command', { session: 's1', id: i, method: 'evaluate', evaluate: { expression: '({ i: ' + i + ' })' } });
  assert.equal(results.length, n);
  assert.deepEqual([r.stats().provisional, r.stats().awaitingAck, r.stats().freedUnacked], [n, n, 0]);
  for (let i = 1; i <= n; i++) r.handle('runtime.ack', { session: 's1', id: i, method: 'evaluate', accepted: true });
  let dead = 0;
  for (let i = 1; i <= n; i++) {
    r.handle('runtime.command', { session: 's1', id: n + i, method: 'getProperties', getProperties: { handle: results[i - 1].evaluate.result.handle, ownProperties: true } });
    if (results[results.length - 1].error) dead++;
  }
  assert.equal(dead, 0, dead + ' of ' + n + ' answers were freed before their ack');
  assert.deepEqual([r.stats().awaitingAck, r.stats().freedUnacked], [n, 0], 'getProperties answers wait for their own acks');
});

test('handles per session are bounded: beyond the bound values are described without a handle', async () => {
  const { evaluate, r } = setup({ maxHandles: 3 });
  const got = [];
  for (let i = 0; i < 5; i++) got.push((await evaluate('({})')).result);
  assert.deepEqual(got.map((x) => !!x.handle), [true, true, true, false, false]);
  assert.deepEqual(got[4], { type: 'object', className: 'Object', description: 'Object' });
  assert.equal(r.stats().noHandle, 2);
  // Another session has its own table.
  assert.ok((await evaluate('({})', {}, 's2')).result.handle);
});

test('console handles: per session console group; discard/disable release only that session', async () => {
  const { r, call } = setup();
  const obj = { a: 1 };
  const item = (/** @type {string} */ s) => JSON.parse(consoleItemJSON('log', ['user', obj], { session: s, handles: r.consoleHandles(s), timestamp: 1 })).console;
  const e1 = item('s1');
  const e2 = item('s2');
  assert.equal(e1.session, 's1');
  assert.equal(e2.session, 's2');
  assert.match(e1.args[1].handle, /^h:/);
  assert.notEqual(e1.args[1].handle, e2.args[1].handle);
  assert.deepEqual(e1.args[0], { type: 'string', value: 'user' });
  // The handle expands like any other, in its own session only.
  const p = await call('getProperties', { handle: e1.args[1].handle, ownProperties: true });
  assert.equal(p.result[0].name, 'a');
  const f = await call('getProperties', { handle: e1.args[1].handle, ownProperties: true }, 's2');
  assert.equal(f.error.code, 'no-such-handle');
  r.handle('runtime.ack', { session: 's1', id: p.id, method: 'getProperties', accepted: false });
  assert.deepEqual(r.stats().perSession, { s1: 1, s2: 1 });
  r.handle('console.discard', { session: 's1' });
  assert.deepEqual(r.stats().perSession, { s2: 1 });
  r.handle('console.disable', { session: 's2' });
  assert.equal(r.stats().handles, 0);
  // Only objects, functions and symbols need handles (typeof only).
  assert.equal(anyNeedsHandles(['a', 1, null, undefined, 2n]), false);
  assert.equal(anyNeedsHandles(['a', {}]), true);
  assert.equal(anyNeedsHandles([Symbol('s')]), true);
});

test('a new generation (reset) drops every handle and makes running commands answer nothing', async () => {
  const { r, results } = setup();
  r.handle('runtime.command', { session: 's1', id: 1, method: 'evaluate', evaluate: { expression: '({})' } });
  r.handle('runtime.command', { session: 's1', id: 2, method: 'evaluate', evaluate: { expression: 'new Promise((res) => setTimeout(() => res({}), 5))', awaitPromise: true } });
  r.reset();
  await new Promise((res) => setTimeout(res, 20));
  assert.equal(results.length, 1);
  assert.deepEqual([r.stats().handles, r.stats().running, r.stats().awaitingAck], [0, 0, 0]);
});

test('malformed commands are answered with an error, never thrown', async () => {
  const { r, results } = setup();
  r.handle('runtime.command', { session: 's1', id: 1, method: 'evaluate' });
  r.handle('runtime.command', { session: 's1', id: 2, method: 'compileScript', compileScript: {} });
  r.handle('runtime.command', { session: 's1', id: 3, method: 'evaluate', evaluate: { expression: 5 } });
  r.handle('runtime.command', null);
  assert.deepEqual(results.map((x) => [x.id, x.error.code]), [[1, 'invalid-argument'], [2, 'unsupported'], [3, 'invalid-argument']]);
});

test('an exception\'s description leaves out the agent\'s own frames; the error object keeps them', async () => {
  // This test file plays the agent: its frames are "own".
  const here = new URL(import.meta.url).href;
  const { evaluate } = setup({ isOwn: (f) => f.url === here });
  const x = await evaluate('globalThis.__lastErr = new Error("boom"); throw globalThis.__lastErr');
  const desc = x.exceptionDetails.exception.description;
  assert.match(desc, /^Error: boom/);
  assert.ok(!desc.includes(here), 'no own frame in: ' + desc);
  assert.ok(/** @type {any} */ (globalThis).__lastErr.stack.includes(here), 'the error object is untouched');
  delete /** @type {any} */ (globalThis).__lastErr;
});

test('an evaluation\'s own code shows as "<anonymous>:L:C", as V8 shows it in Chrome', async () => {
  const agent = new URL('./runtime.mjs', import.meta.url).href;
  const { evaluate } = setup({ isOwn: (f) => f.url === agent });
  const x = await evaluate('missingThing.x');
  assert.equal(x.exceptionDetails.exception.description, 'ReferenceError: missingThing is not defined\n    at <anonymous>:1:1');
  const y = await evaluate('function boom() { throw new Error("b"); }\nboom()');
  assert.equal(y.exceptionDetails.exception.description, 'Error: b\n    at boom (<anonymous>:1:25)\n    at <anonymous>:2:1');
});
