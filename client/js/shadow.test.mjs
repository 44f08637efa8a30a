// shadow.test.mjs — the attachShadow wrapper with a stand-in Element; the
// agent's use of it runs against real pages in Chromium
// (cdpserver/dom_trees_chromium_test.go).
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { watchShadowRoots, rootOf, HOOKS } from './shadow.mjs';

function fakeWindow() {
  class Element {
    constructor() { this.nodeType = 1; this.shadowRoot = null; }
    /** @param {{mode: string}} init */
    attachShadow(init) {
      if (this.shadowRoot || this.closed) throw new Error('NotSupportedError: already a host');
      const root = { nodeType: 11, mode: init.mode, host: this };
      if (init.mode === 'open') this.shadowRoot = root;
      else this.closed = true;
      return root;
    }
  }
  return { Element };
}

test('watchShadowRoots keeps closed roots, tells the hooks, and unwraps', () => {
  const w = fakeWindow();
  const before = Object.getOwnPropertyDescriptor(w.Element.prototype, 'attachShadow');
  const unwrap = watchShadowRoots(w);
  assert.ok(unwrap);
  const m = w.Element.prototype.attachShadow;
  assert.equal(m.name, 'attachShadow');
  assert.equal(m.length, 1);
  assert.throws(() => new (/** @type {any} */ (m))(), TypeError, 'a method, not a constructor');
  const after = Object.getOwnPropertyDescriptor(w.Element.prototype, 'attachShadow');
  assert.equal(after.writable, before.writable);
  assert.equal(after.enumerable, before.enumerable);
  assert.equal(after.configurable, before.configurable);

  const seen = [];
  const hook = { hostAttached: (/** @type {any} */ h) => seen.push(h) };
  HOOKS.add(hook);
  try {
    const open = new w.Element();
    const closed = new w.Element();
    const r1 = open.attachShadow({ mode: 'open' });
    const r2 = closed.attachShadow({ mode: 'closed' });
    assert.equal(rootOf(open), r1);
    assert.equal(rootOf(closed), r2, 'the closed root is kept');
    assert.deepEqual(seen, [open, closed]);
    // What the original throws, the wrapper throws.
    assert.throws(() => closed.attachShadow({ mode: 'closed' }), /already a host/);
    assert.equal(seen.length, 2);
  } finally {
    HOOKS.delete(hook);
  }
  unwrap();
  assert.equal(w.Element.prototype.attachShadow, before.value, 'restored');
  const late = new w.Element();
  late.attachShadow({ mode: 'closed' });
  assert.equal(rootOf(late), null, 'a closed root made after unwrap is not seen');
});

test('watchShadowRoots leaves a window without attachShadow alone', () => {
  assert.equal(watchShadowRoots({}), null);
  assert.equal(watchShadowRoots({ Element: class {} }), null);
});
