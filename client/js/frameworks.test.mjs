// frameworks.test.mjs — [[DOM]]'s reading rules with stand-in objects (a
// stand-in Node class); real React 19 and Vue 3 run in Chromium
// (cdpserver/frameworks_chromium_test.go).
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { domOf } from './frameworks.mjs';

class FakeNode { constructor(name) { this.name = name; this.nodeType = 1; this.nextSibling = null; } }

test('[[DOM]] of Fibers, class instances and Vue instances; nothing runs a getter', () => {
  globalThis.Node = FakeNode;
  try {
    const a = new FakeNode('a'), b = new FakeNode('b');
    const fiber = (stateNode, child = null) => ({ tag: 5, stateNode, child, sibling: null, return: null, memoizedProps: {} });
    const ha = fiber(a), hb = fiber(b);
    ha.sibling = hb;
    const fn = { ...fiber(null, ha), tag: 0 };
    assert.deepEqual(domOf(ha), [a], 'a host Fiber is its node');
    assert.deepEqual(domOf(fn), [a, b], 'a component: the host Fibers below it');
    assert.deepEqual(domOf({ _reactInternals: fn }), [a, b], 'a class instance through its Fiber');
    // Vue 3, production build: the public instance's target holds `_` as data.
    const inst = { uid: 1, vnode: {}, appContext: {}, subTree: { el: a, anchor: null } };
    assert.deepEqual(domOf(inst), [a]);
    assert.deepEqual(domOf({ _: inst }), [a]);
    // A fragment: from el to anchor, the empty anchor texts left out.
    const start = Object.assign(new FakeNode('start'), { nodeType: 3, data: '' });
    const end = Object.assign(new FakeNode('end'), { nodeType: 3, data: '' });
    start.nextSibling = a; a.nextSibling = b; b.nextSibling = end;
    assert.deepEqual(domOf({ ...inst, subTree: { el: start, anchor: end } }), [a, b]);
    // Look-alikes: no [[DOM]], and a getter is never called.
    let ran = 0;
    const trap = { tag: 5, child: null, sibling: null, return: null, get stateNode() { ran++; return a; } };
    assert.equal(domOf(trap), null);
    assert.equal(domOf({ get _reactInternals() { ran++; return fn; } }), null);
    assert.equal(domOf({ get _() { ran++; return inst; } }), null, 'a `_` getter without Vue\'s $el and $ getters beside it');
    assert.equal(ran, 0);
    assert.equal(domOf({ tag: 1, stateNode: null, child: null }), null);
    assert.equal(domOf(a), null, 'a node is itself');
  } finally {
    delete globalThis.Node;
  }
});
