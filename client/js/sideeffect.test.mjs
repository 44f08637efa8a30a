// Tests of the side-effect-free path reader (sideeffect.mjs).

import test from 'node:test';
import assert from 'node:assert/strict';
import { parsePath, evaluatePath, readProperty, SideEffect } from './sideeffect.mjs';

const indirect = (/** @type {string} */ code) => (0, eval)(code);

test('parsePath accepts property paths only', () => {
  assert.deepEqual(parsePath(' this '), { primary: { kind: 'this' }, steps: [] });
  assert.deepEqual(parsePath('a.b?.c[0]["d"]?.[\'e\']'), {
    primary: { kind: 'ident', name: 'a' },
    steps: [{ key: 'b', optional: false }, { key: 'c', optional: true }, { key: '0', optional: false }, { key: 'd', optional: false }, { key: 'e', optional: true }],
  });
  assert.deepEqual(parsePath('"x".length'), { primary: { kind: 'value', value: 'x' }, steps: [{ key: 'length', optional: false }] });
  assert.deepEqual(parsePath('1.5'), { primary: { kind: 'value', value: 1.5 }, steps: [] });
  for (const bad of ['a()', 'a.b()', 'a=1', 'a++', 'new A', 'delete a.b', 'a[b]', 'a.', 'a..b', 'typeof a', 'debugger',
    'a + b', '`t`', '"a\\"b"', 'a;b', '(a)', '', ' ', 'a[0', 'x'.repeat(2000), 'a.b.c.d'.replace(/.*/, (m) => m + '.x'.repeat(100))]) {
    assert.equal(parsePath(bad), null, JSON.stringify(bad.slice(0, 40)));
  }
});

test('evaluatePath reads data properties and native getters, refuses user getters, mirrors V8 errors', () => {
  const g = { a: { b: 1 }, nul: null };
  Object.defineProperty(g, 'lazy', { get() { throw new Error('ran'); } });
  assert.deepEqual(evaluatePath('a.b', g, indirect), { ok: true, v: 1 });
  assert.deepEqual(evaluatePath('this.a', g, indirect), { ok: true, v: g.a });
  assert.deepEqual(evaluatePath('nul?.x', g, indirect), { ok: true, v: undefined });
  const te = evaluatePath('nul.x', g, indirect);
  assert.equal(te?.ok, false);
  assert.match(String(te?.v), /TypeError: Cannot read properties of null \(reading 'x'\)/);
  assert.equal(evaluatePath('lazy', g, indirect), null);
  assert.equal(evaluatePath('a.b()', g, indirect), null);
  // A native getter runs: Map.prototype.size.
  const m = new Map([[1, 2]]);
  assert.equal(readProperty(m, 'size'), 1);
  // A name that is no property: the lexical binding, or its ReferenceError.
  const re = evaluatePath('iwNotDefinedAnywhere', g, indirect);
  assert.equal(re?.ok, false);
  assert.ok(re?.v instanceof ReferenceError);
  // eval refused (a CSP): no answer but the side-effect refusal.
  assert.equal(evaluatePath('notAProperty', g, () => { throw new EvalError('csp'); }), null);
  // Proto chain reads inherited data properties.
  assert.equal(evaluatePath('a.hasOwnProperty', g, indirect)?.v, Object.prototype.hasOwnProperty);
  assert.ok(new SideEffect('x') instanceof Error);
});
