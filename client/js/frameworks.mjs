// frameworks.mjs — the design note's "semantic reference": an object that
// stands for DOM (a React Fiber or class component instance, a Vue 3
// component instance) shows its DOM node(s) when expanded, as the internal
// property [[DOM]] (runtime.mjs getProperties). Shipped inside client.js
// only; the tests import it directly.
//
// Read without running page code: only own data properties are read
// (Object.getOwnPropertyDescriptor, which getProperties calls on every
// property anyway), never a getter, so a page object that merely looks
// like one of these costs a few descriptor reads and runs nothing.
//
// React (16–19): a Fiber has own `stateNode`, `child`, `sibling`,
// `return`, `memoizedProps`; a host Fiber's stateNode is its DOM node; a
// component's DOM is the host Fibers nearest below it (not below them). A
// class component instance holds its Fiber as `_reactInternals`
// (`_reactInternalFiber` before React 17); a function component has no
// instance: its Fiber is what a DOM node's `__reactFiber$…` key gives.
// Vue 3: an internal component instance (`__vueParentComponent` of a DOM
// node) has own `uid`, `vnode`, `subTree`; its DOM is subTree.el, or for a
// fragment the nodes from subTree.el to subTree.anchor. A public instance
// (`this` of a component, a Proxy) exposes its internal instance as the
// target's own `_`, read through the descriptor, not the Proxy's get.

/** DOM nodes one [[DOM]] lists (a component over a long list). */
export const MAX_DOM_NODES = 1000;
/** Fibers or siblings one walk visits. */
const MAX_VISITS = 100000;

const G = /** @type {any} */ (globalThis);
const gopd = Object.getOwnPropertyDescriptor;

/**
 * o's own data property k, undefined for none or an accessor.
 * @param {any} o @param {string} k
 */
function own(o, k) {
  if (o === null || typeof o !== 'object') return undefined;
  let d;
  try { d = gopd(o, k); } catch (e) { return undefined; }
  return d && 'value' in d ? d.value : undefined;
}

/** @param {any} x */
function isNode(x) {
  if (x === null || typeof x !== 'object' || typeof G.Node !== 'function') return false;
  try { return x instanceof G.Node; } catch (e) { return false; }
}

/** @param {any} f */
function isFiber(f) {
  return f !== null && typeof f === 'object' && typeof own(f, 'tag') === 'number' &&
    own(f, 'return') !== undefined && own(f, 'child') !== undefined && own(f, 'sibling') !== undefined && own(f, 'stateNode') !== undefined;
}

/**
 * The DOM nodes a React Fiber stands for: its own if it is a host Fiber,
 * else the host Fibers nearest below it.
 * @param {any} fiber
 * @returns {any[]}
 */
function fiberNodes(fiber) {
  const self = own(fiber, 'stateNode');
  if (isNode(self)) return [self];
  const out = [];
  let visits = 0;
  /** @type {any[]} */
  const stack = [];
  for (let c = own(fiber, 'child'); c; c = own(c, 'sibling')) stack.push(c);
  stack.reverse();
  while (stack.length && out.length < MAX_DOM_NODES && ++visits < MAX_VISITS) {
    const f = stack.pop();
    const sn = own(f, 'stateNode');
    if (isNode(sn)) { out.push(sn); continue; }
    const kids = [];
    for (let c = own(f, 'child'); c && kids.length < MAX_VISITS; c = own(c, 'sibling')) kids.push(c);
    for (let i = kids.length - 1; i >= 0; i--) stack.push(kids[i]);
  }
  return out;
}

/** @param {any} i */
function isVueInstance(i) {
  return i !== null && typeof i === 'object' && typeof own(i, 'uid') === 'number' &&
    own(i, 'vnode') !== undefined && own(i, 'subTree') !== undefined && own(i, 'appContext') !== undefined;
}

/**
 * The DOM nodes of a Vue 3 internal instance: its subtree's element, or a
 * fragment's nodes between its anchors (the empty anchor texts left out).
 * @param {any} inst
 * @returns {any[]}
 */
function vueNodes(inst) {
  const tree = own(inst, 'subTree');
  const el = own(tree, 'el');
  if (!isNode(el)) return [];
  const end = own(tree, 'anchor');
  if (!isNode(end) || end === el) return [el];
  const out = [];
  let visits = 0;
  for (let n = el; n && out.length < MAX_DOM_NODES && ++visits < MAX_VISITS; n = n.nextSibling) {
    if (!(n.nodeType === 3 && n.data === '')) out.push(n);
    if (n === end) break;
  }
  return out;
}

/**
 * The internal instance behind a Vue 3 public instance: its target's own
 * `_`, a data property in production builds; in development builds Vue
 * defines `_` and every `$…` name as getters on the target, and only such
 * a target (with `$el` and `$` getters beside it) has its `_` getter called.
 * @param {any} v
 */
function vueInternal(v) {
  let d;
  try { d = gopd(v, '_'); } catch (e) { return null; }
  if (!d) return null;
  let inner = d.value;
  if (typeof d.get === 'function') {
    let el, dollar;
    try { el = gopd(v, '$el'); dollar = gopd(v, '$'); } catch (e) { return null; }
    if (!el || !dollar || typeof el.get !== 'function' || typeof dollar.get !== 'function') return null;
    try { inner = d.get.call(v); } catch (e) { return null; }
  }
  return isVueInstance(inner) ? inner : null;
}

/**
 * The DOM nodes v stands for, or null when v is none of the known
 * framework objects (or stands for no node now: an unmounted component).
 * @param {any} v
 * @returns {any[]|null}
 */
export function domOf(v) {
  if (v === null || typeof v !== 'object' || isNode(v)) return null;
  let nodes = null;
  if (isFiber(v)) nodes = fiberNodes(v);
  else {
    const fiber = own(v, '_reactInternals') || own(v, '_reactInternalFiber');
    if (isFiber(fiber)) nodes = fiberNodes(fiber);
    else if (isVueInstance(v)) nodes = vueNodes(v);
    else {
      const inner = vueInternal(v);
      if (inner) nodes = vueNodes(inner);
    }
  }
  return nodes && nodes.length ? nodes : null;
}
