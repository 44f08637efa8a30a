// shadow.mjs — the trees beside a page's document that the DOM agent
// (dom.mjs) shows as Chrome does: shadow roots (`shadowRoots` on the host),
// <template> contents (`templateContent`) and the documents of same-origin
// iframes (`contentDocument`; a cross-origin one cannot be read from the
// page, so its <iframe> shows empty, as Chrome shows an out-of-process
// frame's owner). Shipped inside client.js only (build.mjs inlines it
// before dom.mjs); the tests import it directly.
//
// An open shadow root is the host's `shadowRoot`. A closed one is not
// reachable from the page's side at all, so client.js wraps
// Element.prototype.attachShadow when it loads (watchShadowRoots) and keeps
// each closed root it sees in a WeakMap by host: one map write per
// attachShadow call, no DOM work, nothing kept alive. Closed roots attached
// before client.js ran (by a script earlier in the page, or by the parser
// for declarative `<template shadowrootmode="closed">`) stay unseen: the
// host shows without them.
//
// The wrapper also tells the DOM agents that observe the page (HOOKS) of a
// root attached to a host a window may already hold, so they send
// shadowRootPushed: no MutationRecord reports an attachShadow.

/** host → its closed shadow root, for roots attached after the client loaded. */
const CLOSED = new WeakMap();

/** template content → its <template>, for the templates the agent described. */
export const TEMPLATE_OF = new WeakMap();

/**
 * The observing DOM agents, told of every root attached (hostAttached);
 * an agent is in it only while its MutationObserver runs.
 * @type {Set<{ hostAttached: (host: Element) => void }>}
 */
export const HOOKS = new Set();

/**
 * Wraps w's Element.prototype.attachShadow to keep closed roots and tell
 * HOOKS; returns the function that restores it (if still ours), or null
 * when there is nothing to wrap. The wrapper keeps the method's name,
 * length and property attributes, and returns what the original returns
 * or throws what it throws.
 * @param {any} w the page's window
 * @returns {(() => void)|null}
 */
export function watchShadowRoots(w) {
  const proto = w && w.Element && w.Element.prototype;
  const desc = proto && Object.getOwnPropertyDescriptor(proto, 'attachShadow');
  const orig = desc && desc.value;
  if (typeof orig !== 'function') return null;
  // A method (not a constructor), named attachShadow, length 1, as the
  // native one.
  const wrapped = {
    /** @this {Element} @param {ShadowRootInit} init */
    attachShadow(init) {
      const root = orig.call(this, init);
      try {
        if (root && root.mode === 'closed') CLOSED.set(this, root);
        for (const h of HOOKS) h.hostAttached(this);
      } catch (e) { /* never the page's problem */ }
      return root;
    },
  }.attachShadow;
  Object.defineProperty(proto, 'attachShadow', Object.assign({}, desc, { value: wrapped }));
  return () => {
    const now = Object.getOwnPropertyDescriptor(proto, 'attachShadow');
    if (now && now.value === wrapped) Object.defineProperty(proto, 'attachShadow', desc);
  };
}

/**
 * The shadow root of el the agent can show: its open root, or a closed one
 * the wrapper kept; null when none (or a closed one made before it).
 * @param {any} el
 * @returns {ShadowRoot|null}
 */
export function rootOf(el) {
  if (!el || el.nodeType !== 1) return null;
  return el.shadowRoot || CLOSED.get(el) || null;
}

/**
 * The content of an HTML <template> (a document fragment), else null.
 * @param {any} el
 */
export function contentOf(el) {
  if (!el || el.nodeType !== 1 || el.localName !== 'template' || el.namespaceURI !== 'http://www.w3.org/1999/xhtml') return null;
  const c = el.content;
  return c && c.nodeType === 11 ? c : null;
}

/**
 * The document of a frame owner (<iframe>, <frame>) when the page can read
 * it (same origin), else null.
 * @param {any} el
 */
export function frameDocOf(el) {
  if (!el || el.nodeType !== 1 || (el.localName !== 'iframe' && el.localName !== 'frame')) return null;
  try {
    const d = el.contentDocument;
    return d && d.nodeType === 9 ? d : null;
  } catch (e) {
    return null;
  }
}

/**
 * n's parent in the tree the Elements panel shows: its parent node, or for
 * a shadow root its host, for a template content its template (once
 * described), for a same-origin frame's document its <iframe>; null at the
 * top.
 * @param {any} n
 * @returns {Node|null}
 */
export function up(n) {
  if (n.parentNode) return n.parentNode;
  if (n.nodeType === 9) {
    try {
      const owner = n.defaultView && n.defaultView.frameElement;
      return owner && frameDocOf(owner) === n ? owner : null;
    } catch (e) {
      return null;
    }
  }
  if (n.nodeType !== 11) return null;
  return n.host || TEMPLATE_OF.get(n) || null;
}

/**
 * Whether n is in the tree of document doc as the panel shows it (inside
 * shadow roots, described template contents and same-origin frames too).
 * @param {Node} n @param {Node} doc
 */
export function inTree(n, doc) {
  if (n.isConnected && n.getRootNode({ composed: true }) === doc) return true;
  let top = n;
  for (let a = up(n); a; a = up(a)) top = a;
  return top === doc;
}
