// overlay.test.mjs — the overlay's pure parts; drawing in a page runs
// against real pages in Chromium (cdpserver/overlay_chromium_test.go).
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { boxModel, Overlay, MAX_INSPECTED } from './overlay.mjs';

/** A rendered element with the given rect and computed style. */
function fakeElement(rect, style) {
  return {
    nodeType: 1, isConnected: true,
    getClientRects: () => [rect],
    getBoundingClientRect: () => rect,
    ownerDocument: { defaultView: { getComputedStyle: () => ({ getPropertyValue: (k) => style[k] || '0px' }) } },
  };
}

test('boxModel insets the border box by border and padding, outsets it by margin', () => {
  const el = fakeElement({ left: 10, top: 20, right: 130, bottom: 86, width: 120, height: 66 }, {
    'border-top-width': '1px', 'border-right-width': '2px', 'border-bottom-width': '3px', 'border-left-width': '4px',
    'padding-top': '5px', 'padding-right': '6px', 'padding-bottom': '7px', 'padding-left': '8px',
    'margin-top': '9px', 'margin-right': '10px', 'margin-bottom': '11px', 'margin-left': '-12px',
  });
  assert.deepEqual(boxModel(el), {
    border: [10, 20, 130, 20, 130, 86, 10, 86],
    padding: [14, 21, 128, 21, 128, 83, 14, 83],
    content: [22, 26, 122, 26, 122, 76, 22, 76],
    margin: [22, 11, 140, 11, 140, 97, 22, 97],
    width: 120, height: 66,
  });
});

test('boxModel refuses a node without a layout box, as Chrome', () => {
  const hidden = { ...fakeElement({}, {}), getClientRects: () => [] };
  assert.throws(() => boxModel(hidden), /Could not compute box model/);
  assert.throws(() => boxModel({ nodeType: 3, isConnected: true }), /Could not compute box model/);
});

test('a session keeps its last MAX_INSPECTED selections, newest first; forget drops them', () => {
  const o = new Overlay({ document: { defaultView: {} }, frame: () => 0 });
  const nodes = Array.from({ length: 7 }, (_, i) => ({ i }));
  for (const n of nodes) o.inspect('w1', /** @type {any} */ (n));
  o.inspect('w1', /** @type {any} */ (nodes[3])); // selected again: moves to $0
  assert.deepEqual(o.inspected('w1').map((n) => /** @type {any} */ (n).i), [3, 6, 5, 4, 2]);
  assert.equal(o.inspected('w1').length, MAX_INSPECTED);
  assert.deepEqual(o.inspected('w2'), []);
  o.forget('w1');
  assert.deepEqual(o.inspected('w1'), []);
});

test("hide removes only its own session's highlight", () => {
  const o = new Overlay({ document: { defaultView: {} }, frame: () => 0 });
  o.owner = 'w1';
  o.target = {};
  o.hide('w2');
  assert.equal(o.owner, 'w1');
  o.hide('w1');
  assert.equal(o.target, null);
});
